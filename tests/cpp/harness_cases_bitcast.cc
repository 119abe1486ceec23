// Harness cases for BitCast (operators/bitcast_op.*): the reference reinterprets each value's bytes
// with memcpy between the C++ types (float <-> int32, double -> int64, int8 -> uint8). The [bitcast]
// TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

template <typename From, typename To>
RefTensors Reinterpret(const caffe2::OperatorDef&, const RefTensors& in) {
  RefTensor Y(in[0].shape, DataTypeOf<To>::value);
  for (int64_t k = 0; k < Y.numel(); ++k) {
    const From f = static_cast<From>(in[0][k]);
    To t;
    std::memcpy(&t, &f, sizeof t);
    Y[k] = static_cast<double>(t);
  }
  return {Y};
}

caffe2::OperatorDef BitCast(DataType to) { return Op("BitCast", {"X"}, {"Y"}, {Arg("to", static_cast<int64_t>(to))}); }

}  // namespace

HN_OP_CASES(BitCast) {
  std::vector<Case> c = {
      Case("float32 -> int32").Def(BitCast(DataType::Int32)).Inputs({In({3, 4}).Range(-100, 100)})
          .Ref(Reinterpret<float, int32_t>),
      Case("int32 -> float32").Def(BitCast(DataType::Float))
          .Inputs({In({5}, DataType::Int32).Values({0, 1065353216, -1082130432, 1078530011, 8388608})})
          .Ref(Reinterpret<int32_t, float>),
      Case("float64 -> int64").Def(BitCast(DataType::Int64)).Inputs({In({2, 2}, DataType::Double).Values({0.5, -2, 1e300, 3})})
          .Ref(Reinterpret<double, int64_t>),
      Case("int8 -> uint8").Def(BitCast(DataType::UInt8)).Inputs({In({6}, DataType::Int8).Range(-128, 127)})
          .Ref(Reinterpret<int8_t, uint8_t>),
  };
  for (auto& k : c) k.NoGrad().CpuOnly().NoShapeCheck();
  return c;
}

TEST_CASE("BitCast refuses other widths and bad target dtypes, naming op and blob", "[bitcast]") {
  using optest::RunError;
  Tensor x({2}, DataType::Float);
  std::memset(x.raw_mutable_data(DataType::Float), 0, x.nbytes());
  CHECK_THAT(RunError(BitCast(DataType::Int64), {x}), Catch::Contains("BitCast") && Catch::Contains("'X'") &&
                                                          Catch::Contains("bit width"));
  CHECK_THAT(RunError(BitCast(DataType::String), {x}), Catch::Contains("arg to"));
  CHECK_THAT(RunError(Op("BitCast", {"X"}, {"Y"}, {Arg("to", 77)}), {x}), Catch::Contains("arg to (77)"));
}

}  // namespace harness
}  // namespace hetnet
