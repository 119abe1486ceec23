// Shape, Expand, Where, Gather, ArgMax/ArgMin, Slice: errors on bad input, gradients, schema facts.
// Values are checked against references computed here (the harness cases in
// harness_cases_tensor_ops.cc cover the ordinary values).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/op_schema.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("Gather: negative indices wrap, out-of-range indices are errors", "[ops][tensor][gather]") {
  Workspace ws;
  const auto d = RandomVec(15, 1);
  Feed<float>(ws, "D", {5, 3}, d);
  Feed<int64_t>(ws, "I", {2}, {-1, -5});
  RunOp(ws, MakeOp("Gather", {"D", "I"}, {"Y"}));
  const auto y = FetchVec<float>(ws, "Y");
  REQUIRE(y.size() == 6);
  for (int q = 0; q < 3; ++q) {
    CHECK(y[q] == d[4 * 3 + q]);
    CHECK(y[3 + q] == d[0 * 3 + q]);
  }
  Feed<int64_t>(ws, "Bad", {3}, {0, 5, 1});
  RequireThrowsWith(ws, MakeOp("Gather", {"D", "Bad"}, {"Y"}), {"Gather", "index 5", "position 1", "'Bad'", "size 5"});
  Feed<int32_t>(ws, "Bad32", {2}, {-6, 0});
  RequireThrowsWith(ws, MakeOp("Gather", {"D", "Bad32"}, {"Y"}), {"index -6", "position 0"});
  Feed<float>(ws, "F", {1}, {0.f});
  RequireThrowsWith(ws, MakeOp("Gather", {"D", "F"}, {"Y"}), {"'F'", "float32"});
  RequireThrowsWith(ws, MakeOp("Gather", {"D", "I"}, {"Y"}, {ArgI("axis", 2)}), {"axis 2", "[5, 3]"});
}

TEST_CASE("GatherGradient accumulates repeated indices", "[ops][tensor][gather][grad]") {
  Workspace ws;
  Feed<float>(ws, "D", {3, 2}, RandomVec(6, 1));
  Feed<int32_t>(ws, "I", {4}, {2, 0, 2, -1});
  const auto dy = RandomVec(8, 2);
  Feed<float>(ws, "dY", {4, 2}, dy);
  RunOp(ws, MakeOp("GatherGradient", {"D", "I", "dY"}, {"dD"}));
  const auto dd = FetchVec<float>(ws, "dD");
  REQUIRE(dd.size() == 6);
  const int idx[4] = {2, 0, 2, 2};
  std::vector<double> want(6, 0.0);
  for (int j = 0; j < 4; ++j)
    for (int q = 0; q < 2; ++q) want[idx[j] * 2 + q] += dy[j * 2 + q];
  for (int k = 0; k < 6; ++k) CHECK(dd[k] == Approx(want[k]).margin(1e-6));
  CheckGradient(ws, MakeOp("Gather", {"D", "I"}, {"Y"}), {0});
}

