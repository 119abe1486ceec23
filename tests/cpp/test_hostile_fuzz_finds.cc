// What the libFuzzer targets found (fuzz/crashes/ keeps each reproducer): every find gets a case
// here, so the fix stays without the fuzz build. docs/bad_input.md lists these rows.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

caffe2::NetDef ConstantFillNet(const std::string& name, float value, int dtype) {
  caffe2::NetDef net;
  net.set_name(name);
  auto* op = AddOp(&net, "ConstantFill", {}, {"y"});
  auto* shape = op->add_arg();
  shape->set_name("shape");
  shape->add_ints(3);
  auto* v = op->add_arg();
  v->set_name("value");
  v->set_f(value);
  auto* dt = op->add_arg();
  dt->set_name("dtype");
  dt->set_i(dtype);
  return net;
}

}  // namespace

TEST_CASE("fuzz find: ConstantFill with a float value outside an integer dtype's range", "[hostile][fuzz]") {
  // fuzz/crashes/constantfill_value_nan.pbtxt: the float value was converted to int64 whatever it
  // was (NaN, 3.4e37: undefined behaviour) even for a float dtype.
  Workspace ws;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (float bad : {nan, 3.4e37f, -std::numeric_limits<float>::infinity()}) {
    INFO(bad);
    try {
      ws.RunNetOnce(ConstantFillNet("fill_int64", bad, caffe2::TensorProto::INT64));
      FAIL("ConstantFill made an int64 tensor from " << bad);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kInvalidArgument);
      CHECK_THAT(e.what(), Catch::Contains("does not fit dtype int64") && Catch::Contains("'y'") &&
                               Catch::Contains("net 'fill_int64'"));
    }
  }
  // A float dtype keeps IEEE values as given.
  ws.RunNetOnce(ConstantFillNet("fill_float_nan", nan, caffe2::TensorProto::FLOAT));
  const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
  REQUIRE(y.numel() == 3);
  CHECK(std::isnan(y.data<float>()[2]));
  ws.RunNetOnce(ConstantFillNet("fill_float_huge", 3.4e37f, caffe2::TensorProto::FLOAT));
  CHECK(ws.GetBlobOrThrow("y").GetTensor().data<float>()[0] == 3.4e37f);
  // In range: truncated toward zero, as before.
  ws.RunNetOnce(ConstantFillNet("fill_int_ok", -2.75f, caffe2::TensorProto::INT32));
  CHECK(ws.GetBlobOrThrow("y").GetTensor().data<int32_t>()[1] == -2);
}

TEST_CASE("fuzz find: a TensorProto that is one chunk is not a whole tensor", "[hostile][fuzz]") {
  // fuzz/crashes/tensorproto_empty_segment_uninitialized.pbtxt: segment [0, 0) of 6 bools decoded
  // into a tensor of 6 uninitialised bools (heap contents leaked; invalid bool values).
  caffe2::TensorProto p;
  ParseProtoFromString("dims: 6 data_type: BOOL segment { begin: 0 end: 0 }", &p, "<test>");
  CHECK_THROWS_WITH(TensorFromProto(p), Catch::Contains("is one chunk [0, 0)") &&
                                            Catch::Contains("of 6 element(s), not a whole tensor"));
  // The whole range as a segment is a whole tensor.
  caffe2::TensorProto whole;
  ParseProtoFromString("dims: 2 data_type: INT32 int32_data: [4, 5] segment { begin: 0 end: 2 }", &whole, "<test>");
  CHECK(TensorFromProto(whole).data<int32_t>()[1] == 5);
  // A chunk read into a fresh tensor (the chunked-load path) leaves the other elements zero.
  caffe2::TensorProto chunk;
  ParseProtoFromString("dims: 4 data_type: FLOAT float_data: [7] segment { begin: 2 end: 3 }", &chunk, "<test>");
  Tensor dst(Device::CPU());
  DeserializeTensorProtoInto(chunk, &dst);
  CHECK(Values(dst) == std::vector<float>{0, 0, 7, 0});
}
