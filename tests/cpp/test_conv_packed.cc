// The PACKED Conv engine (operators/conv_op_packed.cc) and its convolution on the packed GEMM's
// gather tiles (device/cpu_packed_conv.h): every tile height, taps per K block, pads, strides,
// dilations, both filter layouts, bias / residual / Relu and threads against a float64 loop; the
// operator against the DNNL engine on the same channels-last inputs (fused Relu and residual
// included); the shapes it hands to DNNL; and the inference rewrite choosing it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/inference_fusion.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "device/cpu_packed_conv.h"
#include "device/cpu_packed_gemm.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

struct Geo {
  int64_t H, W, C, M;
  int kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};

int64_t Out(int64_t in, int k, int s, int d, int p0, int p1) { return (in + p0 + p1 - (d * (k - 1) + 1)) / s + 1; }

// y [OH, OW, M] of one channels-last image, float64; f is [M, C, kh, kw] (hwc: [M, kh, kw, C]).
std::vector<double> Reference(const Geo& g, const float* x, const float* f, bool hwc, const float* bias,
                              const float* residual, bool relu) {
  const int64_t OH = Out(g.H, g.kh, g.sh, g.dh, g.pt, g.pb), OW = Out(g.W, g.kw, g.sw, g.dw, g.pl, g.pr);
  std::vector<double> y(OH * OW * g.M);
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow)
      for (int64_t m = 0; m < g.M; ++m) {
        double s = bias ? bias[m] : 0.0;
        for (int i = 0; i < g.kh; ++i)
          for (int j = 0; j < g.kw; ++j) {
            const int64_t ih = oh * g.sh - g.pt + i * g.dh, iw = ow * g.sw - g.pl + j * g.dw;
            if (ih < 0 || ih >= g.H || iw < 0 || iw >= g.W) continue;
            for (int64_t c = 0; c < g.C; ++c) {
              const float w = hwc ? f[((m * g.kh + i) * g.kw + j) * g.C + c] : f[((m * g.C + c) * g.kh + i) * g.kw + j];
              s += double(x[(ih * g.W + iw) * g.C + c]) * w;
            }
          }
        const int64_t at = (oh * OW + ow) * g.M + m;
        if (residual) s += residual[at];
        y[at] = relu ? std::max(s, 0.0) : s;
      }
  return y;
}

void CheckConv(const Geo& g, bool hwc, bool with_bias, bool with_residual, bool relu, int workers) {
  const int64_t OH = Out(g.H, g.kh, g.sh, g.dh, g.pt, g.pb), OW = Out(g.W, g.kw, g.sw, g.dw, g.pl, g.pr);
  const int64_t taps = int64_t{g.kh} * g.kw;
  const std::vector<float> x = RandomVec(g.H * g.W * g.C, 1), f = RandomVec(g.M * g.C * taps, 2),
                           b = RandomVec(g.M, 3), r = RandomVec(OH * OW * g.M, 4);
  const auto packed = hwc ? cpu_gemm::PackedMatrix::FromTransposed(f.data(), g.M, taps * g.C)
                          : cpu_gemm::PackedMatrix::FromFilterCS(f.data(), g.M, g.C, taps);
  std::vector<float> y = with_residual ? r : std::vector<float>(OH * OW * g.M, 7.0f);
  const cpu_gemm::ConvShape s{g.H, g.W, g.C, OH, OW, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt, g.pl};
  cpu_gemm::ConvPacked(s, x.data(), *packed, with_bias ? b.data() : nullptr, relu, y.data(), with_residual, workers);
  const auto want = Reference(g, x.data(), f.data(), hwc, with_bias ? b.data() : nullptr,
                              with_residual ? r.data() : nullptr, relu);
  INFO("H " << g.H << " W " << g.W << " C " << g.C << " M " << g.M << " k " << g.kh << "x" << g.kw << " s " << g.sh
            << "," << g.sw << " d " << g.dh << "," << g.dw << " pads " << g.pt << "," << g.pl << "," << g.pb << ","
            << g.pr << " hwc " << hwc << " bias " << with_bias << " residual " << with_residual << " relu " << relu
            << " workers " << workers);
  const WorstError worst = Worst(y, want);
  INFO("worst at " << worst.index);
  REQUIRE(worst.error <= 1e-5 * std::max<double>(1.0, g.C * taps));
}

}  // namespace

