// cli/simulate/platform_files.hpp — the machine description StarPU's SimGrid mode loads before the
// application's main runs: <dir>/bus/<key>.platform.v4.xml (one SimGrid host per CPU core, plus MAIN and
// RAM), <key>.latency and <key>.bandwidth (one memory node: no transfers to simulate).
#pragma once

#include <string>

namespace corun::cli::sim {

/// Writes the three bus files of a `cores`-core CPU-only machine for machine key `key` under
/// `perf_model_dir`/bus (created). Throws corun::Error(io_error) when a file cannot be written.
void write_platform_files(const std::string& perf_model_dir, const std::string& key, int cores);

}  // namespace corun::cli::sim
