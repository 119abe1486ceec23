// The DNNL Conv's Winograd path (operators/conv_op_dnnl.cc): float32 3x3 stride-1 convolutions run
// oneDNN's Winograd kernels, whose results differ from the direct kernel's in the last bits. Each
// case runs both (dnnl_winograd=1 and 0) on 1 and 2 threads: close to each other and to the
// float64 reference, and not bit-identical (the Winograd kernel did run).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/intra_op_threads.h"
#include "core/operator.h"
#include "tests/cpp/fused_conv_case.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("DNNL Conv: 3x3 stride-1 float32 by Winograd equals the direct kernel to 1e-5 of the largest output",
          "[ops][conv][dnnl][pool]") {
  if (ResolveEngine(MakeOp("Conv", {"X", "F"}, {"Y"}, {ArgI("kernel", 3)}), Device::CPU()) != "DNNL") {
    WARN("skipped: no DNNL engine in this build");
    return;
  }
  // oneDNN's Winograd kernels are AVX-512 only: elsewhere the op falls back to the direct kernel
  // (checked too: the results stay right), and whether Winograd ran cannot be seen.
  const bool winograd_kernels = __builtin_cpu_supports("avx512f");
  if (!winograd_kernels) WARN("this CPU has no AVX-512: oneDNN has no Winograd kernel here; only the fallback is checked");
  struct Shape {
    const char* label;
    int64_t n, c, m, hw;
    bool channels_last, residual, relu;
  };
  // ResNet's 3x3 layers at 1 and 2 images, channels-last (bands of rows, or channel parts where the
  // filter outweighs the output) and NCHW (one primitive; parts by image at 2 threads), with the
  // residual sum and Relu.
  for (const Shape& s : {Shape{"channels-last, bands", 1, 64, 64, 28, true, true, true},
                         Shape{"channels-last, channel parts", 1, 256, 256, 7, true, false, true},
                         Shape{"channels-last, two images", 2, 32, 48, 14, true, true, false},
                         Shape{"NCHW", 1, 32, 32, 12, false, false, true},
                         Shape{"NCHW, parts by image", 3, 32, 32, 12, false, true, true}}) {
    INFO(s.label);
    Workspace ws;
    const auto [in, args] = PrepareFusedConv(
        ws, {s.n, s.c, s.m, s.hw, 3, 1, s.channels_last, s.residual, s.relu, /*filter_range=*/0.1f});
    const auto want = FetchVec<float>(ws, "Want");
    float largest = 0;
    for (float v : want) largest = std::max(largest, std::abs(v));
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      ScopedIntraOpThreads team(threads);
      std::vector<float> got[2];
      for (int winograd = 0; winograd < 2; ++winograd) {
        std::vector<caffe2::Argument> a = args;
        a.push_back(ArgI("dnnl_winograd", winograd));
        RunOp(ws, MakeOp("Conv", in, {"Y"}, a));
        if (s.channels_last) RunOp(ws, MakeOp("NHWC2NCHW", {"Y"}, {"Yb"}));
        got[winograd] = FetchVec<float>(ws, s.channels_last ? "Yb" : "Y");
        REQUIRE(got[winograd].size() == want.size());
      }
      const auto [to_ref, between] = Gaps(got[1], got[0], want);
      CHECK(to_ref <= 1e-5 * largest);
      CHECK(between <= 1e-5 * largest);
      if (winograd_kernels) CHECK(between > 0);  // Winograd ran: its rounding differs from the direct one's
    }
  }
}
