// cli/progress.hpp — what `corun train` says while it runs (issue 8): on a terminal one line redrawn in
// place after every iteration; in a batch job (stderr not a terminal) a plain line every N iterations,
// so a SLURM output file grows by whole lines a user can tail.
#pragma once

#include <cstdio>
#include <string>

namespace corun::cli {

class Progress {
 public:
  /// `total` iterations in all; `every` >= 1: the batch-mode period; `tty`: redraw one line instead.
  Progress(long total, long every, bool tty, std::FILE* out = stderr);
  /// After iteration `done` (1-based count of iterations finished), which took `ms`, with `loss`.
  void update(long done, double ms, double loss);
  /// Ends the redrawn line on a terminal (call once after the loop).
  void finish();

  /// The text of one report: "iteration 12/100  53.2 ms/iter  loss 1.8016  ETA 4.7 s".
  static std::string line(long done, long total, double ms_per_iter, double loss);

 private:
  long total_, every_;
  bool tty_;
  std::FILE* out_;
  double recent_ms_ = 0;  // exponential average: ETA follows the current speed, not the first iteration's
  bool drawn_ = false;
};

/// Whether stderr is a terminal (the progress mode `corun train` uses).
bool stderr_is_terminal();

}  // namespace corun::cli
