// Conv and ConvGradient on float16 tensors with the CUDNN engine (tensor-core math, float32
// accumulation) against the CPU float32 kernels run on the same half-rounded values. The CPU Conv
// has no float16 kernel, so the reference sees exactly the values the GPU reads. Also NHWC activations
// (the layout of the float16 tensor-core kernels) for Conv and the pools.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
std::vector<float> RoundedToHalf(std::vector<float> v) {
  for (float& x : v) x = HalfToFloat(FloatToHalf(x));
  return v;
}
Tensor HalfOf(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  Tensor t(shape, DataType::Float16);
  for (size_t i = 0; i < v.size(); ++i) t.mutable_data<Half>()[i] = FloatToHalf(v[i]);
  return t;
}
}  // namespace

TEST_CASE("Conv float16 on CUDA (cuDNN, tensor cores) equals the CPU float32 kernel, forward and gradient",
          "[gpu][cnn][fp16]") {
  if (SkipWithoutGpu()) return;
  struct Shape { int64_t n, c, h, w, m, k, stride, pad, group; };
  for (const Shape& s : {Shape{2, 8, 10, 10, 16, 3, 1, 1, 1}, Shape{1, 16, 9, 7, 8, 3, 2, 1, 2}, Shape{3, 4, 6, 6, 8, 1, 1, 0, 1}}) {
    const int64_t oh = (s.h + 2 * s.pad - s.k) / s.stride + 1, ow = (s.w + 2 * s.pad - s.k) / s.stride + 1;
    const std::vector<int64_t> xs{s.n, s.c, s.h, s.w}, ws{s.m, s.c / s.group, s.k, s.k}, bs{s.m}, ys{s.n, s.m, oh, ow};
    const auto x = RoundedToHalf(RandomVec(Numel(xs), 1)), w = RoundedToHalf(RandomVec(Numel(ws), 2, -0.3f, 0.3f)),
               b = RoundedToHalf(RandomVec(Numel(bs), 3)), dy = RoundedToHalf(RandomVec(Numel(ys), 4));
    const std::vector<caffe2::Argument> args{ArgI("kernel", s.k), ArgI("stride", s.stride), ArgI("pad", s.pad),
                                             ArgI("group", s.group)};
    auto conv = MakeOp("Conv", {"X", "W", "b"}, {"Y"}, args);
    auto grad = MakeOp("ConvGradient", {"X", "W", "dY"}, {"dW", "db", "dX"}, args);
    Workspace cpu, gpu;
    Feed<float>(cpu, "X", xs, x), Feed<float>(cpu, "W", ws, w), Feed<float>(cpu, "b", bs, b);
    Feed<float>(cpu, "dY", ys, dy);
    const Device d = Device::CUDA(0);
    Feed(gpu, "X", HalfOf(xs, x), d), Feed(gpu, "W", HalfOf(ws, w), d), Feed(gpu, "b", HalfOf(bs, b), d);
    Feed(gpu, "dY", HalfOf(ys, dy), d);
    for (const auto& def : {conv, grad}) {
      RunOp(cpu, def);
      RunOp(gpu, OnDevice(def, d));
    }
    for (const char* out : {"Y", "dW", "db", "dX"}) {
      const Tensor ref = Fetch(cpu, out), got = Fetch(gpu, out);
      INFO("shape n" << s.n << " c" << s.c << " m" << s.m << " k" << s.k << " group " << s.group << ", output " << out);
      REQUIRE(got.dtype() == DataType::Float16);
      REQUIRE(got.shape() == ref.shape());
      // One float16 rounding of a float32 sum: 2^-11 relative, with room for the summation order.
      for (int64_t i = 0; i < ref.numel(); ++i) {
        const double r = ref.data<float>()[i], g = HalfToFloat(got.data<Half>()[i]);
        CHECK(std::abs(r - g) <= 3e-3 * std::max(1.0, std::abs(r)));
      }
    }
  }
}

namespace {
// [N, C, H, W] values as [N, H, W, C] (and filters [M, C, kH, kW] as [M, kH, kW, C]).
std::vector<float> ToNhwc(const std::vector<float>& v, int64_t n, int64_t c, int64_t h, int64_t w) {
  std::vector<float> out(v.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t s = 0; s < h * w; ++s) out[(i * h * w + s) * c + ch] = v[(i * c + ch) * h * w + s];
  return out;
}
void CheckHalfClose(const Tensor& got, const std::vector<float>& want, double tol) {
  REQUIRE(got.dtype() == DataType::Float16);
  REQUIRE(static_cast<size_t>(got.numel()) == want.size());
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double r = want[i], g = HalfToFloat(got.data<Half>()[i]);
    INFO("element " << i);
    CHECK(std::abs(r - g) <= tol * std::max(1.0, std::abs(r)));
  }
}
}  // namespace

