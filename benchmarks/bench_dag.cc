// Parallel executor benchmarks, printed as markdown.
// CPU: a wide DAG (8 branches of FC/Relu chains), sequential vs "dag" with 1, 2, 4 workers. OpenMP
// (Eigen's GEMM threads) is set to 1 thread for the whole process, so the sequential baseline and
// every worker run single-threaded kernels; the executor also sets 1 inside its workers.
// GPU (skipped without a device): K micro-batches in one net, each CPU preprocessing -> H2D copy ->
// GPU FC chain -> D2H copy -> CPU postprocessing; with workers, batch i's copies and CPU work overlap
// batch j's compute. Reports the pipeline's time against max(compute alone, transfers alone), each
// measured as a net of its own, for 4 and 16 micro-batches and in the steady state between them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "core/net.h"
#include "core/profiler.h"
#include "core/workspace.h"

#ifdef _OPENMP
#include <omp.h>
#endif

using namespace hetnet;

namespace {

void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> shape, unsigned seed) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device::CPU());
  t->Resize(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (int64_t i = 0; i < t->numel(); ++i) t->mutable_data<float>()[i] = u(rng);
}

caffe2::OperatorDef* AddOp(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                           std::vector<std::string> out, int device_type = 0) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : in) op->add_input(i);
  for (auto& o : out) op->add_output(o);
  if (device_type) op->mutable_device_option()->set_device_type(device_type);
  return op;
}

// Best of 5 repetitions: wall ms per run, and process CPU time over wall time in that repetition
// (how many cores the run kept busy; below the worker count when other processes take the CPUs).
double MsPerRun(NetBase* net, int iters, double* cpu_per_wall = nullptr) {
  net->Run();  // warm-up: allocations, worker threads
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    const std::clock_t c0 = std::clock();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) net->Run();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double cpu_ms = 1e3 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
    if (ms / iters < best) {
      best = ms / iters;
      if (cpu_per_wall) *cpu_per_wall = cpu_ms / ms;
    }
  }
  return best;
}

void CpuWideDag() {
  constexpr int kBranches = 8, kDepth = 4;
  constexpr int64_t kBatch = 64, kDim = 512;
  caffe2::NetDef net;
  net.set_name("wide_dag");
  Workspace ws;
  net.add_external_input("x");
  Feed(&ws, "x", {kBatch, kDim}, 1);
  for (int b = 0; b < kBranches; ++b) {
    std::string prev = "x";
    for (int d = 0; d < kDepth; ++d) {
      const std::string p = "b" + std::to_string(b) + "_" + std::to_string(d);
      net.add_external_input(p + "_w");
      net.add_external_input(p + "_b");
      Feed(&ws, p + "_w", {kDim, kDim}, 10 * b + d);
      Feed(&ws, p + "_b", {kDim}, 1000 + 10 * b + d);
      AddOp(&net, "FC", {prev, p + "_w", p + "_b"}, {p + "_y"});
      AddOp(&net, "Relu", {p + "_y"}, {p + "_y"});
      prev = p + "_y";
    }
    net.add_external_output(prev);
  }
  std::printf("## CPU: wide DAG, %d branches x %d (FC %lldx%lld -> Relu), %u hardware threads\n\n", kBranches, kDepth,
              static_cast<long long>(kBatch), static_cast<long long>(kDim), std::thread::hardware_concurrency());
  std::printf("| executor | workers | ms/run | speedup vs sequential | CPU time / wall | output equal |\n"
              "|---|---:|---:|---:|---:|---|\n");
  net.set_type("simple");
  net.set_name("seq");
  NetBase* seq = ws.CreateNet(net);
  double seq_busy = 0;
  const double seq_ms = MsPerRun(seq, 10, &seq_busy);
  std::map<std::string, Tensor> want;
  for (const auto& o : net.external_output()) want[o] = ws.GetBlob(o)->GetTensor().To(Device::CPU());
  std::printf("| simple | 1 | %.2f | 1.00x | %.2f | yes |\n", seq_ms, seq_busy);
  for (int workers : {1, 2, 4}) {
    net.set_type("dag");
    net.set_name("dag" + std::to_string(workers));
    net.set_num_workers(workers);
    NetBase* dag = ws.CreateNet(net);
    double busy = 0;
    const double ms = MsPerRun(dag, 10, &busy);
    // Bitwise equality holds only at equal intra-op team sizes: Eigen's GEMM blocking (and so its
    // summation order) depends on the team, which is cores / workers here (RESULTS.md, 2026-11-26).
    double worst = 0;
    for (const auto& [o, t] : want) {
      const float* a = t.data<float>();
      const float* b = ws.GetBlob(o)->GetTensor().data<float>();
      for (int64_t i = 0; i < t.numel(); ++i)
        worst = std::max(worst, std::abs(double(a[i]) - b[i]) / std::max(1.0, std::abs(double(a[i]))));
    }
    const char* equal = worst == 0 ? "yes" : worst < 1e-5 ? "yes (within 1e-5)" : "NO";
    std::printf("| dag | %d | %.2f | %.2fx | %.2f | %s |\n", workers, ms, seq_ms / ms, busy, equal);
  }
  std::printf("\n");
}

