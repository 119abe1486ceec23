// FC throughput on CPU (GFLOP/s = 2*M*N*K / time) at a few sizes, next to the raw Eigen GEMM ceiling
// (same row-major product X * W^T, measured in the same run). With a CUDA device, a second table:
// the FC op on the GPU in float32 and float16 (tensor cores, fp32 accumulation) next to MatMul of
// the same product (one cuBLAS GEMM, no bias: the ceiling). Prints markdown tables.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "core/device.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "benchmarks/bench_util.h"

using namespace hetnet;
using bench::BestSeconds;

namespace {

caffe2::OperatorDef GpuOp(const std::string& type, std::vector<std::string> in, bool trans_b) {
  caffe2::OperatorDef def;
  def.set_type(type);
  for (const auto& i : in) def.add_input(i);
  def.add_output("Y_" + type + in[0]);
  def.mutable_device_option()->set_device_type(1);
  if (trans_b) {
    auto* a = def.add_arg();
    a->set_name("trans_b");
    a->set_i(1);
  }
  return def;
}

void GpuTable() {
  if (NumCudaDevices() == 0) {
    std::printf("\nGPU: skipped (no CUDA device)\n");
    return;
  }
  struct Size { int64_t M, K, N; };
  const std::vector<Size> sizes{{64, 1024, 1024}, {1024, 4096, 4096}, {4096, 4096, 4096}, {8192, 8192, 8192}};
  std::printf("\n| M x K x N | FC float32 GFLOP/s | MatMul float32 (cuBLAS GEMM) GFLOP/s | FC / GEMM | FC float16 GFLOP/s |\n"
              "|---|---|---|---|---|\n");
  const Device gpu = Device::CUDA(0);
  for (const auto& s : sizes) {
    Workspace ws;
    auto feed = [&](const std::string& name, std::vector<int64_t> shape, unsigned seed, bool half) {
      const Tensor host = bench::RandomTensor(shape, seed);
      ws.CreateBlob(name)->GetMutableTensor(gpu)->CopyFrom(half ? bench::HalfOf(host) : host);
    };
    feed("X", {s.M, s.K}, 1, false), feed("W", {s.N, s.K}, 2, false), feed("b", {s.N}, 3, false);
    feed("Xh", {s.M, s.K}, 1, true), feed("Wh", {s.N, s.K}, 2, true), feed("bh", {s.N}, 3, true);
    const double flops = 2.0 * s.M * s.N * s.K;
    const int runs = flops > 1e11 ? 5 : 50;
    auto time = [&](const caffe2::OperatorDef& def) {
      auto op = CreateOperator(def, &ws);
      return BestSeconds([&] {
        for (int i = 0; i < runs; ++i) op->Run();
        op->Finish();
      }, 5) / runs;
    };
    const double t_fc = time(GpuOp("FC", {"X", "W", "b"}, false));
    const double t_mm = time(GpuOp("MatMul", {"X", "W"}, true));
    const double t_h = time(GpuOp("FC", {"Xh", "Wh", "bh"}, false));
    std::printf("| %lld x %lld x %lld | %.0f | %.0f | %.2f | %.0f |\n", (long long)s.M, (long long)s.K, (long long)s.N,
                flops / t_fc * 1e-9, flops / t_mm * 1e-9, t_mm / t_fc, flops / t_h * 1e-9);
  }
}

}  // namespace

int main() {
  using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  struct Size { int64_t M, K, N; };
  const std::vector<Size> sizes{{64, 1024, 1024}, {256, 4096, 1024}, {512, 1024, 512}, {1, 4096, 4096}};
  std::printf("Eigen threads: %d\n\n", Eigen::nbThreads());
  std::printf("| M x K x N | FC op GFLOP/s | raw Eigen GEMM GFLOP/s | FC / Eigen |\n|---|---|---|---|\n");
  for (const auto& s : sizes) {
    Workspace ws;
    Tensor* X = ws.CreateBlob("X")->GetMutable<Tensor>();
    *X = bench::RandomTensor({s.M, s.K}, 1);
    Tensor* W = ws.CreateBlob("W")->GetMutable<Tensor>();
    *W = bench::RandomTensor({s.N, s.K}, 2);
    Tensor* b = ws.CreateBlob("b")->GetMutable<Tensor>();
    *b = bench::RandomTensor({s.N}, 3);
    caffe2::OperatorDef def;
    def.set_type("FC");
    for (const char* i : {"X", "W", "b"}) def.add_input(i);
    def.add_output("Y");
    auto op = CreateOperator(def, &ws);
    const double flops = 2.0 * s.M * s.N * s.K;
    const int reps = flops > 1e9 ? 5 : 20;
    const double t_fc = BestSeconds([&] { op->Run(); }, reps);
    Eigen::Map<const RowMat> x(X->data<float>(), s.M, s.K), w(W->data<float>(), s.N, s.K);
    RowMat y(s.M, s.N);
    const double t_eigen = BestSeconds([&] { y.noalias() = x * w.transpose(); }, reps);
    std::printf("| %lld x %lld x %lld | %.1f | %.1f | %.2f |\n", (long long)s.M, (long long)s.K, (long long)s.N,
                flops / t_fc * 1e-9, flops / t_eigen * 1e-9, t_eigen / t_fc);
  }
  GpuTable();
  return 0;
}
