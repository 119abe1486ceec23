// CPU MaxPool's row kernel (operators/pool_op.cc: column maxima, then each window's maximum, with
// kernel widths 3/s2, 2/s2, 3/s1 compiled as constants) against pool_op.h's per-element
// PoolForwardAt on every geometry class: each specialization and the generic loop, pads that put
// whole windows (rows or columns) on padding, kernels wider than the input, and NaN / infinity
// values (skipped the same way, so the bits are equal).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "operators/pool_op.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

void CheckAgainstReference(int64_t H, int64_t W, int kh, int kw, int sh, int sw, int pt, int pl, int pb, int pr,
                           bool specials) {
  const int64_t N = 2, C = 3;
  std::vector<float> x = RandomVec(N * C * H * W, static_cast<unsigned>(H * 131 + W * 7 + kw));
  if (specials)
    for (size_t i = 0; i < x.size(); i += 5)
      x[i] = i % 3 == 0 ? std::nanf("") : i % 3 == 1 ? -std::numeric_limits<float>::infinity()
                                                      : std::numeric_limits<float>::infinity();
  Workspace ws;
  Feed<float>(ws, "X", {N, C, H, W}, x);
  RunOp(ws, MakeOp("MaxPool", {"X"}, {"Y"},
                   {ArgI("kernel_h", kh), ArgI("kernel_w", kw), ArgI("stride_h", sh), ArgI("stride_w", sw),
                    ArgI("pad_t", pt), ArgI("pad_l", pl), ArgI("pad_b", pb), ArgI("pad_r", pr)}));
  const Tensor Y = Fetch(ws, "Y");
  PoolParams p{N, C, H, W, Y.dim(2), Y.dim(3), kh, kw, sh, sw, pt, pl, false};
  INFO("H " << H << " W " << W << " k " << kh << "x" << kw << " s " << sh << "," << sw << " pads " << pt << ","
            << pl << "," << pb << "," << pr << " specials " << specials);
  for (int64_t i = 0; i < Y.numel(); ++i) {
    const float want = PoolForwardAt<true>(p, i, x.data());
    const float got = Y.data<float>()[i];
    REQUIRE(std::memcmp(&want, &got, sizeof(float)) == 0);
  }
}

}  // namespace

TEST_CASE("CPU MaxPool by rows equals the per-element reference bit for bit", "[ops][pool]") {
  for (bool specials : {false, true}) {
    CheckAgainstReference(112, 112, 3, 3, 2, 2, 1, 1, 1, 1, specials);  // ResNet's pool (3/s2)
    CheckAgainstReference(24, 24, 2, 2, 2, 2, 0, 0, 0, 0, specials);    // LeNet's (2/s2)
    CheckAgainstReference(13, 17, 3, 3, 1, 1, 1, 1, 1, 1, specials);    // 3/s1, odd sizes
    CheckAgainstReference(9, 11, 3, 3, 2, 2, 0, 0, 1, 1, specials);     // tail pads only (ceil mode)
    CheckAgainstReference(10, 10, 5, 4, 3, 3, 2, 1, 2, 3, specials);    // the generic loop
    CheckAgainstReference(6, 7, 4, 4, 1, 2, 3, 3, 3, 3, specials);      // windows on padding only
    CheckAgainstReference(3, 2, 5, 5, 1, 1, 2, 2, 2, 2, specials);      // kernel wider than the input
  }
}

namespace {

// order NHWC (operators/pool_op.cc: full windows of 3x3 and 2x2 unrolled, any channel count, the
// border and other windows in the per-pixel loop) against the NCHW kernels on the same values:
// the same arithmetic in the same order per channel, so the same bits.
void CheckChannelsLast(const std::string& type, int64_t C, int64_t H, int64_t W, int k, int s, int pt, int pl, int pb,
                       int pr, bool specials) {
  const int64_t N = 2;
  std::vector<float> x = RandomVec(N * C * H * W, static_cast<unsigned>(C * 977 + H * 131 + W * 7 + k));
  if (specials)
    for (size_t i = 0; i < x.size(); i += 7)
      x[i] = i % 3 == 0 ? std::nanf("") : i % 3 == 1 ? -std::numeric_limits<float>::infinity()
                                                      : std::numeric_limits<float>::infinity();
  std::vector<float> xh(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < H * W; ++i) xh[(n * H * W + i) * C + c] = x[(n * C + c) * H * W + i];
  Workspace ws;
  Feed<float>(ws, "X", {N, C, H, W}, x);
  Feed<float>(ws, "Xh", {N, H, W, C}, xh);
  std::vector<caffe2::Argument> args{ArgI("kernel", k), ArgI("stride", s),    ArgI("pad_t", pt),
                                     ArgI("pad_l", pl), ArgI("pad_b", pb), ArgI("pad_r", pr)};
  RunOp(ws, MakeOp(type, {"X"}, {"Y"}, args));
  args.push_back(ArgS("order", "NHWC"));
  RunOp(ws, MakeOp(type, {"Xh"}, {"Yh"}, args));
  const Tensor Y = Fetch(ws, "Y"), Yh = Fetch(ws, "Yh");
  const int64_t OH = Y.dim(2), OW = Y.dim(3);
  INFO(type << " C " << C << " H " << H << " W " << W << " k " << k << " s " << s << " pads " << pt << "," << pl << ","
            << pb << "," << pr << " specials " << specials);
  REQUIRE(Yh.shape() == std::vector<int64_t>{N, OH, OW, C});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < OH * OW; ++i) {
        const float want = Y.data<float>()[(n * C + c) * OH * OW + i], got = Yh.data<float>()[(n * OH * OW + i) * C + c];
        REQUIRE(std::memcmp(&want, &got, sizeof(float)) == 0);
      }
}

}  // namespace

TEST_CASE("CPU pooling in NHWC equals NCHW bit for bit at any channel count", "[ops][pool]") {
  for (const std::string type : {"MaxPool", "AveragePool"})
    for (int64_t C : {3, 8, 16, 20, 50})
      for (bool specials : {false, true}) {
        if (specials && type == "AveragePool") continue;  // sums of NaN: no bits to compare
        CheckChannelsLast(type, C, 24, 24, 2, 2, 0, 0, 0, 0, specials);  // LeNet's
        CheckChannelsLast(type, C, 15, 13, 3, 2, 1, 1, 1, 1, specials);  // ResNet's, odd sizes
        CheckChannelsLast(type, C, 9, 11, 3, 2, 0, 0, 1, 1, specials);   // tail pads only
        CheckChannelsLast(type, C, 8, 7, 3, 1, 1, 1, 1, 1, specials);    // stride 1
        CheckChannelsLast(type, C, 7, 9, 2, 1, 1, 0, 0, 1, specials);    // 2x2, stride 1, one-sided pads
        CheckChannelsLast(type, C, 10, 10, 4, 3, 2, 1, 2, 1, specials);  // no full-window kernel
        CheckChannelsLast(type, C, 2, 2, 3, 1, 1, 1, 1, 1, specials);    // no full window at all
      }
}
