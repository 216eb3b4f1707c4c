#include "codelets/onednn_runtime.hpp"

#ifdef CORUN_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

extern "C" void omp_set_num_threads(int);  // libgomp, oneDNN's threading runtime in Debian's build
#endif

namespace corun::codelets {

void onednn_one_thread() {
#ifdef CORUN_HAVE_DNNL
  thread_local bool bounded = false;
  if (!bounded) {
    omp_set_num_threads(1);
    bounded = true;
  }
#endif
}

std::string onednn_version() {
#ifdef CORUN_HAVE_DNNL
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
#else
  return "oneDNN (not in this build)";
#endif
}

}  // namespace corun::codelets
