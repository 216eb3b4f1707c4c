#include "codelets/matmul/openblas_core.hpp"

#include <cblas.h>
#include <strings.h>

namespace corun::codelets {

std::string openblas_core_name() { return openblas_get_corename(); }

bool openblas_core_lacks_avx2(const std::string& core) {
  static const char* const kPreAvx2[] = {"Prescott", "Core2",   "Penryn",     "Dunnington", "Nehalem",   "Sandybridge",
                                         "Atom",     "Opteron", "Barcelona",  "Bobcat",     "Bulldozer", "Piledriver",
                                         "Steamroller", "Katmai", "Coppermine", "Northwood", "Banias",   "Generic"};
  for (const char* c : kPreAvx2)
    if (strcasecmp(core.c_str(), c) == 0) return true;
  return false;
}

bool openblas_core_has_avx512(const std::string& core) {
  static const char* const kAvx512[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
  for (const char* c : kAvx512)
    if (strcasecmp(core.c_str(), c) == 0) return true;
  return false;
}

CpuVectorIsa cpu_vector_isa() {
  __builtin_cpu_init();
  CpuVectorIsa isa;
  isa.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return isa;
}

bool openblas_kernels_older_than_cpu() {
  static const bool older = cpu_vector_isa().avx2_fma && openblas_core_lacks_avx2(openblas_core_name());
  return older;
}

}  // namespace corun::codelets
