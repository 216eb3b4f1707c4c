#include "cli/stop_signals.hpp"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <initializer_list>
#include <unistd.h>

namespace corun::cli::stop {

namespace {

// The first stop signal's number. Atomic, not just sig_atomic_t: two process-directed signals can be
// handled at the same moment on two threads (sa_mask blocks the others on the handling thread only), and
// exactly one of them must be the first. A lock-free atomic is async-signal-safe.
std::atomic<int> g_first{0};
static_assert(std::atomic<int>::is_always_lock_free);
volatile std::sig_atomic_t g_grace_seconds = kMinGraceSeconds;
volatile std::sig_atomic_t g_test_grace_seconds = 0;  // CORUN_TEST_GRACE_SECONDS: wins over everything

void say(const char* text, size_t n) {
  // write(2) is async-signal-safe; nothing useful can be done when it fails.
  const ssize_t ignored = ::write(STDERR_FILENO, text, n);
  (void)ignored;
}

// Runs on whichever thread the kernel picks (often a StarPU worker): only sig_atomic_t, write and _exit.
void on_signal(int sig) {
  int none = 0;
  if (!g_first.compare_exchange_strong(none, sig)) {
    static const char msg[] = "corun: second signal: exiting at once (the newest complete checkpoint stays valid)\n";
    say(msg, sizeof(msg) - 1);
    ::_exit(128 + sig);
  }
  static const char msg[] =
      "corun: signal received: finishing the current iteration, then checkpoint and exit (another signal exits at once)\n";
  say(msg, sizeof(msg) - 1);
  // A kernel that never returns (or a wait that never ends) must not keep the job alive: alarm() is
  // async-signal-safe, and on_alarm ends the process if the graceful stop has not by then.
  ::alarm(static_cast<unsigned>(g_grace_seconds));
}

void on_alarm(int) {
  static const char msg[] =
      "corun: the run did not stop within its grace period after the signal (a task is stuck?): exiting now (the "
      "newest complete checkpoint stays valid)\n";
  say(msg, sizeof(msg) - 1);
  ::_exit(128 + g_first.load());
}

}  // namespace

void install() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  // While one handler runs the others wait on its thread; another thread may still take one at the same
  // moment, which g_first's compare-exchange settles.
  for (int s : {SIGTERM, SIGUSR1, SIGINT}) sigaddset(&sa.sa_mask, s);
  sa.sa_flags = SA_RESTART;  // interrupted reads and writes resume; the loop polls requested()
  for (int s : {SIGTERM, SIGUSR1, SIGINT}) sigaction(s, &sa, nullptr);
  struct sigaction alarm_action {};
  alarm_action.sa_handler = on_alarm;
  sigemptyset(&alarm_action.sa_mask);
  sigaction(SIGALRM, &alarm_action, nullptr);
}

void set_test_grace_seconds(int seconds) {
  g_test_grace_seconds = seconds;
  if (seconds > 0) g_grace_seconds = seconds;
}

void set_grace_seconds(double seconds) {
  if (g_test_grace_seconds > 0) return;
  const double s = seconds < kMinGraceSeconds ? kMinGraceSeconds : seconds > 86400 ? 86400 : seconds;
  g_grace_seconds = static_cast<std::sig_atomic_t>(s);
}

int requested() { return g_first.load(); }

const char* name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGINT: return "SIGINT";
  }
  static char buf[32];
  std::snprintf(buf, sizeof(buf), "signal %d", sig);
  return buf;
}

}  // namespace corun::cli::stop
