// LabelCrossEntropy, CrossEntropy, AveragedLoss, Accuracy: float64 references, label checks, zero sizes,
// shape inference, gradients by finite differences (Accuracy has none); [gpu] CPU-vs-GPU.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}
}  // namespace

TEST_CASE("LabelCrossEntropy matches -log(max(p, 1e-20)) at odd sizes", "[ops][cross_entropy]") {
  for (auto [N, D] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 5}, {33, 17}, {0, 4}}) {
    Workspace ws;
    auto x = RandomVec(N * D, 1, 0.f, 1.f);
    if (N > 1) x[D] = 0.f;  // the threshold
    std::vector<int32_t> label(N);
    for (int64_t i = 0; i < N; ++i) label[i] = static_cast<int32_t>((i * 3) % D);
    if (N > 1) label[1] = 0;
    Feed<float>(ws, "X", {N, D}, x);
    Feed<int32_t>(ws, "L", {N}, label);
    auto def = MakeOp("LabelCrossEntropy", {"X", "L"}, {"Y"});
    RunOp(ws, def);
    std::vector<double> want;
    for (int64_t i = 0; i < N; ++i) want.push_back(-std::log(std::max<double>(x[i * D + label[i]], 1e-20)));
    CheckClose(FetchVec<float>(ws, "Y"), want);
    CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{N});
    CheckShapeInference(ws, def);
  }
  SECTION("1-D X is one row; [N, 1] labels") {
    Workspace ws;
    Feed<float>(ws, "X", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
    Feed<int32_t>(ws, "L", {1}, {2});
    RunOp(ws, MakeOp("LabelCrossEntropy", {"X", "L"}, {"Y"}));
    CheckClose(FetchVec<float>(ws, "Y"), {-std::log(0.3)});
    Feed<float>(ws, "X2", {2, 2}, {0.5f, 0.5f, 0.25f, 0.75f});
    Feed<int32_t>(ws, "L2", {2, 1}, {0, 1});
    RunOp(ws, MakeOp("LabelCrossEntropy", {"X2", "L2"}, {"Y"}));
    CheckClose(FetchVec<float>(ws, "Y"), {-std::log(0.5), -std::log(0.75)});
  }
}

TEST_CASE("LabelCrossEntropy errors name the blobs", "[ops][cross_entropy]") {
  Workspace ws;
  Feed<float>(ws, "X", {3, 4}, RandomVec(12, 1, 0, 1));
  Feed<int32_t>(ws, "Lbad", {3}, {0, 4, 1});
  RequireThrowsWith(ws, MakeOp("LabelCrossEntropy", {"X", "Lbad"}, {"Y"}), {"'Lbad'", "label 4", "4 classes"});
  Feed<int32_t>(ws, "Lneg", {3}, {0, -1, 1});
  RequireThrowsWith(ws, MakeOp("LabelCrossEntropy", {"X", "Lneg"}, {"Y"}), {"'Lneg'", "-1"});
  Feed<int32_t>(ws, "L2", {2}, {0, 1});
  RequireThrowsWith(ws, MakeOp("LabelCrossEntropy", {"X", "L2"}, {"Y"}), {"'L2'", "[2]", "3 labels"});
  Feed<float>(ws, "Lf", {3}, {0, 1, 2});
  RequireThrowsWith(ws, MakeOp("LabelCrossEntropy", {"X", "Lf"}, {"Y"}), {"'Lf'", "float32", "int32"});
}

TEST_CASE("LabelCrossEntropy gradient", "[ops][cross_entropy]") {
  Workspace ws;
  Feed<float>(ws, "X", {5, 4}, RandomVec(20, 2, 0.2f, 1.f));
  Feed<int32_t>(ws, "L", {5}, {0, 3, 1, 2, 3});
  CheckGradient(ws, MakeOp("LabelCrossEntropy", {"X", "L"}, {"Y"}), {0}, 0, 1e-3f);
}

