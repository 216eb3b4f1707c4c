#include "cli/progress.hpp"

#include <unistd.h>

#include <cmath>

namespace corun::cli {

Progress::Progress(long total, long every, bool tty, std::FILE* out)
    : total_(total), every_(every < 1 ? 1 : every), tty_(tty), out_(out) {}

std::string Progress::line(long done, long total, double ms_per_iter, double loss) {
  char buf[160];
  const double eta_s = ms_per_iter * static_cast<double>(total - done) / 1000.0;
  std::snprintf(buf, sizeof(buf), "iteration %ld/%ld  %.1f ms/iter  loss %.4f  ETA %.1f s", done, total, ms_per_iter,
                loss, eta_s < 0 ? 0.0 : eta_s);
  return buf;
}

void Progress::update(long done, double ms, double loss) {
  recent_ms_ = recent_ms_ == 0 ? ms : 0.8 * recent_ms_ + 0.2 * ms;
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K", line(done, total_, recent_ms_, loss).c_str());  // \033[K: clear the rest
    std::fflush(out_);
    drawn_ = true;
  } else if (done % every_ == 0 || done == total_) {
    std::fprintf(out_, "corun: %s\n", line(done, total_, recent_ms_, loss).c_str());
    std::fflush(out_);
  }
}

void Progress::finish() {
  if (tty_ && drawn_) std::fputc('\n', out_);
  drawn_ = false;
}

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace corun::cli