TEST_CASE("Packed convolution equals a float64 loop on every tile, block, pad, stride and dilation", "[conv][packed]") {
  if (!cpu_gemm::GatherSupported()) {
    WARN("skipped: this CPU has no AVX2+FMA, the PACKED Conv hands every convolution to DNNL");
    return;
  }
  // 1..7 pixels (every tile height and a second tile), 3x3 pad 1, M inside a half, a panel, two panels.
  for (int64_t W : {1, 2, 3, 5, 7})
    for (int64_t M : {5, 16, 17, 40}) CheckConv({1, W, 8, M, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, M % 2 == 0, true, false, false, 1);
  // Channels over the K block (832 / C taps per block): 1, 2 and 13 taps per block; strides, dilation,
  // asymmetric pads, a 1x1, a kernel wider than tall, and more than 64 taps (9x9 = 81).
  CheckConv({9, 8, 64, 33, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, false, true, true, true, 1);
  CheckConv({7, 7, 512, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, false, true, true, true, 2);
  CheckConv({8, 9, 300, 20, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1}, true, false, false, true, 1);
  CheckConv({11, 10, 16, 24, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2}, false, true, false, false, 2);
  CheckConv({6, 7, 32, 32, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0}, false, true, true, false, 1);
  CheckConv({10, 12, 20, 50, 5, 3, 1, 2, 1, 1, 2, 0, 1, 3}, true, true, false, true, 3);
  CheckConv({12, 12, 4, 9, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4}, false, false, true, false, 2);
  // Over a hundred pixels: balanced groups (14 x 14 = 196: three of 66, 65, 65) over threads.
  CheckConv({14, 14, 64, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, false, true, true, true, 2);
}

namespace {

// Runs Conv on X (NCHW) as channels-last activations on `engine`; Y in NHWC order.
std::vector<float> RunChannelsLast(Workspace& ws, const std::string& engine, const std::vector<caffe2::Argument>& extra,
                                   bool residual, const std::string& y) {
  std::vector<caffe2::Argument> args{ArgS("activation_order", "NHWC")};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<std::string> inputs{"Xl", "W", "b"};
  if (residual) {
    inputs.push_back("R");
    args.push_back(ArgI("fused_residual", 1));
  }
  auto def = MakeOp("Conv", inputs, {y}, args);
  def.set_engine(engine);
  auto op = CreateOperator(def, &ws);
  op->Run();
  op->Run();  // a second run: the packed filter reused
  return FetchVec<float>(ws, y);
}

}  // namespace

TEST_CASE("PACKED Conv equals the DNNL engine on channels-last inputs and hands other shapes to it", "[conv][packed][dnnl]") {
  struct Case {
    int64_t C, M, H;
    int k, stride, pad;
    bool relu, residual;
  };
  for (const Case& c : {Case{64, 64, 9, 3, 1, 1, true, true}, Case{96, 40, 8, 3, 2, 1, true, false},
                        Case{64, 48, 7, 1, 1, 0, false, false},    // 1x1: DNNL's
                        Case{20, 50, 12, 5, 1, 0, true, false}}) {  // few channels: DNNL's
    Workspace ws;
    const int64_t OH = (c.H + 2 * c.pad - c.k) / c.stride + 1;
    Feed<float>(ws, "Xl", {2, c.H, c.H, c.C}, RandomVec(2 * c.H * c.H * c.C, 1));
    Feed<float>(ws, "W", {c.M, c.C, c.k, c.k}, RandomVec(c.M * c.C * c.k * c.k, 2));
    Feed<float>(ws, "b", {c.M}, RandomVec(c.M, 3));
    Feed<float>(ws, "R", {2, OH, OH, c.M}, RandomVec(2 * OH * OH * c.M, 4));
    std::vector<caffe2::Argument> args{ArgI("kernel", c.k), ArgI("stride", c.stride), ArgI("pad", c.pad)};
    if (c.relu) args.push_back(ArgS("fused_activation", "Relu"));
    const auto packed = RunChannelsLast(ws, "PACKED", args, c.residual, "Yp");
    const auto dnnl = RunChannelsLast(ws, "DNNL", args, c.residual, "Yd");
    INFO("C " << c.C << " M " << c.M << " k " << c.k);
    REQUIRE(packed.size() == static_cast<size_t>(2 * OH * OH * c.M));
    REQUIRE(Worst(packed, dnnl).error <= 1e-4);
    if (c.relu) CHECK(*std::min_element(packed.begin(), packed.end()) == 0.0f);
  }
}

TEST_CASE("The inference rewrite gives channels-last CPU convolutions the PACKED engine", "[conv][packed][inference_fusion]") {
  caffe2::NetDef net;
  net.set_name("convs");
  *net.add_op() = MakeOp("Conv", {"X", "W1", "b1"}, {"Y1"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  *net.add_op() = MakeOp("Relu", {"Y1"}, {"Z1"});
  *net.add_op() = MakeOp("Conv", {"Z1", "W2", "b2"}, {"Y2"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  net.add_external_input("X");
  net.add_external_output("Y2");
  Workspace ws;
  Feed<float>(ws, "X", {1, 64, 6, 6}, RandomVec(64 * 36, 1));
  for (const char* w : {"W1", "W2"}) Feed<float>(ws, w, {64, 64, 3, 3}, RandomVec(64 * 64 * 9, 2));
  for (const char* b : {"b1", "b2"}) Feed<float>(ws, b, {64}, RandomVec(64, 3));
  RequestInferenceRewrite(&net);
  const InferenceRewrite r = RewriteForInference(net, &ws);
  INFO("skipped: " << r.skipped);
  int packed = 0, convs = 0;
  for (const auto& op : r.net.op())
    if (op.type() == "Conv") {
      ++convs;
      packed += op.engine() == "PACKED";
    }
  CHECK(convs == 2);
  CHECK(packed == 2);  // the engine is chosen on every CPU: on AVX-512 ones it hands the work to DNNL
  // The rewritten net computes what the written one does.
  ws.RunNetOnce(net);
  const auto want = FetchVec<float>(ws, "Y2");
  ws.RunNetOnce(r.net);
  REQUIRE(Worst(FetchVec<float>(ws, "Y2"), want).error <= 1e-4);
}
