// Harness cases for OnnxSlice, OnnxSqueeze, OnnxUnsqueeze (operators/onnx_shape_ops.*) and OnnxPad
// (operators/onnx_pad_op.*, reference: numpy.pad's modes as step-by-step reflections). The Slice
// reference walks Python's range(start, end, step) per axis after ONNX's clamping, written from the
// ONNX definition; the [onnx_shape] TEST_CASE checks refusals (step 0, bad axes, dims that are not 1).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

const DataType i64 = DataType::Int64, i32 = DataType::Int32;

// Python's slice(start, end, step).indices(d), then the picked positions.
std::vector<int64_t> Picks(int64_t start, int64_t end, int64_t step, int64_t d) {
  auto fix = [&](int64_t v) {
    if (v < 0) v = std::max(v, -d - 1) + d;
    return step > 0 ? std::min(std::max<int64_t>(v, 0), d) : std::min(std::max<int64_t>(v, -1), d - 1);
  };
  std::vector<int64_t> p;
  for (int64_t i = fix(start), e = fix(end); step > 0 ? i < e : i > e; i += step) {
    p.push_back(i);
    // The next step passes e (|step| as unsigned: -INT64_MIN does not fit in int64).
    const uint64_t mag = step > 0 ? static_cast<uint64_t>(step) : static_cast<uint64_t>(-(step + 1)) + 1;
    if (static_cast<uint64_t>(step > 0 ? e - i : i - e) <= mag) break;
  }
  return p;
}

RefTensors SliceRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const RefTensor& X = in[0];
  const int r = static_cast<int>(X.shape.size());
  std::vector<std::vector<int64_t>> pick(r);
  for (int d = 0; d < r; ++d)
    for (int64_t k = 0; k < X.shape[d]; ++k) pick[d].push_back(k);
  for (int64_t j = 0; j < in[1].numel(); ++j) {
    int64_t a = in.size() > 3 ? static_cast<int64_t>(in[3][j]) : j;
    if (a < 0) a += r;
    const int64_t step = in.size() > 4 ? static_cast<int64_t>(in[4][j]) : 1;
    pick[a] = Picks(static_cast<int64_t>(in[1][j]), static_cast<int64_t>(in[2][j]), step, X.shape[a]);
  }
  std::vector<int64_t> shape;
  for (const auto& p : pick) shape.push_back(static_cast<int64_t>(p.size()));
  RefTensor Y(shape, X.dtype);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    int64_t rem = k, off = 0, stride = 1;
    for (int d = r - 1; d >= 0; --d) {
      off += pick[d][rem % shape[d]] * stride;
      rem /= shape[d];
      stride *= X.shape[d];
    }
    Y[k] = X[off];
  }
  return {Y};
}

RefFn Reshaped(std::vector<int64_t> shape) {
  return [shape](const caffe2::OperatorDef&, const RefTensors& in) {
    return RefTensors{RefTensor(shape, in[0].data, in[0].dtype)};
  };
}

InputSpec Ints(std::vector<double> v, DataType t = i64) { return In({static_cast<int64_t>(v.size())}, t).Values(v); }

// numpy.pad's index rule per mode, written as reflections / clamps of an out-of-range index.
int64_t Source(const std::string& mode, int64_t i, int64_t n) {
  if (mode == "edge") return std::min(std::max<int64_t>(i, 0), n - 1);
  if (mode == "wrap") {
    while (i < 0) i += n;
    return i % n;
  }
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;  // reflect, step by step
  return i;
}