TEST_CASE("CrossEntropy with soft labels: reference, errors, gradient", "[ops][cross_entropy]") {
  for (auto [N, D] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 5}, {0, 3}}) {
    Workspace ws;
    auto x = RandomVec(N * D, 1, 0.f, 1.f), l = RandomVec(N * D, 2, 0.f, 1.f);
    Feed<float>(ws, "X", {N, D}, x);
    Feed<float>(ws, "L", {N, D}, l);
    auto def = MakeOp("CrossEntropy", {"X", "L"}, {"Y"});
    RunOp(ws, def);
    std::vector<double> want(N, 0.0);
    for (int64_t i = 0; i < N * D; ++i) want[i / D] -= l[i] * std::log(std::max<double>(x[i], 1e-20));
    CheckClose(FetchVec<float>(ws, "Y"), want);
    CheckShapeInference(ws, def);
  }
  Workspace ws;
  Feed<float>(ws, "X", {3, 4}, RandomVec(12, 3, 0.2f, 1.f));
  Feed<float>(ws, "L", {3, 4}, RandomVec(12, 4, 0.f, 1.f));
  CheckGradient(ws, MakeOp("CrossEntropy", {"X", "L"}, {"Y"}), {0}, 0, 1e-3f);
  Feed<float>(ws, "Lbad", {3, 5}, RandomVec(15, 4));
  RequireThrowsWith(ws, MakeOp("CrossEntropy", {"X", "Lbad"}, {"Y"}), {"'Lbad'", "[3, 5]", "[3, 4]"});
  Feed<int32_t>(ws, "Li", {3, 4}, std::vector<int32_t>(12, 0));
  RequireThrowsWith(ws, MakeOp("CrossEntropy", {"X", "Li"}, {"Y"}), {"'Li'", "int32"});
}

TEST_CASE("AveragedLoss is the mean as a 0-d tensor; gradient", "[ops][cross_entropy]") {
  Workspace ws;
  auto x = RandomVec(3 * 5 * 7, 1);
  Feed<float>(ws, "X", {3, 5, 7}, x);
  auto def = MakeOp("AveragedLoss", {"X"}, {"Y"});
  RunOp(ws, def);
  double s = 0;
  for (float v : x) s += v;
  CHECK(Fetch(ws, "Y").shape().empty());
  CheckClose(FetchVec<float>(ws, "Y"), {s / x.size()});
  CheckShapeInference(ws, def);
  CheckGradient(ws, def, {0});
  Feed<float>(ws, "E", {0, 3}, {});
  RunOp(ws, MakeOp("AveragedLoss", {"E"}, {"Y"}));
  CHECK(FetchVec<float>(ws, "Y") == std::vector<float>{0.f});
  Feed<int64_t>(ws, "Xi", {2}, {1, 2});
  RequireThrowsWith(ws, MakeOp("AveragedLoss", {"Xi"}, {"Y"}), {"'Xi'", "int64"});
}

