// Harness cases for Col2Im (operators/col2im_op.*): 2-D cases against nested loops over block rows /
// columns and grid rows / columns (the kernel walks flattened indices over any rank), plus a 1-D case
// against the same loops with a unit second dim. The [col2im] TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

std::vector<int64_t> IntsOf(const caffe2::OperatorDef& def, const std::string& name, std::vector<int64_t> dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return dflt;
}

RefTensors Col2ImRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const bool one_d = in[1].numel() == 1;
  const int64_t H = static_cast<int64_t>(in[1][0]), W = one_d ? 1 : static_cast<int64_t>(in[1][1]);
  const int64_t bh = static_cast<int64_t>(in[2][0]), bw = one_d ? 1 : static_cast<int64_t>(in[2][1]);
  const auto s = IntsOf(def, "strides", {1, 1}), d = IntsOf(def, "dilations", {1, 1});
  const auto p = IntsOf(def, "pads", one_d ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{0, 0, 0, 0});
  const int64_t sh = s[0], sw = one_d ? 1 : s[1], dh = d[0], dw = one_d ? 1 : d[1];
  const int64_t pt = p[0], pl = one_d ? 0 : p[1], pb = one_d ? p[1] : p[2], pr = one_d ? 0 : p[3];
  const int64_t gh = (H + pt + pb - dh * (bh - 1) - 1) / sh + 1, gw = (W + pl + pr - dw * (bw - 1) - 1) / sw + 1;
  const int64_t N = X.shape[0], C = X.shape[1] / (bh * bw), L = X.shape[2];
  RefTensor Y(one_d ? std::vector<int64_t>{N, C, H} : std::vector<int64_t>{N, C, H, W}, X.dtype);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < bh; ++i)
        for (int64_t j = 0; j < bw; ++j)
          for (int64_t gy = 0; gy < gh; ++gy)
            for (int64_t gx = 0; gx < gw; ++gx) {
              const int64_t y = gy * sh - pt + i * dh, x = gx * sw - pl + j * dw;
              if (y < 0 || y >= H || x < 0 || x >= W) continue;
              Y[((n * C + c) * H + y) * W + x] += X[((n * C + c) * bh * bw + i * bw + j) * L + gy * gw + gx];
            }
  return {Y};
}

InputSpec Int64s(std::vector<double> v) { return In({static_cast<int64_t>(v.size())}, DataType::Int64).Values(v); }

}  // namespace

HN_OP_CASES(Col2Im) {
  std::vector<Case> c = {
      Case("2x2 blocks on 4x5").Def(Op("Col2Im", {"X", "I", "B"}, {"Y"}))
          .Inputs({In({2, 8, 12}), Int64s({4, 5}), Int64s({2, 2})}),
      Case("strides, dilations, pads").Def(Op("Col2Im", {"X", "I", "B"}, {"Y"}, {Ints("strides", {2, 1}),
                                                                               Ints("dilations", {1, 2}), Ints("pads", {1, 0, 1, 2})}))
          .Inputs({In({1, 6, 12}, DataType::Double), Int64s({5, 4}), Int64s({3, 2})}),
      Case("1-D").Def(Op("Col2Im", {"X", "I", "B"}, {"Y"}, {Ints("strides", {2}), Ints("pads", {1, 1})}))
          .Inputs({In({1, 6, 4}), Int64s({7}), Int64s({3})}),
  };
  for (auto& k : c) k.Ref(Col2ImRef).NoGrad().CpuOnly();
  return c;
}

TEST_CASE("Col2Im refuses mismatched columns and shapes, naming op and blob", "[col2im]") {
  auto run = [](std::vector<int64_t> x, std::vector<int64_t> image, std::vector<int64_t> block) -> std::string {
    Workspace ws;
    Tensor X(x, DataType::Float), I({static_cast<int64_t>(image.size())}, DataType::Int64),
        B({static_cast<int64_t>(block.size())}, DataType::Int64);
    X.mutable_data<float>();
    std::copy(image.begin(), image.end(), I.mutable_data<int64_t>());
    std::copy(block.begin(), block.end(), B.mutable_data<int64_t>());
    *ws.CreateBlob("cols")->GetMutable<Tensor>() = X;
    *ws.CreateBlob("img")->GetMutable<Tensor>() = I;
    *ws.CreateBlob("blk")->GetMutable<Tensor>() = B;
    try {
      CreateOperator(Op("Col2Im", {"cols", "img", "blk"}, {"Y"}), &ws)->Run();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(run({1, 4, 11}, {4, 5}, {2, 2}), Catch::Contains("Col2Im") && Catch::Contains("'cols'"));
  CHECK_THAT(run({1, 4, 12}, {4, 5}, {2}), Catch::Contains("'blk'"));
  CHECK_THAT(run({1, 4, 12}, {4, 5}, {2, -2}), Catch::Contains("out of range"));
  CHECK_THAT(run({1, 4, 12}, {4, 5}, {9, 2}), Catch::Contains("larger than padded dim"));
  CHECK(run({1, 4, 12}, {4, 5}, {2, 2}).empty());
}

}  // namespace harness
}  // namespace hetnet
