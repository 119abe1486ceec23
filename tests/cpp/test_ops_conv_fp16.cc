// Conv and ConvGradient on float16 tensors with the CUDNN engine (tensor-core math, float32
// accumulation) against the CPU float32 kernels run on the same half-rounded values. The CPU Conv
// has no float16 kernel, so the reference sees exactly the values the GPU reads.
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
