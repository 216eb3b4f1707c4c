// cli/commands.hpp — the corun CLI's subcommands. Each returns the process exit code.
#pragma once

namespace corun::cli {

int train(int argc, char** argv);       ///< corun train --model lstm ...
int info(int argc, char** argv);        ///< corun info
int profile(int argc, char** argv);     ///< corun profile --model lstm ...
int plot_trace(int argc, char** argv);  ///< corun plot-trace FILE -o OUT.png
int infer(int argc, char** argv);       ///< corun infer --model wide-deep ...
int infer_onnx(int argc, char** argv);  ///< corun infer --onnx FILE --input NAME=FILE.npy ... --output DIR
int infer_builtin(int argc, char** argv);  ///< corun infer --model lstm|...|wide-deep [--input ..] [--output DIR]
int serve_bench(int argc, char** argv); ///< corun serve-bench --cell lstm --input E ...
int serve(int argc, char** argv);       ///< corun serve --onnx [NAME=]FILE ... [--port N]: the KServe v2 HTTP endpoint
int simulate(int argc, char** argv);    ///< corun simulate --machine FILE -- train ...

/// The exit code of a simulated train|infer (the SimGrid build's corun) that refused its graph because ops have
/// no model (engine::UnmodelledOpsError): `corun simulate` then removes the files it wrote and prints the
/// command that calibrates them, and exits 1.
inline constexpr int kUnmodelledExitCode = 4;

}  // namespace corun::cli
