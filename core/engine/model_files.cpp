#include "core/engine/model_files.hpp"

namespace corun::engine {
void quarantine_corrupt_models(const char*, bool) {}
}  // namespace corun::engine
