// FC throughput on CPU (GFLOP/s = 2*M*N*K / time) at a few sizes, next to the raw Eigen GEMM ceiling
// (same row-major product X * W^T, measured in the same run). Prints a markdown table.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "core/operator.h"
#include "core/workspace.h"
#include "benchmarks/bench_util.h"

using namespace hetnet;
using bench::BestSeconds;

namespace {
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
  return 0;
}