TEST_CASE("Slice: Caffe2's documented example, negative ends, errors", "[ops][tensor][slice]") {
  Workspace ws;
  // The example in Caffe2's Slice schema: starts [0, 1], ends [-1, 3] on a 2x4 matrix.
  Feed<float>(ws, "X", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  RunOp(ws, MakeOp("Slice", {"X"}, {"Y"}, {ArgInts("starts", {0, 1}), ArgInts("ends", {-1, 3})}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 2});
  CHECK(FetchVec<float>(ws, "Y") == std::vector<float>{2, 3, 6, 7});
  // The same through inputs (int32), and -2 as an end means dim - 1.
  Feed<int32_t>(ws, "S", {2}, {1, 0});
  Feed<int32_t>(ws, "E", {2}, {2, -2});
  RunOp(ws, MakeOp("Slice", {"X", "S", "E"}, {"Y2"}));
  CHECK(FetchVec<float>(ws, "Y2") == std::vector<float>{5, 6, 7});
  RequireThrowsWith(ws, MakeOp("Slice", {"X"}, {"Y"}, {ArgInts("starts", {0, 3}), ArgInts("ends", {2, 1})}),
                    {"Slice", "dim 1", "'X'", "start 3", "end 1"});
  RequireThrowsWith(ws, MakeOp("Slice", {"X"}, {"Y"}, {ArgInts("starts", {0}), ArgInts("ends", {1, 2})}),
                    {"differ in length"});
  RequireThrowsWith(ws, MakeOp("Slice", {"X"}, {"Y"}, {ArgInts("starts", {0, 0, 0}), ArgInts("ends", {1, 1, 1})}),
                    {"[2, 4]", "at most one per dim"});
  RequireThrowsWith(ws, MakeOp("Slice", {"X", "S", "E"}, {"Y"}, {ArgInts("starts", {0})}), {"not both"});
  Feed<float>(ws, "Sf", {2}, {0, 0});
  RequireThrowsWith(ws, MakeOp("Slice", {"X", "Sf", "E"}, {"Y"}), {"'Sf'", "float32"});
}

TEST_CASE("Slice gradients, both forms", "[ops][tensor][slice][grad]") {
  Workspace ws;
  Feed<float>(ws, "X", {3, 4, 2}, RandomVec(24, 1));
  CheckGradient(ws, MakeOp("Slice", {"X"}, {"Y"}, {ArgInts("starts", {1, 1}), ArgInts("ends", {-1, 3})}), {0});
  Feed<int64_t>(ws, "S", {2}, {0, 2});
  Feed<int64_t>(ws, "E", {2}, {2, -1});
  CheckGradient(ws, MakeOp("Slice", {"X", "S", "E"}, {"Y"}), {0});
  // The 4-input gradient keeps starts and ends on CPU when the op runs on a GPU; the 2-input form
  // keeps dOutput on the op's device.
  const OpSchema* s = OpSchemaRegistry::Find("SliceGradient");
  REQUIRE(s);
  auto four = s->InferDevices(MakeOp("SliceGradient", {"X", "S", "E", "dY"}, {"dX"}), Device::CUDA(0));
  CHECK(four.first[1] == Device::CPU());
  CHECK(four.first[3] == Device::CUDA(0));
  auto two = s->InferDevices(MakeOp("SliceGradient", {"X", "dY"}, {"dX"}), Device::CUDA(0));
  CHECK(two.first[1] == Device::CUDA(0));
}

TEST_CASE("Expand: numpy rule, errors, gradient", "[ops][tensor][expand]") {
  Workspace ws;
  Feed<float>(ws, "X", {3}, RandomVec(3, 1));
  Feed<int64_t>(ws, "S", {2}, {2, 4});
  RequireThrowsWith(ws, MakeOp("Expand", {"X", "S"}, {"Y"}), {"Expand", "'X'", "[3]", "[2, 4]"});
  Feed<int64_t>(ws, "Neg", {2}, {-1, 3});
  RequireThrowsWith(ws, MakeOp("Expand", {"X", "Neg"}, {"Y"}), {"negative"});
  Feed<float>(ws, "X2", {2, 1, 3}, RandomVec(6, 2));
  Feed<int64_t>(ws, "S2", {4}, {4, 1, 1, 1});
  CheckGradient(ws, MakeOp("Expand", {"X2", "S2"}, {"Y"}), {0});
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{4, 2, 1, 3});
  const OpSchema* s = OpSchemaRegistry::Find("Expand");
  REQUIRE(s);
  CHECK(s->InferDevices(MakeOp("Expand", {"X", "S"}, {"Y"}), Device::CUDA(0)).first[1] == Device::CPU());
}

