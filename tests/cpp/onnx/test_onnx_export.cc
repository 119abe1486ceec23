// ONNX export (onnx/onnx_export.h) from C++: round trips export -> import (onnx/onnx_import.h) ->
// run give the original net's outputs, and refusals come as one error listing every form. The
// onnxruntime comparisons are in tests/python/test_onnx_export.py; this side names no ONNX type.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "core/error.h"
#include "core/workspace.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace {

using onnxio::OnnxExportValueInfo;
using optest::ArgI;
using optest::ArgInts;
using optest::ArgS;
using optest::MakeOp;

caffe2::NetDef Net(const std::string& name, std::vector<caffe2::OperatorDef> ops, std::vector<std::string> in,
                   std::vector<std::string> out) {
  caffe2::NetDef net;
  net.set_name(name);
  for (auto& op : ops) *net.add_op() = op;
  for (auto& i : in) net.add_external_input(i);
  for (auto& o : out) net.add_external_output(o);
  return net;
}

// A Caffe2 fill (the exporter runs the init net, so fills need no GivenTensorFill).
caffe2::OperatorDef Fill(const std::string& type, const std::string& out, std::vector<int64_t> shape) {
  auto op = MakeOp(type, {}, {out}, {ArgInts("shape", shape)});
  // Seeded: the exporter runs the init net once and the comparison runs it again.
  op.mutable_device_option()->set_random_seed(static_cast<uint32_t>(std::hash<std::string>()(out)));
  if (type == "UniformFill") {
    *op.add_arg() = optest::ArgF("min", 0.5f);
    *op.add_arg() = optest::ArgF("max", 1.5f);
  }
  return op;
}

Tensor RandomInput(const std::vector<int64_t>& shape, unsigned seed) {
  Tensor t(shape, DataType::Float);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = dist(gen);
  return t;
}

// Runs init then predict with `x` fed as `input`; returns the external outputs (copies).
std::vector<Tensor> RunNets(const caffe2::NetDef& init, const caffe2::NetDef& predict, const std::string& input,
                            const Tensor& x) {
  Workspace ws;
  ws.RunNetOnce(init);
  ws.CreateBlob(input)->GetMutableTensor(Device::CPU())->CopyFrom(x);
  ws.RunNetOnce(predict);
  std::vector<Tensor> out;
  for (const auto& name : predict.external_output()) {
    Tensor t;
    t.CopyFrom(ws.GetBlobOrThrow(name).GetTensor());
    out.push_back(std::move(t));
  }
  return out;
}

void RequireRoundTrip(const caffe2::NetDef& init, const caffe2::NetDef& predict, const std::vector<int64_t>& shape,
                      int64_t opset) {
  onnxio::OnnxExportOptions options;
  options.opset = opset;
  const std::string model = onnxio::ExportOnnxModel(predict, init, {{"data", OnnxExportValueInfo{1, shape}}}, options);
  const onnxio::ImportedOnnxModel imported = onnxio::ImportOnnxModel(model);
  REQUIRE(imported.opsets.at("") == opset);
  REQUIRE(imported.inputs.size() == 1);
  CHECK(imported.inputs[0].dims == shape);
  const Tensor x = RandomInput(shape, 7);
  const auto want = RunNets(init, predict, "data", x);
  const auto got = RunNets(imported.init_net, imported.predict_net, "data", x);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("output " << predict.external_output(i));
    REQUIRE(got[i].shape() == want[i].shape());
    REQUIRE(got[i].dtype() == DataType::Float);
    const float* g = got[i].data<float>();
    const float* w = want[i].data<float>();
    for (int64_t k = 0; k < want[i].numel(); ++k) REQUIRE(std::fabs(g[k] - w[k]) <= 1e-5f + 1e-5f * std::fabs(w[k]));
  }
}

