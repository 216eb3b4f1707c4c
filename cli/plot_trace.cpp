// corun plot-trace: draws an execution trace (trace/trace.hpp) as a Gantt chart, SVG or PNG.
// PNG goes through rsvg-convert (Debian librsvg2-bin): rasterising text and shapes well is its job, not ours.
#include "cli/args.hpp"
#include "cli/output_paths.hpp"
#include "cli/commands.hpp"
#include "trace/gantt.hpp"

#include "base/check.hpp"
#include "base/files.hpp"
#include "codelets/op.hpp"
#include "base/parse.hpp"
#include "trace/trace.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

extern char** environ;

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"-o", true, "output image: OUT.png (via rsvg-convert) or OUT.svg (required)"},
    {"--width", true, "image width in pixels, 400..20000 (default 1600)"},
    {"--iteration", true, "draw only this iteration's tasks (default: all)"},
    {"--help", false, "show this help"},
};

std::string usage() {
  return "usage: corun plot-trace FILE -o OUT.png|OUT.svg [options]\n" + describe(kFlags);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

// The first `name` on PATH that is an executable file, or "".
std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// Runs `argv` and returns its exit status (-1 if it did not exit normally) with its stderr in `err`.
int run_capturing_stderr(const std::vector<std::string>& args, std::string& err) {
  int fds[2];
  CORUN_CHECK(pipe(fds) == 0, Status::runtime_error, "pipe() failed: " << std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    CORUN_CHECK(false, Status::runtime_error, "cannot run " << args[0] << ": " << std::strerror(rc));
  }
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    if (err.size() < 4096) err.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void write_png(const std::string& svg, const std::string& out) {
  const std::string rsvg = find_on_path("rsvg-convert");
  CORUN_CHECK(!rsvg.empty(), Status::runtime_error,
              "cannot write '" << out
                               << "': PNG output needs rsvg-convert (Debian package librsvg2-bin), which is "
                                  "not on PATH; run scripts/setup.sh to install it, or write SVG instead (-o "
                               << out.substr(0, out.size() - 4) << ".svg)");
  const std::string tmp_svg = out + ".tmp.svg", tmp_png = out + ".tmp";
  write_file_atomically(tmp_svg, svg);
  std::string err;
  const int status = run_capturing_stderr({rsvg, "--format", "png", "--output", tmp_png, tmp_svg}, err);
  std::remove(tmp_svg.c_str());
  if (status != 0) {
    std::remove(tmp_png.c_str());
    while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
    CORUN_CHECK(false, Status::runtime_error,
                "cannot write '" << out << "': " << rsvg << " exited with status " << status
                                 << (err.empty() ? "" : ": ") << err);
  }
  // rsvg-convert's own output is not checked for a full disk: it is read back and written through the one
  // checked writer, which leaves `out` either whole or as it was.
  std::string png;
  try {
    png = read_file(tmp_png);
  } catch (...) {
    std::remove(tmp_png.c_str());
    throw;
  }
  std::remove(tmp_png.c_str());
  write_file_atomically(out, png, "the picture");
}

}  // namespace

int plot_trace(int argc, char** argv) {
  std::string input, out;
  trace::GanttOptions opt;
  try {
    std::vector<std::string> files;
    Args args(argc, argv, 2, kFlags, &files);
    if (args.has("--help")) {
      std::cout << usage();
      return 0;
    }
    if (files.empty()) throw UsageError("the trace FILE is required");
    if (files.size() > 1) throw UsageError("one trace FILE only, got '" + files[0] + "' and '" + files[1] + "'");
    input = files[0];
    out = args.str("-o", "");
    if (out.empty()) throw UsageError("-o OUT.png or -o OUT.svg is required");
    if (!ends_with(out, ".png") && !ends_with(out, ".svg"))
      throw UsageError("-o must name a .png or .svg file, got '" + out + "'");
    opt.width_px = static_cast<int>(args.positive("--width", 1600));
    if (opt.width_px < 400 || opt.width_px > 20000)
      throw UsageError("--width must be between 400 and 20000 pixels, got " + std::to_string(opt.width_px));
    if (args.has("--iteration")) {
      const std::string text = args.str("--iteration", "");
      const auto v = parse::integer(text);
      if (!v || *v < 0 || *v > 1000000000L)
        throw UsageError("--iteration needs a non-negative integer, got '" + text + "'");
      opt.iteration = static_cast<int>(*v);
    }
  } catch (const UsageError& e) {
    return usage_error("plot-trace", e, kFlags, usage());
  }
  check_output_file("-o", out);  // before the trace is read and drawn

  const TraceFile trace = read_chrome_trace(input);
  opt.source = input;
  opt.op_colour = [](const std::string& op) -> std::string {  // the colour column of codelets/ops.def
    const codelets::OpKind kind = codelets::op_kind(op);
    return kind == codelets::OpKind::count_ ? "" : codelets::op_info(kind).colour;
  };
  const std::string svg = trace::gantt_svg(trace, opt);
  if (ends_with(out, ".svg")) {
    write_file_atomically(out, svg, "the picture");
  } else {
    write_png(svg, out);
  }
  size_t drawn = 0;
  for (const TraceTask& t : trace.tasks) drawn += opt.iteration < 0 || t.iteration == opt.iteration;
  std::printf("corun plot-trace: wrote %s (%zu tasks, %d workers)\n", out.c_str(), drawn, trace.meta.workers);
  return 0;
}

}  // namespace corun::cli