TEST_CASE("Where: dtype and shape errors", "[ops][tensor][where]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3}, RandomVec(6, 1));
  Feed<float>(ws, "Y", {3}, RandomVec(3, 2));
  Feed<float>(ws, "Cf", {3}, {1, 0, 1});
  RequireThrowsWith(ws, MakeOp("Where", {"Cf", "X", "Y"}, {"Z"}), {"'Cf'", "bool"});
  Tensor c({4}, DataType::Bool);
  for (int i = 0; i < 4; ++i) c.mutable_data<bool>()[i] = i % 2;
  Feed(ws, "C4", c);
  RequireThrowsWith(ws, MakeOp("Where", {"C4", "X", "Y"}, {"Z"}), {"Where", "'C4'", "[4]", "'X'", "[2, 3]", "'Y'"});
  Feed<int32_t>(ws, "Yi", {3}, {1, 2, 3});
  Tensor c3({3}, DataType::Bool);
  for (int i = 0; i < 3; ++i) c3.mutable_data<bool>()[i] = i != 1;
  Feed(ws, "C3", c3);
  RequireThrowsWith(ws, MakeOp("Where", {"C3", "X", "Yi"}, {"Z"}), {"'Yi'", "int32", "float32"});
  try {
    RunOp(ws, MakeOp("Where", {"C3", "X", "Y"}, {"Z"}, {ArgI("broadcast_on_rows", 1)}));
    FAIL("broadcast_on_rows accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnsupported);
  }
  // In place on X, whose shape is the output's: Z = C ? X : Y.
  const auto x = FetchVec<float>(ws, "X"), y = FetchVec<float>(ws, "Y");
  RunOp(ws, MakeOp("Where", {"C3", "X", "Y"}, {"X"}));
  const auto z = FetchVec<float>(ws, "X");
  for (int k = 0; k < 6; ++k) CHECK(z[k] == (k % 3 != 1 ? x[k] : y[k % 3]));
}

TEST_CASE("ArgMax/ArgMin: NaN wins, empty axis refused", "[ops][tensor][arg]") {
  Workspace ws;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Feed<float>(ws, "X", {2, 3}, {1, nan, 5, 2, 9, nan});
  RunOp(ws, MakeOp("ArgMax", {"X"}, {"Y"}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 1});
  CHECK(FetchVec<int64_t>(ws, "Y") == std::vector<int64_t>{1, 2});  // numpy.argmax: the first NaN
  RunOp(ws, MakeOp("ArgMin", {"X"}, {"Y"}, {ArgI("keepdims", 0)}));
  CHECK(FetchVec<int64_t>(ws, "Y") == std::vector<int64_t>{1, 2});
  Feed<float>(ws, "E", {2, 0}, {});
  RequireThrowsWith(ws, MakeOp("ArgMax", {"E"}, {"Y"}), {"ArgMax", "'E'", "[2, 0]", "no entries"});
  RequireThrowsWith(ws, MakeOp("ArgMin", {"X"}, {"Y"}, {ArgI("axis", 2)}), {"axis 2", "[2, 3]"});
}

TEST_CASE("Shape: axes, errors, CPU output, no gradient", "[ops][tensor][shape]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 4}, RandomVec(24, 1));
  RunOp(ws, MakeOp("Shape", {"X"}, {"S"}, {ArgInts("axes", {2, -3})}));
  CHECK(FetchVec<int64_t>(ws, "S") == std::vector<int64_t>{4, 2});
  RequireThrowsWith(ws, MakeOp("Shape", {"X"}, {"S"}, {ArgInts("axes", {3})}), {"axis 3", "'X'", "[2, 3, 4]"});
  const OpSchema* s = OpSchemaRegistry::Find("Shape");
  REQUIRE(s);
  CHECK(s->InferDevices(MakeOp("Shape", {"X"}, {"S"}), Device::CUDA(0)).second[0] == Device::CPU());
  for (const char* t : {"Shape", "ArgMax", "ArgMin", "Where"}) {
    INFO(t);
    CHECK(GradientRegistry::HasNoGradient(t));
  }
  for (const char* t : {"Gather", "Slice", "Expand"}) {
    INFO(t);
    CHECK(GradientRegistry::Find(t) != nullptr);
  }
}

TEST_CASE("Numpy broadcast beyond the plan's dims is refused clearly", "[ops][tensor][numpy]") {
  // Alternating 1s: nothing merges, 10 dims > 8.
  Workspace ws;
  std::vector<int64_t> a, b;
  for (int i = 0; i < 10; ++i) {
    a.push_back(i % 2 ? 1 : 2);
    b.push_back(i % 2 ? 2 : 1);
  }
  Feed<float>(ws, "A", a, RandomVec(32, 1));
  Feed<float>(ws, "B", b, RandomVec(32, 2));
  try {
    RunOp(ws, MakeOp("Add", {"A", "B"}, {"C"}));
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnsupported);
    CHECK(std::string(e.what()).find("at most 8") != std::string::npos);
  }
}