RefTensors PadRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  std::string mode = "constant";
  for (const auto& a : def.arg())
    if (a.name() == "mode") mode = a.s();
  const RefTensor& X = in[0];
  const int r = static_cast<int>(X.shape.size());
  std::vector<int64_t> axes;
  for (int64_t j = 0; j < (in.size() > 3 ? in[3].numel() : r); ++j)
    axes.push_back(in.size() > 3 ? (static_cast<int64_t>(in[3][j]) + r) % r : j);
  const int64_t n = static_cast<int64_t>(axes.size());
  std::vector<int64_t> b(r, 0), shape = X.shape;
  for (int64_t j = 0; j < n; ++j) {
    b[axes[j]] = static_cast<int64_t>(in[1][j]);
    shape[axes[j]] += static_cast<int64_t>(in[1][j] + in[1][j + n]);
  }
  RefTensor Y(shape, X.dtype);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    int64_t rem = k, off = 0, stride = 1;
    bool constant = false;
    for (int d = r - 1; d >= 0; --d) {
      int64_t i = rem % shape[d] - b[d];
      rem /= shape[d];
      if (i < 0 || i >= X.shape[d]) {
        if (mode == "constant") constant = true;
        else if (X.shape[d] == 1) i = 0;
        else i = Source(mode, i, X.shape[d]);
      }
      off += i * stride;
      stride *= X.shape[d];
    }
    Y[k] = constant ? (in.size() > 2 ? in[2][0] : 0.0) : X[off];
  }
  return {Y};
}

}  // namespace

