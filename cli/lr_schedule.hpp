// cli/lr_schedule.hpp — learning-rate schedules of `corun train --lr-schedule` (and `--warmup`).
//
//   constant          the base rate every iteration
//   step:N:GAMMA      base * GAMMA^floor(k / N)                       (torch.optim.lr_scheduler.StepLR)
//   cosine[:FLOOR]    FLOOR + (base - FLOOR) (1 + cos(pi k / T)) / 2   (CosineAnnealingLR, T_max = T; FLOOR
//                     is an absolute rate, default 0, and must be below the base)
// A linear warm-up of W iterations comes before any of them: iteration k < W runs at base (k + 1) / W
// (the CNN sessions' --warmup since session 7, same float expression, same bits), and the schedule's own
// clock starts after it (k - W, over T - W iterations). k is 0-based; T is the run's iteration count.
#pragma once

#include <cstdint>
#include <string>

namespace corun {

struct LrSchedule {
  enum class Kind { constant, step, cosine };
  Kind kind = Kind::constant;
  int64_t step_every = 0;  ///< step: N
  double gamma = 1.0;      ///< step: GAMMA
  double floor = 0.0;      ///< cosine: FLOOR
  int64_t warmup = 0;      ///< linear warm-up iterations (0: none)

  /// Parses "constant", "step:N:GAMMA" (N whole >= 1, GAMMA in (0, 1]) or "cosine[:FLOOR]" (FLOOR >= 0).
  /// Throws std::invalid_argument with a message that names the accepted forms.
  static LrSchedule parse(const std::string& text);
  /// The rate of 0-based iteration `k` of a `total`-iteration run whose base rate is `base`.
  float at(float base, int64_t k, int64_t total) const;
  /// "constant", "step:100:0.5", "cosine:0.001": what parse reads back (identities, logs).
  std::string str() const;
};

}  // namespace corun
