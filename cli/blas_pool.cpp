#include "cli/blas_pool.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace corun::cli {

namespace {

constexpr char kVar[] = "OPENBLAS_NUM_THREADS=";
// Carries the user's value across the re-execution: "=" then the value, or "unset".
constexpr char kSaved[] = "CORUN_USER_OPENBLAS_NUM_THREADS=";

// Runs before libc has set `environ`: reads `envp` only, and allocates nothing (the new environment is on
// the stack). A failed execve leaves the process as it was: OpenBLAS starts its pool, as before.
void start_without_blas_pool(int, char** argv, char** envp) {
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) != 0 || as.rlim_cur == RLIM_INFINITY || envp == nullptr) return;
  const char* user = nullptr;
  size_t n = 0;
  for (; envp[n] != nullptr; ++n) {
    if (std::strncmp(envp[n], kSaved, sizeof kSaved - 1) == 0) return;  // already re-executed once
    if (std::strncmp(envp[n], kVar, sizeof kVar - 1) == 0) user = envp[n] + sizeof kVar - 1;
  }
  if (user != nullptr && std::strcmp(user, "1") == 0) return;
  char saved[256];
  const size_t len = user == nullptr ? 0 : std::strlen(user);
  if (len + sizeof kSaved + 1 > sizeof saved) return;
  std::memcpy(saved, kSaved, sizeof kSaved - 1);
  std::memcpy(saved + sizeof kSaved - 1, user == nullptr ? "unset" : "=", user == nullptr ? 6 : 1);
  if (user != nullptr) std::memcpy(saved + sizeof kSaved, user, len + 1);
  static char one[] = "OPENBLAS_NUM_THREADS=1";
  char** env = static_cast<char**>(__builtin_alloca((n + 3) * sizeof(char*)));
  size_t k = 0;
  for (size_t i = 0; i < n; ++i)
    if (std::strncmp(envp[i], kVar, sizeof kVar - 1) != 0) env[k++] = envp[i];
  env[k++] = one;
  env[k++] = saved;
  env[k] = nullptr;
  execve("/proc/self/exe", argv, env);
}

__attribute__((section(".preinit_array"), used)) void (*const kStartWithoutBlasPool)(int, char**, char**) =
    start_without_blas_pool;

}  // namespace

void restore_user_blas_threads() {
  const char* saved = std::getenv("CORUN_USER_OPENBLAS_NUM_THREADS");
  if (saved == nullptr) return;
  if (saved[0] == '=')
    setenv("OPENBLAS_NUM_THREADS", saved + 1, 1);
  else
    unsetenv("OPENBLAS_NUM_THREADS");
  unsetenv("CORUN_USER_OPENBLAS_NUM_THREADS");
}

}  // namespace corun::cli