// Executor overhead: 1,000 one-element Scale ops, as one in-place chain and as 1,000 independent ops.
void DispatchOverhead() {
  constexpr int kOps = 1000;
  std::printf("## Dispatch: %d one-element Scale ops, us per op\n\n| net | simple | dag, 1 worker | dag, 2 workers |\n"
              "|---|---:|---:|---:|\n", kOps);
  for (bool chain : {true, false}) {
    Workspace ws;
    caffe2::NetDef net;
    net.add_external_input("x");
    Feed(&ws, "x", {1}, 1);
    for (int i = 0; i < kOps; ++i) {
      auto* op = AddOp(&net, "Scale", {"x"}, {chain ? "x" : "y" + std::to_string(i)});
      auto* a = op->add_arg();
      a->set_name("scale");
      a->set_f(1.0f);
    }
    double us[3];
    const char* types[3] = {"simple", "dag", "dag"};
    for (int k = 0; k < 3; ++k) {
      net.set_name(std::string(types[k]) + std::to_string(k));
      net.set_type(types[k]);
      net.set_num_workers(k == 2 ? 2 : 1);
      us[k] = 1e3 * MsPerRun(ws.CreateNet(net), 20) / kOps;
    }
    std::printf("| %s | %.3f | %.3f | %.3f |\n", chain ? "one in-place chain" : "independent ops", us[0], us[1], us[2]);
  }
  std::printf("\n");
}

struct PipelineTimes {
  double pipeline_ms, compute_ms, transfer_ms;
};

