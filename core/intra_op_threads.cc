#include "core/intra_op_threads.h"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace hetnet {

int AvailableCores() {
  static const int cores = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return cores;
}

namespace {

// A positive count from the environment, 0 when unset or malformed. `list` accepts OpenMP's
// "4,2" form (nesting levels) and takes the first entry.
int PositiveCountFromEnv(const char* name, bool list) {
  const char* s = std::getenv(name);
  if (!s || !*s) return 0;
  char* end = nullptr;
  const long n = std::strtol(s, &end, 10);
  if (end == s || n <= 0 || !(*end == '\0' || (list && *end == ','))) return 0;
  return static_cast<int>(std::min<long>(n, 4096));
}

}  // namespace

int IntraOpThreadsFromEnv() { return PositiveCountFromEnv("HETNET_INTRA_OP_THREADS", false); }

int IntraOpTotalThreads() {
  const int omp = PositiveCountFromEnv("OMP_NUM_THREADS", true);
  return omp > 0 ? omp : AvailableCores();
}

int IntraOpBudget(int concurrent_executors) {
  if (const int n = IntraOpThreadsFromEnv()) return n;
  return std::max(1, IntraOpTotalThreads() / std::max(1, concurrent_executors));
}

int CurrentIntraOpThreads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

namespace {
// HETNET_INTRA_OP_THREADS also sizes the teams of the thread that loads the library (the main
// thread of `hetnet` and of Python), which runs sequential nets without a budget of its own.
const bool g_main_thread_team_sized = [] {
#ifdef _OPENMP
  if (const int n = IntraOpThreadsFromEnv()) omp_set_num_threads(n);
#endif
  return true;
}();
}  // namespace

ScopedIntraOpThreads::ScopedIntraOpThreads(int n) {
#ifdef _OPENMP
  if (n <= 0) return;
  previous_ = omp_get_max_threads();
  if (previous_ != n) omp_set_num_threads(n);
#else
  (void)n;
#endif
}

ScopedIntraOpThreads::~ScopedIntraOpThreads() {
#ifdef _OPENMP
  if (previous_ > 0 && omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
#endif
}

}  // namespace hetnet