// The per-element index math the CUDA kernels use (BroadcastOffsets for every element, ReducedSum
// per output), run on the host against a reference: the CPU loops walk rows and do not cover it.
#include "device/broadcast.h"
TEST_CASE("Broadcast plans: per-element offsets and reduced sums match a reference", "[ops][tensor][numpy]") {
  const std::vector<std::vector<std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {4}, {3, 1}},  {{2, 1, 4}, {3, 1}, {1}}, {{}, {2, 3}, {2, 1}},
      {{3, 1, 5}, {1, 4, 1}, {5}}, {{2, 1, 3, 1, 2}, {4, 1, 5, 1}, {1, 1, 1}}, {{6}, {1, 6}, {2, 1, 1}},
  };
  for (const auto& shapes : cases) {
    std::vector<int64_t> out;
    REQUIRE(math::NumpyBroadcastShape(shapes, &out));
    const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, shapes);
    const int64_t total = Numel(out);
    std::vector<int64_t> idx(out.size());
    for (int64_t i = 0; i < total; ++i) {
      int64_t r = i;
      for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) { idx[d] = r % out[d]; r /= out[d]; }
      int64_t off[math::kMaxBroadcastInputs];
      math::BroadcastOffsets(ix, i, off);
      for (size_t k = 0; k < shapes.size(); ++k) {
        const auto& s = shapes[k];
        int64_t want = 0;
        for (size_t j = 0; j < s.size(); ++j) want = want * s[j] + (s[j] == 1 ? 0 : idx[out.size() - s.size() + j]);
        INFO("output " << ShapeToString(out) << " input " << ShapeToString(s) << " element " << i);
        CHECK(off[k] == want);
      }
    }
    // Reduced sums back to each input's shape.
    const auto x = RandomVec(total, 3);
    for (const auto& s : shapes) {
      const math::ReduceToShapeIndex red = math::MakeReduceToShapeIndex(out, s);
      std::vector<double> want(Numel(s), 0.0);
      for (int64_t i = 0; i < total; ++i) {
        int64_t r = i;
        for (int d = static_cast<int>(out.size()) - 1; d >= 0; --d) { idx[d] = r % out[d]; r /= out[d]; }
        int64_t o = 0;
        for (size_t j = 0; j < s.size(); ++j) o = o * s[j] + (s[j] == 1 ? 0 : idx[out.size() - s.size() + j]);
        want[o] += x[i];
      }
      for (size_t j = 0; j < want.size(); ++j) {
        INFO("reduce " << ShapeToString(out) << " to " << ShapeToString(s) << " element " << j);
        CHECK(math::ReducedSum(red, x.data(), j) == Approx(want[j]).margin(1e-5));
      }
      std::vector<float> y(want.size());
      CPUContext ctx;
      math::ReduceSumToShape<CPUContext>(red, static_cast<int64_t>(y.size()), x.data(), y.data(), &ctx);
      for (size_t j = 0; j < want.size(); ++j) CHECK(y[j] == Approx(want[j]).margin(1e-5));
    }
  }
}