TEST_CASE("ONNX export round trip: LeNet-like CNN with random weights", "[onnx][export]") {
  const caffe2::NetDef init = Net("init",
                                  {Fill("XavierFill", "w1", {4, 1, 5, 5}), Fill("ConstantFill", "b1", {4}),
                                   Fill("XavierFill", "w2", {10, 4 * 6 * 6}), Fill("UniformFill", "b2", {10})},
                                  {}, {});
  const caffe2::NetDef predict =
      Net("lenet",
          {MakeOp("Conv", {"data", "w1", "b1"}, {"c1"}, {ArgI("kernel", 5)}),
           MakeOp("MaxPool", {"c1"}, {"p1"}, {ArgI("kernel", 2), ArgI("stride", 2)}),
           MakeOp("Relu", {"p1"}, {"p1"}), MakeOp("FC", {"p1", "w2", "b2"}, {"fc"}),
           MakeOp("Softmax", {"fc"}, {"prob"})},
          {"data", "w1", "b1", "w2", "b2"}, {"prob"});
  for (int64_t opset : {11, 13, 17}) {
    DYNAMIC_SECTION("opset " << opset) { RequireRoundTrip(init, predict, {2, 1, 16, 16}, opset); }
  }
}

TEST_CASE("ONNX export round trip: BN, legacy broadcast Add, Concat, Reshape, Transpose", "[onnx][export]") {
  const caffe2::NetDef init =
      Net("init",
          {Fill("UniformFill", "scale", {3}), Fill("GaussianFill", "bias", {3}), Fill("GaussianFill", "mean", {3}),
           Fill("UniformFill", "var", {3}), Fill("GaussianFill", "b", {3})},
          {}, {});
  const caffe2::NetDef predict =
      Net("mixed",
          {MakeOp("SpatialBN", {"data", "scale", "bias", "mean", "var"}, {"bn"}, {ArgI("is_test", 1)}),
           MakeOp("Add", {"bn", "b"}, {"sum"}, {ArgI("broadcast", 1), ArgI("axis", 1)}),
           MakeOp("Concat", {"sum", "bn"}, {"cat", "split_info"}, {ArgI("axis", 1)}),
           MakeOp("Reshape", {"cat"}, {"flat", "old_shape"}, {ArgInts("shape", {0, -1})}),
           MakeOp("Transpose", {"flat"}, {"out"}, {ArgInts("axes", {1, 0})})},
          {"data", "scale", "bias", "mean", "var", "b"}, {"out"});
  RequireRoundTrip(init, predict, {2, 3, 4, 5}, 17);
}

TEST_CASE("ONNX export refuses with one error listing every unsupported form", "[onnx][export]") {
  const caffe2::NetDef init = Net("init", {Fill("XavierFill", "w", {2, 3, 3, 3})}, {}, {});
  const caffe2::NetDef predict =
      Net("bad",
          {MakeOp("Conv", {"data", "w"}, {"c"}, {ArgI("kernel", 3), ArgI("legacy_pad", 3)}),
           MakeOp("Dropout", {"c"}, {"d", "mask"}), MakeOp("SumSqrElements", {"d"}, {"s"}),
           MakeOp("SumSqrElements", {"s"}, {"s2"})},
          {"data", "w"}, {"s2"});
  try {
    onnxio::ExportOnnxModel(predict, init, {{"data", OnnxExportValueInfo{1, {1, 3, 8, 8}}}});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnsupported);
    const std::string m = e.what();
    CHECK(m.find("SumSqrElements (no exporter) (operator #2, #3)") != std::string::npos);
    CHECK(m.find("Conv (legacy_pad CAFFE_LEGACY_POOLING)") != std::string::npos);
    CHECK(m.find("Dropout (is_test=0, training mode)") != std::string::npos);
  }
}

TEST_CASE("ONNX export: inputs without value_info, bad opsets and dims are errors", "[onnx][export]") {
  const caffe2::NetDef predict = Net("n", {MakeOp("Relu", {"data"}, {"y"})}, {"data"}, {"y"});
  try {
    onnxio::ExportOnnxModel(predict, caffe2::NetDef(), {});
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK(std::string(e.what()).find("'data' is neither in value_info nor filled") != std::string::npos);
  }
  onnxio::OnnxExportOptions old;
  old.opset = 6;
  CHECK_THROWS_WITH(onnxio::ExportOnnxModel(predict, caffe2::NetDef(), {{"data", {1, {2}}}}, old),
                    Catch::Contains("opset 6 is not supported"));
  CHECK_THROWS_WITH(onnxio::ExportOnnxModel(predict, caffe2::NetDef(), {{"data", {1, {2, -1}}}}),
                    Catch::Contains("must be >= 0"));
}

}  // namespace
}  // namespace hetnet
