// cuDNN scratch memory on a ResNet-ish stack of convolutions: the shared per-stream workspace
// (device/cuda/cudnn_workspace.h) against what one workspace per operator would hold (the sum of
// each operator's largest request). Runs forward and gradient of every Conv on CUDA:0 with the
// CUDNN engine and default heuristics (and again with exhaustive_search=1). Without a CUDA device
// or without cuDNN it says so and exits 0.
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "benchmarks/bench_util.h"
#if defined(HETNET_WITH_CUDNN)
#include "device/cuda/cudnn_workspace.h"
#endif

using namespace hetnet;

namespace {
caffe2::Argument IntArg(const char* n, int v) {
  caffe2::Argument a;
  a.set_name(n);
  a.set_i(v);
  return a;
}
}  // namespace

int main() {
  if (NumCudaDevices() == 0) {
    std::printf("bench_cudnn_workspace: skipped: no CUDA device on this machine\n");
    return 0;
  }
#if !defined(HETNET_WITH_CUDNN)
  std::printf("bench_cudnn_workspace: skipped: this build has no cuDNN\n");
  return 0;
#else
  struct L { int64_t C, M; int k, s, p; };
  // A ResNet-50-like trunk at 56x56 -> 7x7 (bottlenecks: 1x1 reduce, 3x3, 1x1 expand; strided 3x3).
  std::vector<L> layers{{3, 64, 7, 2, 3}};
  int64_t c = 64;
  for (int64_t width : {64, 128, 256, 512})
    for (int rep = 0; rep < 3; ++rep) {
      const int stride = (rep == 0 && width != 64) ? 2 : 1;
      layers.push_back({c, width, 1, 1, 0});
      layers.push_back({width, width, 3, stride, 1});
      layers.push_back({width, width * 4, 1, 1, 0});
      c = width * 4;
    }
  const Device gpu = Device::CUDA(0);
  std::printf("| search | batch | convolutions | shared workspace (MiB) | one per operator, sum (MiB) | saved (MiB) |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (int exhaustive : {0, 1})
    for (int64_t batch : {int64_t{8}, int64_t{32}}) {
      ResetCudnnWorkspaceStats();
      Workspace ws;
      ws.CreateBlob("x0")->GetMutableTensor(gpu)->CopyFrom(bench::RandomTensor({batch, 3, 112, 112}, 1, -0.1f, 0.1f));
      std::vector<std::unique_ptr<OperatorBase>> ops;
      std::string prev = "x0";
      for (size_t i = 0; i < layers.size(); ++i) {
        const auto& l = layers[i];
        const std::string w = "w" + std::to_string(i), y = "x" + std::to_string(i + 1);
        ws.CreateBlob(w)->GetMutableTensor(gpu)->CopyFrom(bench::RandomTensor({l.M, l.C, l.k, l.k}, 10 + i, -0.1f, 0.1f));
        caffe2::OperatorDef def;
        def.set_type("Conv");
        def.add_input(prev);
        def.add_input(w);
        def.add_output(y);
        for (auto a : {IntArg("kernel", l.k), IntArg("stride", l.s), IntArg("pad", l.p), IntArg("exhaustive_search", exhaustive)})
          *def.add_arg() = a;
        DeviceToOption(gpu, def.mutable_device_option());
        ops.push_back(CreateOperator(def, &ws));
        ops.back()->Run();
        // The gradient op (dW, dX) with dY = Y.
        auto g = (*GradientRegistry::Find("Conv"))(def, {y})->GetGradientDefs();
        ops.push_back(CreateOperator(g[0], &ws));
        ops.back()->Run();
        ops.back()->Finish();
        prev = y;
      }
      const CudnnWorkspaceStats s = GetCudnnWorkspaceStats();
      const double mib = 1.0 / (1 << 20);
      std::printf("| %s | %lld | %zu (+%zu gradient ops) | %.1f | %.1f | %.1f |\n", exhaustive ? "exhaustive" : "heuristics",
                  static_cast<long long>(batch), layers.size(), layers.size(), s.shared_bytes * mib,
                  s.per_op_sum_bytes * mib, (s.per_op_sum_bytes - s.shared_bytes) * mib);
    }
  std::printf("\nShared = the grow-only workspace(s) of this stream (largest single request); one per operator = the sum "
              "of each operator's largest request. Cap per request: min(ws_nbytes_limit = 64 MiB, global cap %zu MiB).\n",
              CudnnWorkspaceGlobalCap() >> 20);
  return 0;
#endif
}
