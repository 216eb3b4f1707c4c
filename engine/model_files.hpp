// engine/model_files.hpp — keeping StarPU's saved perfmodels usable.
#pragma once

namespace corun::engine {

/// Checks corun's history-model files for this machine key before StarPU loads them. StarPU aborts the
/// process on a malformed file; a corrupt or truncated one is renamed to `<file>.corrupt` with a warning,
/// so the run recalibrates that op instead of crashing.
void quarantine_corrupt_models(const char* machine_key, bool quiet);

}  // namespace corun::engine