TEST_CASE("Accuracy: top_k with Caffe2's tie rule; no gradient; errors", "[ops][accuracy]") {
  Workspace ws;
  // Row 0: label 2 is the max -> top1. Row 1: label 0 ties with index 1... index 0 ranks first -> top1.
  // Row 2: label 1 ties with index 0 (smaller index ranks above) -> top2 only. Row 3: label 3 is 3rd -> top3.
  Feed<float>(ws, "P", {4, 4}, {0.1f, 0.2f, 0.6f, 0.1f,  //
                                0.4f, 0.4f, 0.1f, 0.1f,  //
                                0.4f, 0.4f, 0.1f, 0.1f,  //
                                0.3f, 0.4f, 0.05f, 0.25f});
  Feed<int32_t>(ws, "L", {4}, {2, 0, 1, 3});
  auto def = MakeOp("Accuracy", {"P", "L"}, {"A"});
  RunOp(ws, def);
  CHECK(Fetch(ws, "A").shape().empty());
  CHECK(FetchVec<float>(ws, "A")[0] == Approx(0.5));
  CheckShapeInference(ws, def);
  RunOp(ws, MakeOp("Accuracy", {"P", "L"}, {"A"}, {ArgI("top_k", 2)}));
  CHECK(FetchVec<float>(ws, "A")[0] == Approx(0.75));
  RunOp(ws, MakeOp("Accuracy", {"P", "L"}, {"A"}, {ArgI("top_k", 3)}));
  CHECK(FetchVec<float>(ws, "A")[0] == Approx(1.0));
  CHECK(GradientRegistry::HasNoGradient("Accuracy"));
  CHECK(GradientRegistry::Find("Accuracy") == nullptr);
  RequireThrowsWith(ws, MakeOp("Accuracy", {"P", "L"}, {"A"}, {ArgI("top_k", 5)}), {"top_k 5", "'P'"});
  Feed<int32_t>(ws, "Lbad", {4}, {2, 0, 9, 3});
  RequireThrowsWith(ws, MakeOp("Accuracy", {"P", "Lbad"}, {"A"}), {"'Lbad'", "label 9"});
  Feed<int32_t>(ws, "L3", {3}, {0, 0, 0});
  RequireThrowsWith(ws, MakeOp("Accuracy", {"P", "L3"}, {"A"}), {"'L3'", "[3]"});
  Feed<float>(ws, "P3", {2, 2, 2}, RandomVec(8, 1));
  RequireThrowsWith(ws, MakeOp("Accuracy", {"P3", "L3"}, {"A"}), {"'P3'", "2-D"});
  Feed<float>(ws, "P0", {0, 3}, {});
  Feed<int32_t>(ws, "L0", {0}, {});
  RunOp(ws, MakeOp("Accuracy", {"P0", "L0"}, {"A"}));
  CHECK(FetchVec<float>(ws, "A")[0] == 0.f);
}

TEST_CASE("Losses and Accuracy: GPU equals CPU", "[gpu][cross_entropy][accuracy]") {
  if (SkipWithoutGpu()) return;
  Tensor x = HostTensor<float>({33, 17}, RandomVec(33 * 17, 1, 0.f, 1.f));
  std::vector<int32_t> lab(33);
  for (int i = 0; i < 33; ++i) lab[i] = (i * 7) % 17;
  Tensor l = HostTensor<int32_t>({33}, lab);
  Tensor soft = HostTensor<float>({33, 17}, RandomVec(33 * 17, 2, 0.f, 1.f));
  Tensor dy = HostTensor<float>({33}, RandomVec(33, 3));
  CompareCpuGpu(MakeOp("LabelCrossEntropy", {"X", "L"}, {"Y"}), {{"X", x}, {"L", l}});
  CompareCpuGpu(MakeOp("LabelCrossEntropyGradient", {"X", "L", "dY"}, {"dX"}), {{"X", x}, {"L", l}, {"dY", dy}});
  CompareCpuGpu(MakeOp("CrossEntropy", {"X", "S"}, {"Y"}), {{"X", x}, {"S", soft}});
  CompareCpuGpu(MakeOp("CrossEntropyGradient", {"X", "S", "dY"}, {"dX"}), {{"X", x}, {"S", soft}, {"dY", dy}});
  CompareCpuGpu(MakeOp("AveragedLoss", {"X"}, {"Y"}), {{"X", x}});
  CompareCpuGpu(MakeOp("AveragedLossGradient", {"X", "g"}, {"dX"}), {{"X", x}, {"g", HostTensor<float>({}, {0.7f})}});
  for (int k : {1, 3, 17}) CompareCpuGpu(MakeOp("Accuracy", {"X", "L"}, {"A"}, {ArgI("top_k", k)}), {{"X", x}, {"L", l}});
}
