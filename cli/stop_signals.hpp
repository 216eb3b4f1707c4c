// cli/stop_signals.hpp — graceful stop of `corun train` on SIGTERM, SIGUSR1 (SLURM's --signal warning)
// and SIGINT: the first one asks the training loop to finish its iteration, write a checkpoint and exit
// with kStoppedExitCode; a second one (any of the three) exits at once with 128 + its number, and so does
// the end of the grace period after the first (a stuck task cannot keep the job alive).
#pragma once

namespace corun::cli::stop {

/// Exit code of a run stopped by a signal after finishing an iteration (and writing its checkpoint when
/// --checkpoint was given). 0 success, 1 error and 2 usage error are taken.
inline constexpr int kStoppedExitCode = 3;

/// Installs the handlers (again: StarPU replaces the SIGINT handler in starpu_init, so call this after the
/// Engine exists too). The handler only records the signal and writes a fixed message (async-signal-safe).
void install();

/// After the first signal the run has this long to stop on its own (finish the iteration, write the
/// checkpoint); then it exits with 128 + the signal's number, even when a task never returns.
inline constexpr int kMinGraceSeconds = 60;
/// Sets that grace period (at least kMinGraceSeconds): the training loop raises it for slow iterations.
void set_grace_seconds(double seconds);
/// For the test suite only (CORUN_TEST_GRACE_SECONDS): a fixed grace period of `seconds`, below the minimum;
/// set_grace_seconds() then changes nothing. 0: back to the normal rule.
void set_test_grace_seconds(int seconds);

/// 0 while no signal came, else the number of the first one.
int requested();

/// "SIGTERM", "SIGUSR1", "SIGINT" (or "signal N").
const char* name(int sig);

}  // namespace corun::cli::stop
