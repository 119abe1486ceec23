// Intra-op thread budgets. Eigen's GEMM and oneDNN run OpenMP teams sized by the calling thread's
// omp_get_max_threads(), which defaults to the core count on every thread. A process with several
// threads running operators (DAG workers, serving instances) then starts several full-size teams
// whose spin-waiting members fight for the same cores (measured in benchmarks/RESULTS.md: 738
// against 18,332 requests/s). The team size is a per-thread setting, so each executor thread sets
// its own share of the cores.
#pragma once

namespace hetnet {

// Cores this process may run on (its CPU affinity mask), at least 1; read once per process.
int AvailableCores();

// The environment's explicit per-executor-thread count HETNET_INTRA_OP_THREADS, 0 when unset or
// not a positive integer. When set at start-up it also sizes the loading (main) thread's teams.
int IntraOpThreadsFromEnv();

// Threads the process may use for operators in all: OMP_NUM_THREADS when set (its first entry),
// else AvailableCores().
int IntraOpTotalThreads();

// Intra-op threads for each of `concurrent_executors` threads running operators at once:
// HETNET_INTRA_OP_THREADS when set, else max(1, IntraOpTotalThreads() / concurrent_executors).
int IntraOpBudget(int concurrent_executors);

// The calling thread's current OpenMP team size for new parallel regions (1 without OpenMP).
int CurrentIntraOpThreads();

// Sets the calling thread's OpenMP team size to `n` (when n > 0) and restores the previous size
// when it goes out of scope. Without OpenMP it does nothing.
class ScopedIntraOpThreads {
 public:
  explicit ScopedIntraOpThreads(int n);
  ~ScopedIntraOpThreads();
  ScopedIntraOpThreads(const ScopedIntraOpThreads&) = delete;
  ScopedIntraOpThreads& operator=(const ScopedIntraOpThreads&) = delete;

 private:
  int previous_ = 0;  // 0 = nothing to restore
};

}  // namespace hetnet
