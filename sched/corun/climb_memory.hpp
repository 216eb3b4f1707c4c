// sched/corun/climb_memory.hpp — the corun policy's width climbs, remembered across processes.
//
// A climb that ended (measured in tuning runs, or replayed over StarPU's calibrated entries) leaves its times
// here, so that the next process running an op of the same signature replays the climb instead of measuring
// it again: the same widths, the same stop at the first rise, no tuning run. StarPU's own history cannot stand in for it: an entry becomes a
// prediction only from STARPU_CALIBRATE_MINIMUM (10) samples at that very width, and a climb takes one run per
// width, so after a plain `corun train` most widths had two or three samples and the next process searched
// again (issue 48 item 3). `corun profile` calibrates the history itself; its entries are preferred.
//
// One JSON file per machine key (the engine puts it beside StarPU's models, CORUN_WIDTH_MEMORY=off disables
// it), written atomically and merged with what other processes wrote since it was read:
//
//   {"format": "corun-climbs", "version": 1, "kinds": "5f0c...", "climbs": [
//     {"kind": 12, "footprint": 3735928559, "times": [[1, 84.5], [2, 51.0], [3, 60.2]]}, ...]}
//
// "kinds" identifies the list of op kinds (a build with other ops numbers them otherwise and ignores the
// file). A file that cannot be read or parsed is reported once and ignored: the climbs are measured again
// and the next write replaces it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace corun::sched {

class ClimbMemory {
 public:
  /// An empty memory that never reads nor writes (no file).
  ClimbMemory() = default;
  /// The climbs of `path` whose kinds tag is `kinds_tag`; none when the file is missing or unusable.
  ClimbMemory(std::string path, uint64_t kinds_tag);

  /// The time a climb of (kind, footprint) measured at `width`, if one did.
  std::optional<double> time(int kind, uint32_t footprint, int width) const;
  /// Keeps a finished climb's measurements (replacing any earlier ones of the same signature) for save();
  /// nothing when the memory already holds exactly these.
  void remember(int kind, uint32_t footprint, const std::vector<std::pair<int, double>>& times);
  /// Writes every remembered climb into the file, over what it holds now (another process may have written
  /// other signatures since). Returns false, after a warning on stderr, when it cannot be written.
  bool save() const;

  bool enabled() const { return !path_.empty(); }
  size_t size() const { return climbs_.size(); }

  using Key = std::pair<int, uint32_t>;
  using Climbs = std::map<Key, std::vector<std::pair<int, double>>>;

 private:
  std::string path_;
  uint64_t kinds_tag_ = 0;
  Climbs climbs_;   // what the file held when read, and what this process measured
  Climbs mine_;     // what this process measured (save() merges these into the file's current content)
};

}  // namespace corun::sched
