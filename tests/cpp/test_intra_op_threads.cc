// Intra-op thread budgets (core/intra_op_threads.h): the scoped team size restores the thread's
// previous one, DAG workers each run with their share of the cores, and HETNET_INTRA_OP_THREADS
// overrides the share.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <thread>
#include <atomic>
#include <vector>

#include "core/intra_op_threads.h"
#include "device/math.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/workspace.h"

using namespace hetnet;

namespace {

// Writes the OpenMP team size its thread would start (what Eigen's GEMM and oneDNN read).
class IntraOpThreadsProbeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    Output(0, {1}, DataType::Int64)->mutable_data<int64_t>()[0] = CurrentIntraOpThreads();
  }
};
OPERATOR_SCHEMA(IntraOpThreadsProbe).NumInputs(0).NumOutputs(1);
REGISTER_CPU_OPERATOR(IntraOpThreadsProbe, IntraOpThreadsProbeOp);

// Sets (or unsets, for an empty value) an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(const std::string& n, const std::string& value) : name(n) {
    const char* o = std::getenv(n.c_str());
    had = o != nullptr;
    if (had) old = o;
    if (value.empty()) {
      unsetenv(n.c_str());
    } else {
      setenv(n.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    if (had) {
      setenv(name.c_str(), old.c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
};

// Four independent probes on a DAG net with `workers` workers; returns each probe's reading.
std::vector<int64_t> ProbeOnDagWorkers(int workers) {
  caffe2::NetDef net;
  net.set_name("probe_dag");
  net.set_type("dag");
  net.set_num_workers(workers);
  for (int i = 0; i < 4; ++i) {
    auto* op = net.add_op();
    op->set_type("IntraOpThreadsProbe");
    op->add_output("n" + std::to_string(i));
  }
  Workspace ws;
  ws.RunNetOnce(net);
  std::vector<int64_t> seen;
  for (int i = 0; i < 4; ++i)
    seen.push_back(ws.GetBlobOrThrow("n" + std::to_string(i)).GetTensor().data<int64_t>()[0]);
  return seen;
}

bool HaveOpenMP() {
  // Without OpenMP the team size is always 1 and setting it does nothing.
  ScopedIntraOpThreads two(2);
  return CurrentIntraOpThreads() == 2;
}

}  // namespace

TEST_CASE("available cores and budgets", "[intra_op]") {
  ScopedEnv unset("HETNET_INTRA_OP_THREADS", "");
  ScopedEnv no_omp("OMP_NUM_THREADS", "");
  const int cores = AvailableCores();
  REQUIRE(cores >= 1);
  CHECK(cores <= static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  CHECK(IntraOpBudget(1) == cores);
  CHECK(IntraOpBudget(2) == std::max(1, cores / 2));
  CHECK(IntraOpBudget(cores * 4) == 1);
  CHECK(IntraOpBudget(0) == cores);  // nonsense counts do not divide by zero
  {
    ScopedEnv omp("OMP_NUM_THREADS", "6,2");  // the user's total, shared by the executors
    CHECK(IntraOpTotalThreads() == 6);
    CHECK(IntraOpBudget(2) == 3);
    CHECK(IntraOpBudget(4) == 1);
  }
}

TEST_CASE("ScopedIntraOpThreads sets the thread's team size and restores it", "[intra_op]") {
  if (!HaveOpenMP()) {
    ScopedIntraOpThreads three(3);
    CHECK(CurrentIntraOpThreads() == 1);
    return;
  }
  const int before = CurrentIntraOpThreads();
  {
    ScopedIntraOpThreads three(3);
    CHECK(CurrentIntraOpThreads() == 3);
    {
      ScopedIntraOpThreads keep(0);  // 0 = leave as it is
      CHECK(CurrentIntraOpThreads() == 3);
      ScopedIntraOpThreads one(1);
      CHECK(CurrentIntraOpThreads() == 1);
    }
    CHECK(CurrentIntraOpThreads() == 3);
  }
  CHECK(CurrentIntraOpThreads() == before);
  // Per thread: another thread's setting does not leak into this one.
  std::thread([] { ScopedIntraOpThreads five(5); }).join();
  CHECK(CurrentIntraOpThreads() == before);
}

TEST_CASE("DAG workers run with their share of the cores", "[intra_op][dag]") {
  ScopedEnv unset("HETNET_INTRA_OP_THREADS", "");
  ScopedEnv no_omp("OMP_NUM_THREADS", "");
  const int expected = HaveOpenMP() ? std::max(1, AvailableCores() / 2) : 1;
  for (int64_t n : ProbeOnDagWorkers(2)) CHECK(n == expected);
  const int one_worker = HaveOpenMP() ? AvailableCores() : 1;
  for (int64_t n : ProbeOnDagWorkers(1)) CHECK(n == one_worker);
}

TEST_CASE("HETNET_INTRA_OP_THREADS sets every executor thread's team size", "[intra_op][dag]") {
  {
    ScopedEnv set("HETNET_INTRA_OP_THREADS", "3");
    CHECK(IntraOpThreadsFromEnv() == 3);
    CHECK(IntraOpBudget(8) == 3);
    if (HaveOpenMP())
      for (int64_t n : ProbeOnDagWorkers(2)) CHECK(n == 3);
  }
  for (const char* bad : {"0", "-2", "two", "3x"}) {
    ScopedEnv set("HETNET_INTRA_OP_THREADS", bad);
    INFO(bad);
    CHECK(IntraOpThreadsFromEnv() == 0);
    CHECK(IntraOpBudget(1) == IntraOpTotalThreads());
  }
}

// FC at batch 1 splits W's rows over the team (device/math_cpu.cc): the same bits on 1, 2 and 3
// threads, and the float64 product within float32 rounding.
TEST_CASE("FC of one row over the intra-op team: the same result at any team size", "[intra_op][fc]") {
  const int64_t N = 1000, K = 777;
  Workspace ws;
  auto fill = [&](const std::string& name, std::vector<int64_t> shape, float scale) {
    Tensor* t = ws.CreateBlob(name)->GetMutableTensor(Device::CPU());
    t->Resize(shape);
    float* p = t->mutable_data<float>();
    for (int64_t i = 0; i < t->numel(); ++i) p[i] = scale * static_cast<float>((i * 7919) % 201 - 100);
  };
  fill("x", {1, K}, 0.01f);
  fill("w", {N, K}, 0.001f);
  fill("b", {N}, 0.1f);
  caffe2::OperatorDef fc;
  fc.set_type("FC");
  for (const char* in : {"x", "w", "b"}) fc.add_input(in);
  fc.add_output("y");
  auto run = [&](int threads) {
    ScopedIntraOpThreads team(threads);
    ws.RunOperatorOnce(fc);
    const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
    return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
  };
  const auto one = run(1);
  if (HaveOpenMP()) {
    CHECK(run(2) == one);
    CHECK(run(3) == one);
  }
  const float* x = ws.GetBlobOrThrow("x").GetTensor().data<float>();
  const float* w = ws.GetBlobOrThrow("w").GetTensor().data<float>();
  const float* b = ws.GetBlobOrThrow("b").GetTensor().data<float>();
  for (int64_t n = 0; n < N; n += 97) {
    double ref = b[n];
    for (int64_t k = 0; k < K; ++k) ref += static_cast<double>(x[k]) * w[n * K + k];
    CHECK(one[n] == Approx(ref).epsilon(1e-5).margin(1e-5));
  }
}

// math::ParallelFor's pool (device/cpu_thread_pool.h): every index exactly once, one thread per
// slot at a time, team size 1 inside f when it is split, with several threads calling at once and
// jobs of every size. (Catch2 asserts on the main thread only: the workers record, the test checks.)
TEST_CASE("ParallelFor on the intra-op pool: each index once, exclusive slots, concurrent callers", "[intra_op][pool]") {
  constexpr int kCallers = 4, kWorkers = 3;
  std::atomic<int> wrong_count{0}, shared_slot{0}, team_not_one{0}, calls{0};
  auto caller = [&](int seed) {
    ScopedIntraOpThreads team(kWorkers);
    for (int64_t n : {int64_t{1}, int64_t{2}, int64_t{7}, int64_t{64}, int64_t{1000}, int64_t{4099}}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::vector<std::atomic<int>> busy(kWorkers);
      math::ParallelFor(n, kWorkers, [&](int64_t i, int slot) {
        if (slot < 0 || slot >= kWorkers || busy[slot].exchange(1) != 0) shared_slot.fetch_add(1);
        if (n > 1 && CurrentIntraOpThreads() != 1) team_not_one.fetch_add(1);
        hits[static_cast<size_t>(i)].fetch_add(1);
        if ((i + seed) % 97 == 0) std::this_thread::yield();
        if (slot >= 0 && slot < kWorkers) busy[slot].store(0);
      });
      for (auto& h : hits) wrong_count.fetch_add(h.load() != 1);
      calls.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kCallers; ++t) threads.emplace_back(caller, t);
  for (auto& t : threads) t.join();
  CHECK(calls.load() == kCallers * 6);
  CHECK(wrong_count.load() == 0);
  CHECK(shared_slot.load() == 0);
  if (HaveOpenMP()) CHECK(team_not_one.load() == 0);
}
