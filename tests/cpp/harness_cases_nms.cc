// Harness cases for NonMaxSuppression (operators/nms_op.*). The reference ranks boxes by counting the
// boxes that beat each one (score, then index) instead of sorting, and measures overlap in float64
// from corner coordinates it normalizes itself. The [nms] TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

RefTensors NmsRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  bool center = false;
  for (const auto& a : def.arg())
    if (a.name() == "center_point_box") center = a.i() != 0;
  const RefTensor &B = in[0], &S = in[1];
  const int64_t batches = B.shape[0], n = B.shape[1], classes = S.shape[1];
  const int64_t max_out = static_cast<int64_t>(in[2][0]);
  const double iou_t = in[3][0], score_t = in[4][0];
  auto corners = [&](int64_t b, int64_t i) {
    const double* p = &B.data[(b * n + i) * 4];
    if (center) return std::vector<double>{p[0] - p[2] / 2, p[1] - p[3] / 2, p[0] + p[2] / 2, p[1] + p[3] / 2};
    return std::vector<double>{std::min(p[1], p[3]), std::min(p[0], p[2]), std::max(p[1], p[3]), std::max(p[0], p[2])};
  };
  std::vector<double> rows;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const double* s = &S.data[(b * classes + c) * n];
      std::vector<int64_t> rank_of(n), by_rank(n);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) rank_of[i] += s[j] > s[i] || (s[j] == s[i] && j < i);
        by_rank[rank_of[i]] = i;
      }
      std::vector<int64_t> kept;
      for (int64_t r = 0; r < n && static_cast<int64_t>(kept.size()) < max_out; ++r) {
        const int64_t i = by_rank[r];
        if (!(s[i] > score_t)) continue;
        bool ok = true;
        for (int64_t k : kept) {
          const auto a = corners(b, i), o = corners(b, k);
          const double w = std::max(0.0, std::min(a[2], o[2]) - std::max(a[0], o[0]));
          const double h = std::max(0.0, std::min(a[3], o[3]) - std::max(a[1], o[1]));
          const double inter = w * h, uni = (a[2] - a[0]) * (a[3] - a[1]) + (o[2] - o[0]) * (o[3] - o[1]) - inter;
          ok &= !(uni > 0 && inter / uni > iou_t);
        }
        if (!ok) continue;
        kept.push_back(i);
        rows.insert(rows.end(), {static_cast<double>(b), static_cast<double>(c), static_cast<double>(i)});
      }
    }
  return {RefTensor({static_cast<int64_t>(rows.size() / 3), 3}, rows, DataType::Int64)};
}

}  // namespace

HN_OP_CASES(NonMaxSuppression) {
  const auto nms = [](int center) {
    return Op("NonMaxSuppression", {"B", "S", "M", "I", "T"}, {"Y"}, {Arg("center_point_box", center)});
  };
  std::vector<Case> c = {
      Case("corners, 2 batches 3 classes").Def(nms(0))
          .Inputs({In({2, 12, 4}).Range(0, 4), In({2, 3, 12}).Distinct().Range(0.05, 1), In({}, DataType::Int64).Values({4}),
                   In({}).Values({0.3}), In({}).Values({0.2})}),
      Case("center boxes, ties").Def(nms(1))
          .Inputs({In({1, 6, 4}).Values({1, 1, 2, 2, 1.2, 1, 2, 2, 5, 5, 1, 1, 1, 1, 2, 2, 9, 9, 3, 3, 5.1, 5, 1, 1}),
                   In({1, 1, 6}).Values({0.9, 0.9, 0.8, 0.9, 0.1, 0.8}), In({}, DataType::Int64).Values({10}),
                   In({}).Values({0.4}), In({}).Values({0.0})}),
  };
  for (auto& k : c) k.Ref(NmsRef).NoGrad().CpuOnly();
  return c;
}

TEST_CASE("NonMaxSuppression refuses bad shapes and dtypes, naming op and blob", "[nms]") {
  auto run = [](std::vector<int64_t> b, std::vector<int64_t> s, DataType t) -> std::string {
    Workspace ws;
    Tensor x(b, t), y(s, DataType::Float);
    x.raw_mutable_data(t);
    y.mutable_data<float>();
    *ws.CreateBlob("boxes")->GetMutable<Tensor>() = x;
    *ws.CreateBlob("scores")->GetMutable<Tensor>() = y;
    try {
      CreateOperator(Op("NonMaxSuppression", {"boxes", "scores"}, {"Y"}), &ws)->Run();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(run({1, 3, 5}, {1, 1, 3}, DataType::Float), Catch::Contains("NonMaxSuppression") && Catch::Contains("'boxes'"));
  CHECK_THAT(run({1, 3, 4}, {1, 1, 4}, DataType::Float), Catch::Contains("'scores'"));
  CHECK_THAT(run({1, 3, 4}, {1, 1, 3}, DataType::Double), Catch::Contains("'boxes'") && Catch::Contains("float64"));
  CHECK(run({1, 3, 4}, {1, 1, 3}, DataType::Float).empty());  // no max_output_boxes_per_class: nothing selected
}

}  // namespace harness
}  // namespace hetnet
