// CORUN_SIMD_CLONES: a kernel compiled three times, for AVX-512 (x86-64-v4), AVX2 and the x86-64 baseline
// (SSE2), the copy for this CPU picked once at load time (GCC's target_clones, an ifunc). corun is built for
// the baseline, so its vectorised loops ran 4 floats wide on every machine; the fused LSTM cell of 64 x 128
// units took 92 us on SSE2 vectors, 40 us on AVX2's and 18 us on AVX-512's (one thread, AVX-512 Zen).
// `flatten` inlines every callee into each copy, so the helpers' loops get the copy's vector width too.
//
// Same bits on every copy: the kernels are built with -ffp-contract=off (codelets/CMakeLists.txt), so no
// copy fuses a multiply and an add the baseline rounds twice, and GCC never reorders a float reduction
// without -ffast-math; a clone's loop computes each element with the same IEEE operations in the same
// order as the scalar loop of the baseline and of the unfused ops' kernels.
//
// The sanitizer builds (scripts/test.sh) compile the baseline alone: their instrumentation and ifunc
// resolvers, which run before the sanitizer runtime is set up, are a pairing we do not need to depend on.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__) && \
    !defined(__SANITIZE_ADDRESS__)
#define CORUN_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default"), flatten))
#else
#define CORUN_SIMD_CLONES
#endif