// K micro-batches of CPU preprocessing (Scale) -> H2D -> kDepth GPU FCs -> D2H -> CPU Relu in one
// "dag" net, then the same GPU compute alone and the same transfers alone, each as a net of its
// own. dry_run (no GPU): the same net under soft placement, run once on CPU (checks the net only).
PipelineTimes Pipeline(int batches, bool dry_run, bool print_profile) {
  const int kDepth = dry_run ? 2 : 8;
  const int64_t kRows = dry_run ? 64 : 1024, kDim = dry_run ? 64 : 4096;
  Workspace ws;
  caffe2::NetDef net;
  net.set_name("gpu_pipeline");
  net.set_type("dag");
  net.set_num_workers(4);
  for (int d = 0; d < kDepth; ++d) {  // weights live on the GPU
    const std::string w = "w" + std::to_string(d), b = "b" + std::to_string(d);
    Feed(&ws, w + "_host", {kDim, kDim}, d);
    Feed(&ws, b + "_host", {kDim}, 100 + d);
    for (auto n : {w, b}) {
      caffe2::OperatorDef copy;
      copy.set_type("CopyCPUToGPU");
      copy.add_input(n + "_host");
      copy.add_output(n);
      copy.mutable_device_option()->set_device_type(1);
      if (dry_run) *ws.CreateBlob(n)->GetMutable<Tensor>() = ws.GetBlob(n + "_host")->GetTensor();
      else ws.RunOperatorOnce(copy);
      net.add_external_input(n);
    }
  }
  for (int k = 0; k < batches; ++k) {
    const std::string x = "x" + std::to_string(k);
    net.add_external_input(x);
    Feed(&ws, x, {kRows, kDim}, 1000 + k);
    AddOp(&net, "Scale", {x}, {x + "_pre"});  // CPU preprocessing; the copy pass inserts the H2D copy
    std::string prev = x + "_pre";
    for (int d = 0; d < kDepth; ++d) {
      const std::string y = x + "_h" + std::to_string(d);
      AddOp(&net, "FC", {prev, "w" + std::to_string(d), "b" + std::to_string(d)}, {y}, 1);
      prev = y;
    }
    AddOp(&net, "Relu", {prev}, {x + "_out"});  // CPU postprocessing: D2H copy inserted before it
    net.add_external_output(x + "_out");
  }
  if (dry_run) {
    auto* soft = net.add_arg();
    soft->set_name("soft_placement");
    soft->set_i(1);
    NetBase* cpu_net = ws.CreateNet(net);
    cpu_net->Run();
    std::printf("dry run on CPU (soft placement): %d ops ran, %d of them copies\n\n",
                static_cast<int>(cpu_net->operators().size()), static_cast<int>(cpu_net->placement().copies.size()));
    return {0, 0, 0};
  }
  NetBase* gpu_net = ws.CreateNet(net);
  PipelineTimes t{MsPerRun(gpu_net, 5), 0, 0};
  caffe2::NetDef compute_net, transfer_net;
  for (auto* n : {&compute_net, &transfer_net}) n->set_type("dag"), n->set_num_workers(4);
  compute_net.set_name("compute_only");
  transfer_net.set_name("transfer_only");
  for (int k = 0; k < batches; ++k) {
    const std::string x = "x" + std::to_string(k);
    std::string prev = x + "_pre_gpu_0";  // the copy pass's name for x_pre on cuda:0
    for (int d = 0; d < kDepth; ++d) {
      const std::string y = "c" + std::to_string(k) + "_h" + std::to_string(d);
      AddOp(&compute_net, "FC", {prev, "w" + std::to_string(d), "b" + std::to_string(d)}, {y}, 1);
      prev = y;
    }
    AddOp(&transfer_net, "CopyCPUToGPU", {x + "_pre"}, {"t" + std::to_string(k) + "_in"}, 1);
    AddOp(&transfer_net, "CopyGPUToCPU", {x + "_h" + std::to_string(kDepth - 1)}, {"t" + std::to_string(k) + "_out"}, 1);
  }
  t.compute_ms = MsPerRun(ws.CreateNet(compute_net), 5);
  t.transfer_ms = MsPerRun(ws.CreateNet(transfer_net), 5);
  if (print_profile) {
    ProfileResult prof = ProfileNet(gpu_net, 1, 5, false);
    std::printf("Profile of the %d-micro-batch pipeline (op times per run, summed over ops):\n\n%s\n", batches,
                prof.summary.ToMarkdown().c_str());
  }
  return t;
}

void GpuPipeline(bool dry_run) {
  std::printf("## GPU: CPU preprocessing, copies and GPU compute of consecutive micro-batches\n\n");
  if (NumCudaDevices() == 0 && !dry_run) {
    std::printf("skipped: no CUDA device on this machine (NumCudaDevices() == 0%s)\n\n",
                HasCudaSupport() ? "" : ", and this build has no CUDA");
    return;
  }
  if (dry_run) {
    Pipeline(4, true, false);
    return;
  }
  const PipelineTimes a = Pipeline(4, false, false), b = Pipeline(16, false, true);
  std::printf("Each micro-batch: Scale (CPU) -> H2D -> 8 FC 1024x4096x4096 (GPU) -> D2H -> Relu (CPU); 4 workers.\n\n"
              "| micro-batches | compute alone ms | transfers alone ms | pipeline ms/run | pipeline / max(compute, transfer) |\n"
              "|---:|---:|---:|---:|---:|\n");
  for (const auto& [k, t] : {std::make_pair(4, a), std::make_pair(16, b)})
    std::printf("| %d | %.2f | %.2f | %.2f | %.2f |\n", k, t.compute_ms, t.transfer_ms, t.pipeline_ms,
                t.pipeline_ms / std::max(t.compute_ms, t.transfer_ms));
  // Steady state: what each micro-batch beyond the first 4 adds (pipeline fill and drain cancel).
  const double marginal = (b.pipeline_ms - a.pipeline_ms) /
                          std::max(b.compute_ms - a.compute_ms, b.transfer_ms - a.transfer_ms);
  std::printf("\nSteady state (micro-batches 5..16): pipeline time added / max(compute, transfer) added = %.2f\n\n",
              marginal);
}

}  // namespace

int main(int argc, char** argv) {
  const bool dry_run = argc > 1 && std::strcmp(argv[1], "--gpu-dry-run") == 0;
#ifdef _OPENMP
  omp_set_num_threads(1);  // fair comparison: one thread per kernel everywhere
#endif
  if (!dry_run) CpuWideDag(), DispatchOverhead();
  GpuPipeline(dry_run);
  return 0;
}
