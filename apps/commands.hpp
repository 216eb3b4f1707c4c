// apps/commands.hpp — the corun CLI's subcommands. Each returns the process exit code.
#pragma once

namespace corun::cli {

int train(int argc, char** argv);       ///< corun train --model lstm ...
int info(int argc, char** argv);        ///< corun info
int profile(int argc, char** argv);     ///< corun profile --model lstm ...
int plot_trace(int argc, char** argv);  ///< corun plot-trace FILE -o OUT.png
int serve_bench(int argc, char** argv); ///< corun serve-bench --cell lstm --input E ...

}  // namespace corun::cli