HN_OP_CASES(OnnxShapeOps) {
  std::vector<Case> c = {
      Case("default axes").Def(Op("OnnxSlice", {"X", "S", "E"}, {"Y"}))
          .Inputs({In({5, 4}), Ints({1, -3}), Ints({4, 100})}).Ref(SliceRef),
      Case("axes and steps 2, -1").Def(Op("OnnxSlice", {"X", "S", "E", "A", "P"}, {"Y"}))
          .Inputs({In({4, 6, 3}), Ints({0, -1}), Ints({5, -100}), Ints({1, 2}), Ints({2, -1})}).Ref(SliceRef),
      Case("negative axis, step -2, int32 indices").Def(Op("OnnxSlice", {"X", "S", "E", "A", "P"}, {"Y"}))
          .Inputs({In({3, 7}, i32).Range(-9, 9), Ints({100}, i32), Ints({0}, i32), Ints({-1}, i32), Ints({-2}, i32)})
          .Ref(SliceRef),
      Case("empty range").Def(Op("OnnxSlice", {"X", "S", "E", "A"}, {"Y"}))
          .Inputs({In({3, 4}), Ints({3}), Ints({1}), Ints({1})}).Ref(SliceRef),
      Case("huge step").Def(Op("OnnxSlice", {"X", "S", "E", "A", "P"}, {"Y"}))
          .Inputs({In({6}), Ints({-1}), Ints({-9223372036854775807.0}), Ints({0}), Ints({-9223372036854775807.0})})
          .Ref(SliceRef),
      Case("axes [1, -1]").Def(Op("OnnxSqueeze", {"X", "A"}, {"Y"}))
          .Inputs({In({2, 1, 3, 1}), Ints({1, -1})}).Ref(Reshaped({2, 3})),
      Case("every size-1 dim").Def(Op("OnnxSqueeze", {"X"}, {"Y"})).Inputs({In({1, 3, 1})}).Ref(Reshaped({3})),
      Case("axes [0, -1] of rank 4").Def(Op("OnnxUnsqueeze", {"X", "A"}, {"Y"}))
          .Inputs({In({2, 3}), Ints({-1, 0})}).Ref(Reshaped({1, 2, 3, 1})),
      Case("middle, int64 data").Def(Op("OnnxUnsqueeze", {"X", "A"}, {"Y"}))
          .Inputs({In({2, 3}, i64).Range(-5, 5), Ints({1, 2}, i32)}).Ref(Reshaped({2, 1, 1, 3})),
  };
  for (const char* mode : {"constant", "reflect", "edge", "wrap"}) {
    caffe2::OperatorDef d = Op("OnnxPad", {"X", "P", "V"}, {"Y"}, {Arg("mode", mode)});
    c.push_back(Case(std::string(mode) + " 3-D, crop and grow").Def(d)
                    .Inputs({In({2, 3, 4}), Ints({1, -1, 5, 0, 2, -2}), In({}).Values({2.5})}).Ref(PadRef));
    c.push_back(Case(std::string(mode) + " axes [-1], int32").Def(Op("OnnxPad", {"X", "P", "V", "A"}, {"Y"}, {Arg("mode", mode)}))
                    .Inputs({In({2, 3}, i32).Range(-9, 9), Ints({3, 1}, i32), In({}, i32).Values({7}), Ints({-1})})
                    .Ref(PadRef));
  }
  c.push_back(Case("reflect size-1 dim").Def(Op("OnnxPad", {"X", "P"}, {"Y"}, {Arg("mode", "reflect")}))
                  .Inputs({In({1, 3}), Ints({2, 0, 1, 1})}).Ref(PadRef));
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

namespace {
Tensor Int64s(std::vector<int64_t> v) {
  Tensor t({static_cast<int64_t>(v.size())}, DataType::Int64);
  std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
  return t;
}
}  // namespace

TEST_CASE("ONNX shape ops refuse bad steps, axes and dims, naming op and blob", "[onnx_shape]") {
  Tensor x({2, 3}, DataType::Float);
  x.mutable_data<float>();
  CHECK_THAT(optest::RunError(Op("OnnxSlice", {"x", "s", "e", "a", "st"}, {"y"}), {x, Int64s({0}), Int64s({2}), Int64s({1}), Int64s({0})}),
             Catch::Contains("OnnxSlice") && Catch::Contains("step 0") && Catch::Contains("'st'"));
  CHECK_THAT(optest::RunError(Op("OnnxSlice", {"x", "s", "e", "ax"}, {"y"}), {x, Int64s({0}), Int64s({2}), Int64s({2})}),
             Catch::Contains("axis 2") && Catch::Contains("'ax'"));
  CHECK_THAT(optest::RunError(Op("OnnxSlice", {"x", "s", "e", "ax"}, {"y"}), {x, Int64s({0, 0}), Int64s({2, 2}), Int64s({1, -1})}),
             Catch::Contains("repeated"));
  CHECK_THAT(optest::RunError(Op("OnnxSlice", {"x", "s", "e"}, {"y"}), {x, Int64s({0, 0}), Int64s({2})}),
             Catch::Contains("one entry per sliced axis"));
  CHECK_THAT(optest::RunError(Op("OnnxSqueeze", {"x", "ax"}, {"y"}), {x, Int64s({1})}),
             Catch::Contains("OnnxSqueeze") && Catch::Contains("not 1") && Catch::Contains("'x'"));
  CHECK_THAT(optest::RunError(Op("OnnxUnsqueeze", {"x", "ax"}, {"y"}), {x, Int64s({3})}),
             Catch::Contains("OnnxUnsqueeze") && Catch::Contains("out of range") && Catch::Contains("'ax'"));
  Tensor f({1}, DataType::Float);
  f.mutable_data<float>()[0] = 0;
  CHECK_THAT(optest::RunError(Op("OnnxUnsqueeze", {"x", "fa"}, {"y"}), {x, f}),
             Catch::Contains("'fa'") && Catch::Contains("int32 or int64"));
  CHECK_THAT(optest::RunError(Op("OnnxPad", {"x", "p"}, {"y"}), {x, Int64s({0, 0, 0})}),
             Catch::Contains("OnnxPad") && Catch::Contains("'p'") && Catch::Contains("2 per padded dim"));
  CHECK_THAT(optest::RunError(Op("OnnxPad", {"x", "p"}, {"y"}), {x, Int64s({0, -3, 0, -1})}),
             Catch::Contains("OnnxPad") && Catch::Contains("out of range"));
  CHECK_THAT(optest::RunError(Op("OnnxPad", {"x", "p"}, {"y"}), {x, Int64s({0, int64_t{1} << 39, 0, int64_t{1} << 39})}),
             !Catch::Equals(""));
  CHECK_THAT(optest::RunError(Op("OnnxPad", {"x", "p", "v", "a"}, {"y"}), {x, Int64s({1, 1, 1, 1}), f, Int64s({1, -1})}),
             Catch::Contains("repeated"));
  Tensor empty({0, 3}, DataType::Float);
  empty.mutable_data<float>();
  CHECK_THAT(optest::RunError(Op("OnnxPad", {"e", "p"}, {"y"}, {Arg("mode", "reflect")}), {empty, Int64s({1, 0, 0, 0})}),
             Catch::Contains("cannot pad empty dim") && Catch::Contains("'e'"));
}

}  // namespace harness
}  // namespace hetnet
