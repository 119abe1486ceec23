// CPU Conv and FC: the default Eigen kernels (engine "EIGEN", i.e. none registered) against the DNNL
// engine (oneDNN, operators/*_dnnl.cc) on ResNet-18/50 convolution shapes at batch 1 and 8, LeNet's
// conv2 at batch 64 and the MLP's FC layers at batch 1 and 64, at 1 and 2 OpenMP threads. The two
// engines run the same def on the same blobs, interleaved in rounds (EIGEN, DNNL, EIGEN, ...) so
// load from other processes hits both alike; the table gives the median time per run over the
// rounds, GFLOP/s, and EIGEN time / DNNL time. The DNNL times include its per-run weight check, an
// O(1) look at the weight's write generation; the content checksum it replaced (still used for
// weights in storage owned elsewhere) is timed alone in the last column and in place in "DNNL ext W"
// (the DNNL op reading a copy of W in external storage, which it checksums on every run).
// "DNNL+Relu" is the DNNL op with fused_activation "Relu" (a oneDNN post-op). FC shapes also run the
// PACKED engine (hetnet's packed-weight GEMM, device/cpu_packed_gemm.h). All interleaved.
// Prints markdown.
// Usage: bench_cpu_engines [--quick] (fewer rounds) [--threads=1,2] [shape name substring]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/bench_util.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "device/prepared_weights.h"

using namespace hetnet;
using bench::Clock;