// The layout pass's form (activation_order NHWC: NCHW filter, transposed by the op and again after the
// filter changes) and Caffe2's order NHWC (filter [M, kH, kW, C]), with the fused Relu and residual,
// against the CPU float32 NCHW convolution on the same half-rounded values, transposed.
TEST_CASE("Conv float16 on CUDA with NHWC activations equals the CPU float32 NCHW kernel", "[gpu][cnn][fp16][channels_last]") {
  if (SkipWithoutGpu()) return;
  const int64_t n = 2, c = 16, h = 9, w = 7, m = 24, k = 3;
  const int64_t oh = h, ow = w;  // pad 1, stride 1
  const std::vector<int64_t> xs{n, c, h, w}, ws{m, c, k, k}, ys{n, m, oh, ow};
  const auto x = RoundedToHalf(RandomVec(Numel(xs), 1)), b = RoundedToHalf(RandomVec(m, 3)),
             r = RoundedToHalf(RandomVec(Numel(ys), 5));
  const std::vector<caffe2::Argument> args{ArgI("kernel", k), ArgI("pad", 1), ArgS("fused_activation", "Relu")};
  auto conv = MakeOp("Conv", {"X", "W", "b", "R"}, {"Y"}, args);
  conv.add_arg()->CopyFrom(ArgI("fused_residual", 1));
  Workspace cpu, gpu;
  Feed<float>(cpu, "X", xs, x), Feed<float>(cpu, "b", {m}, b), Feed<float>(cpu, "R", ys, r);
  const Device d = Device::CUDA(0);
  Feed(gpu, "X", HalfOf({n, h, w, c}, ToNhwc(x, n, c, h, w)), d), Feed(gpu, "b", HalfOf({m}, b), d);
  Feed(gpu, "R", HalfOf({n, oh, ow, m}, ToNhwc(r, n, m, oh, ow)), d);
  for (const char* form : {"activation_order", "order"}) {
    for (unsigned seed : {2u, 7u}) {  // the second filter: the transposed copy must follow the change
      INFO(form << " NHWC, filter seed " << seed);
      const auto f = RoundedToHalf(RandomVec(Numel(ws), seed, -0.3f, 0.3f));
      Feed<float>(cpu, "W", ws, f);
      const bool caffe2_order = std::string(form) == "order";
      Feed(gpu, "W", caffe2_order ? HalfOf({m, k, k, c}, ToNhwc(f, m, c, k, k)) : HalfOf(ws, f), d);
      auto nhwc = conv;
      nhwc.add_arg()->CopyFrom(ArgS(form, "NHWC"));
      RunOp(cpu, conv);
      RunOp(gpu, OnDevice(nhwc, d));
      const Tensor ref = Fetch(cpu, "Y"), got = Fetch(gpu, "Y");
      REQUIRE(got.shape() == std::vector<int64_t>{n, oh, ow, m});
      CheckHalfClose(got, ToNhwc(std::vector<float>(ref.data<float>(), ref.data<float>() + ref.numel()), n, m, oh, ow),
                     3e-3);
    }
  }
}

TEST_CASE("MaxPool and AveragePool float16 on CUDA with order NHWC equal the CPU float32 NCHW pools",
          "[gpu][pool][fp16][channels_last]") {
  if (SkipWithoutGpu()) return;
  const int64_t n = 2, c = 24, h = 9, w = 8;
  const auto x = RoundedToHalf(RandomVec(n * c * h * w, 11));
  for (const char* type : {"MaxPool", "AveragePool"}) {
    for (bool global : {false, true}) {
      INFO(type << (global ? " global" : " 3x3/s2/p1"));
      std::vector<caffe2::Argument> args;
      if (global) args = {ArgI("global_pooling", 1)};
      else args = {ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)};
      Workspace cpu, gpu;
      Feed<float>(cpu, "X", {n, c, h, w}, x);
      Feed(gpu, "X", HalfOf({n, h, w, c}, ToNhwc(x, n, c, h, w)), Device::CUDA(0));
      auto nhwc = args;
      nhwc.push_back(ArgS("order", "NHWC"));
      RunOp(cpu, MakeOp(type, {"X"}, {"Y"}, args));
      RunOp(gpu, OnDevice(MakeOp(type, {"X"}, {"Y"}, nhwc), Device::CUDA(0)));
      const Tensor ref = Fetch(cpu, "Y");
      const int64_t oh = ref.dim(2), ow = ref.dim(3);
      const Tensor got = Fetch(gpu, "Y");
      REQUIRE(got.shape() == std::vector<int64_t>{n, oh, ow, c});
      CheckHalfClose(got, ToNhwc(std::vector<float>(ref.data<float>(), ref.data<float>() + ref.numel()), n, c, oh, ow),
                     std::string(type) == "MaxPool" ? 0.0 : 2e-3);
    }
  }
}
