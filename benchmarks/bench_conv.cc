// Conv throughput on ResNet-50's layer shapes (batch 1 and 16): the Conv operator on CPU (im2col +
// Eigen GEMM) in GFLOP/s = 2 * N * M * (C/group) * kH * kW * OH * OW / time, next to the raw Eigen
// GEMM ceiling for the same per-image products ([M x C*kH*kW] * [C*kH*kW x OH*OW], N times),
// measured in the same run. With a CUDA device, the same layers on the CUDNN engine in float32 and
// float16, next to one cuBLAS GEMM of the implicit-GEMM shape. Prints markdown. Usage: bench_conv
// [--quick] (batch 1 only)
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/device.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "benchmarks/bench_util.h"

using namespace hetnet;
using bench::BestSeconds;
using bench::Clock;

namespace {
// Best times of a and b, measured alternately (a, b, a, b, ...) so that load from other processes
// hits both alike; at least `reps` pairs and about `budget` seconds.
template <typename A, typename B>
std::pair<double, double> BestPair(A a, B b, int reps, double budget) {
  a();
  b();
  double ba = 1e30, bb = 1e30, total = 0;
  for (int r = 0; r < reps || (total < budget && r < 200); ++r) {
    auto t0 = Clock::now();
    a();
    auto t1 = Clock::now();
    b();
    auto t2 = Clock::now();
    const double da = std::chrono::duration<double>(t1 - t0).count(), db = std::chrono::duration<double>(t2 - t1).count();
    ba = std::min(ba, da);
    bb = std::min(bb, db);
    total += da + db;
  }
  return {ba, bb};
}
caffe2::Argument IntArg(const char* n, int v) {
  caffe2::Argument a;
  a.set_name(n);
  a.set_i(v);
  return a;
}
struct Layer {
  const char* name;
  int64_t C, HW, M;
  int k, s, p;
};
// GPU columns: the Conv op (CUDNN engine) in float32 with cuDNN's heuristic, its exhaustive search, the
// default engine, the engine measured faster (what Conv runs), float16 (tensor cores), and the ceiling: one
// cuBLAS GEMM (MatMul) of the implicit-GEMM shape M x K x (batch * P), all timed over 10 queued runs.
std::string GpuCells(const caffe2::OperatorDef& def, const Tensor& x, const Tensor& w, const Tensor& b, int64_t M,
                     int64_t K, int64_t NP, double flops) {
  const Device d = Device::CUDA(0);
  Workspace gws;
  auto put = [&](const std::string& name, const Tensor& t, bool half) {
    gws.CreateBlob(name)->GetMutableTensor(d)->CopyFrom(t);
    if (half) gws.CreateBlob(name + "_h")->GetMutableTensor(d)->CopyFrom(bench::HalfOf(t));
  };
  put("X", x, true), put("W", w, true), put("b", b, true);
  put("A", bench::RandomTensor({M, K}, 4), false), put("B", bench::RandomTensor({K, NP}, 5), false);
  auto time = [&](caffe2::OperatorDef op) {
    DeviceToOption(d, op.mutable_device_option());
    auto g = CreateOperator(op, &gws);
    return BestSeconds([&] { for (int r = 0; r < 10; ++r) g->Run(); g->Finish(); }, 5) / 10;
  };
  caffe2::OperatorDef half = def, mm;
  for (int i = 0; i < 3; ++i) half.set_input(i, def.input(i) + "_h");
  half.set_output(0, "Y_h");
  mm.set_type("MatMul");
  mm.add_input("A"), mm.add_input("B"), mm.add_output("C");
  caffe2::OperatorDef heuristic = def, exhaustive = def, im2col = def;
  *heuristic.add_arg() = IntArg("choose_engine", 0);  // cuDNN's heuristic algorithm, no measured choice
  *exhaustive.add_arg() = IntArg("exhaustive_search", 1);
  *exhaustive.add_arg() = IntArg("choose_engine", 0);
  im2col.set_engine("DEFAULT");  // not registered: the default engine (im2col + cuBLAS)
  const double t32 = time(heuristic), tex = time(exhaustive), tdef = time(im2col), tchoice = time(def);
  const double t16 = time(half), tmm = time(mm);
  char buf[192];
  std::snprintf(buf, sizeof buf, " %.0f | %.0f | %.0f | %.0f | %.0f | %.0f%% | %.0f |", flops / t32 * 1e-9,
                flops / tex * 1e-9, flops / tdef * 1e-9, flops / tchoice * 1e-9, flops / tmm * 1e-9, 100.0 * tmm / t32,
                flops / t16 * 1e-9);
  return buf;
}
}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const std::vector<Layer> layers{
      {"conv1 7x7/2 3->64 @224", 3, 224, 64, 7, 2, 3},      {"res2 1x1 64->64 @56", 64, 56, 64, 1, 1, 0},
      {"res2 3x3 64->64 @56", 64, 56, 64, 3, 1, 1},         {"res2 1x1 64->256 @56", 64, 56, 256, 1, 1, 0},
      {"res3 3x3 128->128 @28", 128, 28, 128, 3, 1, 1},     {"res3 1x1 512->128 @28", 512, 28, 128, 1, 1, 0},
      {"res4 3x3 256->256 @14", 256, 14, 256, 3, 1, 1},     {"res4 1x1 256->1024 @14", 256, 14, 1024, 1, 1, 0},
      {"res5 3x3 512->512 @7", 512, 7, 512, 3, 1, 1},       {"res5 1x1 512->2048 @7", 512, 7, 2048, 1, 1, 0},
  };
  const bool gpu = NumCudaDevices() > 0;
  std::printf("Eigen threads: %d; CUDA devices: %d\n\n", Eigen::nbThreads(), NumCudaDevices());
  std::printf("| layer | batch | GFLOP | CPU Conv GFLOP/s | Eigen GEMM ceiling GFLOP/s | Conv / ceiling |%s\n",
              gpu ? " cuDNN float32 GFLOP/s | cuDNN exhaustive float32 | default engine (cuBLAS) float32 |"
                    " Conv as run (measured engine choice) float32 | cuBLAS GEMM float32 GFLOP/s | cuDNN / GEMM |"
                    " cuDNN float16 GFLOP/s |" : "");
  std::printf("|---|---|---|---|---|---|%s\n", gpu ? "---|---|---|---|---|---|---|" : "");
  double sum_ratio = 0;
  int count = 0;
  for (int64_t batch : {int64_t{1}, int64_t{16}}) {
    for (const auto& L : layers) {
      if (quick && batch == 16) continue;
      const int64_t OHW = (L.HW + 2 * L.p - L.k) / L.s + 1, P = OHW * OHW, K = L.C * L.k * L.k;
      const double flops = 2.0 * batch * L.M * K * P;
      const int reps = flops > 2e9 ? 3 : flops > 2e8 ? 5 : 15;
      Workspace ws;
      const Tensor x = bench::RandomTensor({batch, L.C, L.HW, L.HW}, 1);
      const Tensor w = bench::RandomTensor({L.M, L.C, L.k, L.k}, 2);
      const Tensor b = bench::RandomTensor({L.M}, 3);
      ws.CreateBlob("X")->GetMutableTensor(Device::CPU())->CopyFrom(x);
      ws.CreateBlob("W")->GetMutableTensor(Device::CPU())->CopyFrom(w);
      ws.CreateBlob("b")->GetMutableTensor(Device::CPU())->CopyFrom(b);
      caffe2::OperatorDef def;
      def.set_type("Conv");
      for (const char* i : {"X", "W", "b"}) def.add_input(i);
      def.add_output("Y");
      *def.add_arg() = IntArg("kernel", L.k);
      *def.add_arg() = IntArg("stride", L.s);
      *def.add_arg() = IntArg("pad", L.p);
      auto op = CreateOperator(def, &ws);
      // Ceiling: the same GEMMs on buffers already laid out (no im2col).
      RowMat A = RowMat::Random(L.M, K), B = RowMat::Random(K, P), C(L.M, P);
      const auto [t_conv, t_gemm] = BestPair([&] { op->Run(); },
                                             [&] { for (int64_t n = 0; n < batch; ++n) C.noalias() = A * B; }, reps,
                                             quick ? 0.5 : 2.0);
      const double g_conv = flops / t_conv * 1e-9, g_gemm = flops / t_gemm * 1e-9;
      sum_ratio += g_conv / g_gemm;
      ++count;
      std::string gpu_cell;
      if (gpu) gpu_cell = GpuCells(def, x, w, b, L.M, K, batch * P, flops);
      std::printf("| %s | %lld | %.3f | %.1f | %.1f | %.0f%% |%s\n", L.name, static_cast<long long>(batch), flops * 1e-9,
                  g_conv, g_gemm, 100.0 * g_conv / g_gemm, gpu_cell.c_str());
      std::fflush(stdout);
    }
  }
  std::printf("\nMean Conv / GEMM ceiling: %.0f%% over %d layer x batch rows%s\n", 100.0 * sum_ratio / count, count,
              gpu ? "" : " (no CUDA device: GPU column omitted)");
  return 0;
}