namespace {
caffe2::Argument IntArg(const char* n, int v) {
  caffe2::Argument a;
  a.set_name(n);
  a.set_i(v);
  return a;
}

struct Shape {
  std::string name;
  bool conv;
  int64_t N, C, HW, M;  // conv: X [N, C, HW, HW], filter [M, C, k, k]; FC: X [N, C], W [M, C]
  int k = 1, s = 1, p = 0;
  double Flops() const {
    if (!conv) return 2.0 * N * C * M;
    const int64_t o = (HW + 2 * p - k) / s + 1;
    return 2.0 * N * M * C * k * k * o * o;
  }
};

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds per run of the EIGEN and DNNL ops over interleaved rounds.
std::pair<double, double> Measure(const Shape& s, int rounds, double* hash_s, double* relu_s, double* ext_s,
                                  double* packed_s) {
  Workspace ws;
  auto put = [&](const char* name, std::vector<int64_t> shape, unsigned seed) {
    ws.CreateBlob(name)->GetMutableTensor(Device::CPU())->CopyFrom(bench::RandomTensor(std::move(shape), seed));
  };
  caffe2::OperatorDef def;
  def.set_type(s.conv ? "Conv" : "FC");
  for (const char* i : {"X", "W", "b"}) def.add_input(i);
  def.add_output("Y");
  if (s.conv) {
    put("X", {s.N, s.C, s.HW, s.HW}, 1);
    put("W", {s.M, s.C, s.k, s.k}, 2);
    *def.add_arg() = IntArg("kernel", s.k);
    *def.add_arg() = IntArg("stride", s.s);
    *def.add_arg() = IntArg("pad", s.p);
  } else {
    put("X", {s.N, s.C}, 1);
    put("W", {s.M, s.C}, 2);
  }
  put("b", {s.M}, 3);
  def.set_engine("EIGEN");
  auto eigen = CreateOperator(def, &ws);
  def.set_engine("DNNL");
  auto dnnl = CreateOperator(def, &ws);
  def.set_output(0, "Y_relu");
  caffe2::Argument fused;
  fused.set_name("fused_activation");
  fused.set_s("Relu");
  *def.add_arg() = fused;
  auto dnnl_relu = CreateOperator(def, &ws);
  // The same weights in storage owned elsewhere (as a caller's zero-copy buffer would be).
  const Tensor& w_own = ws.GetBlob("W")->GetTensor();
  std::shared_ptr<char> ext_buf(new char[w_own.nbytes()], std::default_delete<char[]>());
  std::memcpy(ext_buf.get(), w_own.raw_data(), w_own.nbytes());
  Tensor* w_ext = ws.CreateBlob("W_ext")->GetMutableTensor(Device::CPU());
  w_ext->Resize(w_own.shape());
  w_ext->SetExternalData(ext_buf, w_own.nbytes(), DataType::Float, Device::CPU());
  def.mutable_arg()->RemoveLast();
  def.set_input(1, "W_ext");
  def.set_output(0, "Y_ext");
  auto dnnl_ext = CreateOperator(def, &ws);
  std::unique_ptr<OperatorBase> packed;
  if (!s.conv) {
    def.set_input(1, "W");
    def.set_output(0, "Y_packed");
    def.set_engine("PACKED");
    packed = CreateOperator(def, &ws);
  }
  // Runs per round: about 5 ms of work at 50 GFLOP/s.
  const int reps = std::max<int>(1, static_cast<int>(5e-3 * 50e9 / s.Flops()));
  auto timed = [&](OperatorBase* op) {
    const auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) op->Run();
    return Seconds(t0, Clock::now()) / reps;
  };
  timed(eigen.get());
  timed(dnnl.get());
  timed(dnnl_relu.get());
  timed(dnnl_ext.get());
  if (packed) timed(packed.get());
  std::vector<double> te, td, tr, tx, tp;
  for (int r = 0; r < rounds; ++r) {
    te.push_back(timed(eigen.get()));
    td.push_back(timed(dnnl.get()));
    tr.push_back(timed(dnnl_relu.get()));
    tx.push_back(timed(dnnl_ext.get()));
    if (packed) tp.push_back(timed(packed.get()));
  }
  *packed_s = packed ? Median(tp) : 0;
  *relu_s = Median(tr);
  *ext_s = Median(tx);
  const Tensor& w = ws.GetBlob("W")->GetTensor();
  std::vector<double> th;
  volatile uint64_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = Clock::now();
    sink = sink + ContentHash(w.raw_data(), w.nbytes()).sum;
    th.push_back(Seconds(t0, Clock::now()));
  }
  *hash_s = Median(th);
  return {Median(te), Median(td)};
}
}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string filter;
  std::vector<int> thread_counts{1, 2};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      thread_counts.clear();
      for (const char* p = argv[i] + 10; *p;) {
        char* end = nullptr;
        thread_counts.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
      }
    } else {
      filter = argv[i];
    }
  }
  const int rounds = quick ? 5 : 21;
  std::vector<Shape> shapes;
  for (int64_t n : {1, 8}) {
    const std::string b = " b" + std::to_string(n);
    shapes.push_back({"R18 conv1 3->64 k7 s2 224" + b, true, n, 3, 224, 64, 7, 2, 3});
    shapes.push_back({"R18 64->64 k3 56" + b, true, n, 64, 56, 64, 3, 1, 1});
    shapes.push_back({"R18 64->128 k3 s2 56" + b, true, n, 64, 56, 128, 3, 2, 1});
    shapes.push_back({"R18 128->128 k3 28" + b, true, n, 128, 28, 128, 3, 1, 1});
    shapes.push_back({"R18 256->256 k3 14" + b, true, n, 256, 14, 256, 3, 1, 1});
    shapes.push_back({"R18 512->512 k3 7" + b, true, n, 512, 7, 512, 3, 1, 1});
    shapes.push_back({"R50 64->256 k1 56" + b, true, n, 64, 56, 256, 1, 1, 0});
    shapes.push_back({"R50 256->64 k1 56" + b, true, n, 256, 56, 64, 1, 1, 0});
    shapes.push_back({"R50 512->128 k1 28" + b, true, n, 512, 28, 128, 1, 1, 0});
    shapes.push_back({"R50 1024->256 k1 14" + b, true, n, 1024, 14, 256, 1, 1, 0});
    shapes.push_back({"R50 2048->512 k1 7" + b, true, n, 2048, 7, 512, 1, 1, 0});
  }
  shapes.push_back({"LeNet conv2 20->50 k5 12 b64", true, 64, 20, 12, 50, 5, 1, 0});
  for (int64_t n : {1, 4, 16, 32, 64}) {
    const std::string b = " b" + std::to_string(n);
    shapes.push_back({"FC 784->512" + b, false, n, 784, 0, 512});
    shapes.push_back({"FC 512->512" + b, false, n, 512, 0, 512});
  }
  shapes.erase(std::remove_if(shapes.begin(), shapes.end(),
                              [&](const Shape& s) { return s.name.find(filter) == std::string::npos; }),
               shapes.end());
  for (int threads : thread_counts) {
    omp_set_num_threads(threads);
    std::printf("\n### %d thread%s (median of %d rounds)\n\n", threads, threads > 1 ? "s" : "", rounds);
    std::printf(
        "| shape | EIGEN ms | DNNL ms | DNNL+Relu ms | DNNL ext W ms | EIGEN GFLOP/s | DNNL GFLOP/s | EIGEN/DNNL | "
        "checksum ms | PACKED ms | PACKED GFLOP/s | DNNL/PACKED |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (const Shape& s : shapes) {
      double hash_s = 0, relu_s = 0, ext_s = 0, packed_s = 0;
      const auto [te, td] = Measure(s, rounds, &hash_s, &relu_s, &ext_s, &packed_s);
      std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.1f | %.1f | %.2f | %.3f |", s.name.c_str(), te * 1e3, td * 1e3,
                  relu_s * 1e3, ext_s * 1e3, s.Flops() / te * 1e-9, s.Flops() / td * 1e-9, te / td, hash_s * 1e3);
      if (packed_s > 0)
        std::printf(" %.3f | %.1f | %.2f |\n", packed_s * 1e3, s.Flops() / packed_s * 1e-9, td / packed_s);
      else
        std::printf(" - | - | - |\n");
      std::fflush(stdout);
    }
  }
  return 0;
}
