#include "engine/blas.hpp"

#include <cblas.h>

namespace corun::blas {

void pin_single_thread() { openblas_set_num_threads(1); }
std::string config_string() { return openblas_get_config(); }
std::string core_name() { return openblas_get_corename(); }
int threads() { return openblas_get_num_threads(); }

}  // namespace corun::blas
