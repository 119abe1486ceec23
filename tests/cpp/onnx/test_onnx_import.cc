// ONNX import (onnx/onnx_import.h, onnx/onnx_predictor.h) from C++: models written with the wire
// writer in onnx_wire.h (this side includes no ONNX header), run through the Predictor and compared
// with plain loops; refusals and hostile files (truncated, bit-flipped, short raw_data, absurd dims,
// external data outside the model's directory) give hetnet::Error, never a crash.
// Numerics against onnxruntime are in tests/python/test_onnx_import.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include "core/checked_size.h"
#include "core/error.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_predictor.h"
#include "tests/cpp/onnx/onnx_wire.h"

namespace hetnet {
namespace {

using namespace onnx_wire;
namespace fs = std::filesystem;

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// x [N, 4] -> Gemm(W1 [3, 4], transB=1) -> Relu -> Gemm(W2 [3, 2], transB=0, alpha 0.5) -> y [N, 2].
struct Mlp {
  std::vector<float> w1 = Random(12, 1), b1 = Random(3, 2), w2 = Random(6, 3), b2 = Random(2, 4);
  std::string bytes = Model(
      {Node("Gemm", {"x", "w1", "b1"}, {"h"}, {AttrInt("transB", 1)}, "fc1"), Node("Relu", {"h"}, {"r"}),
       Node("Gemm", {"r", "w2", "b2"}, {"y"}, {AttrFloat("alpha", 0.5f)})},
      {Value("x", {-1, 4})}, {Value("y", {-1, 2})},
      {FloatTensor("w1", {3, 4}, w1), FloatTensor("b1", {3}, b1), FloatTensor("w2", {3, 2}, w2),
       FloatTensor("b2", {2}, b2)});

  std::vector<float> Reference(const std::vector<float>& x, int n) const {
    std::vector<float> y(n * 2);
    for (int i = 0; i < n; ++i) {
      float r[3];
      for (int j = 0; j < 3; ++j) {
        float s = b1[j];
        for (int k = 0; k < 4; ++k) s += x[i * 4 + k] * w1[j * 4 + k];
        r[j] = std::max(s, 0.f);
      }
      for (int j = 0; j < 2; ++j) {
        float s = 0;
        for (int k = 0; k < 3; ++k) s += r[k] * w2[k * 2 + j];
        y[i * 2 + j] = 0.5f * s + b2[j];
      }
    }
    return y;
  }
};

Tensor FloatTensorOf(std::vector<int64_t> shape, const std::vector<float>& v) {
  Tensor t(std::move(shape), DataType::Float);
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

ErrorKind KindOf(const std::string& bytes, const onnxio::OnnxImportOptions& options = {}) {
  try {
    onnxio::ImportOnnxModel(bytes, options);
  } catch (const Error& e) {
    return e.kind();
  }
  FAIL("the import did not fail");
  return ErrorKind::kRuntime;
}

std::string MessageOf(const std::string& bytes, const onnxio::OnnxImportOptions& options = {}) {
  try {
    onnxio::ImportOnnxModel(bytes, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

fs::path TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("hetnet_onnx_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST_CASE("onnx import: an MLP file runs through LoadOnnxPredictor like the reference loops", "[onnx]") {
  const Mlp mlp;
  const fs::path dir = TempDir("mlp");
  { std::ofstream(dir / "mlp.onnx", std::ios::binary) << mlp.bytes; }
  auto predictor = onnxio::LoadOnnxPredictor((dir / "mlp.onnx").string());
  REQUIRE(predictor->input_names() == std::vector<std::string>{"x"});
  REQUIRE(predictor->output_names() == std::vector<std::string>{"y"});
  const std::vector<float> x = Random(5 * 4, 9);
  const auto out = predictor->Run(Predictor::TensorMap{{"x", FloatTensorOf({5, 4}, x)}});
  const Tensor& y = out.at("y");
  REQUIRE(y.shape() == std::vector<int64_t>{5, 2});
  const auto ref = mlp.Reference(x, 5);
  for (size_t i = 0; i < ref.size(); ++i) CHECK(y.data<float>()[i] == Approx(ref[i]).margin(1e-5));
  fs::remove_all(dir);
}

TEST_CASE("onnx import: value infos, opsets, names and devices", "[onnx]") {
  const Mlp mlp;
  onnxio::OnnxImportOptions options;
  options.device.set_device_type(1);
  options.node_devices["fc1"] = caffe2::DeviceOption();  // CPU for the first Gemm (by node name)
  options.net_name = "mlp";
  const auto m = onnxio::ImportOnnxModel(mlp.bytes, options);
  REQUIRE(m.inputs.size() == 1);
  CHECK(m.inputs[0].name == "x");
  CHECK(m.inputs[0].dtype == caffe2::TensorProto::FLOAT);
  CHECK(m.inputs[0].dims == std::vector<int64_t>{-1, 4});
  CHECK(m.outputs[0].dims == std::vector<int64_t>{-1, 2});
  CHECK(m.opsets.at("") == 13);
  CHECK(m.ir_version == 8);
  CHECK(m.producer == "onnx_wire");
  CHECK(m.predict_net.name() == "mlp");
  CHECK(m.init_net.name() == "mlp_init");
  REQUIRE(m.predict_net.op_size() == 3);
  CHECK(m.predict_net.op(0).type() == "FC");
  CHECK(m.predict_net.op(0).device_option().device_type() == 0);
  CHECK(m.predict_net.op(1).device_option().device_type() == 1);
  // external inputs: graph inputs first, then the weights
  CHECK(m.predict_net.external_input(0) == "x");
  CHECK(m.predict_net.external_input_size() == 5);

  const auto unshaped = onnxio::ImportOnnxModel(
      Model({Node("Relu", {"x"}, {"y"})}, {Value("x", {}, false)}, {Value("y", {}, false)}));
  CHECK_FALSE(unshaped.inputs[0].known_rank);
  CHECK(onnxio::IsOnnxPath("a/model.ONNX"));
  CHECK_FALSE(onnxio::IsOnnxPath("predict_net.pb"));
}

TEST_CASE("onnx import: one kUnsupported error lists every unsupported op with its opset and reason", "[onnx]") {
  const std::string bytes = Model(
      {Node("Bernoulli", {"x"}, {"a"}), Node("ImageDecoder", {"a"}, {"b"}), Node("Bernoulli", {"b"}, {"c"}),
       Node("Multinomial", {"c"}, {"d"}),
       Node("ConvTranspose", {"d", "w"}, {"e"}, {AttrInts("kernel_shape", {3, 3}), AttrInts("output_shape", {8, 8})}),
       Node("Relu", {"e"}, {"f"}),
       Node("Foo", {"f"}, {"y"}, {}, "", "com.example")},
      {Value("x", {1, 1, 8, 8})}, {Value("y", {})}, {FloatTensor("w", {1, 1, 1, 1, 1}, {1})}, 13,
      {{"com.example", 2}});
  REQUIRE(KindOf(bytes) == ErrorKind::kUnsupported);
  const std::string msg = MessageOf(bytes);
  CHECK(msg.find("5 unsupported operator(s)") != std::string::npos);
  CHECK(msg.find("Bernoulli (opset 13)") != std::string::npos);
  CHECK(msg.find("Bernoulli (opset 13)") == msg.rfind("Bernoulli (opset 13)"));  // listed once
  CHECK(msg.find("ImageDecoder (opset 13)") != std::string::npos);
  CHECK(msg.find("Multinomial (opset 13)") != std::string::npos);
  CHECK(msg.find("ConvTranspose (opset 13): output_shape needs the input's spatial dims") != std::string::npos);
  CHECK(msg.find("com.example::Foo (opset 2)") != std::string::npos);
  CHECK(msg.find("Relu") == std::string::npos);
}

TEST_CASE("onnx import: reshape shapes and axes come from constants, a runtime shape is fed to Reshape", "[onnx]") {
  const std::string bytes = Model(
      {Node("Reshape", {"x", "shape"}, {"r"}), Node("Unsqueeze", {"r", "axes"}, {"u"}),
       Node("Squeeze", {"u", "axes"}, {"s"}), Node("Reshape", {"s", "dyn"}, {"y"})},
      {Value("x", {2, 3, 4}), Value("dyn", {2})}, {Value("y", {4, 6})},
      {Int64Tensor("shape", {0, -1}), Int64Tensor("axes", {-1})});
  auto p = onnxio::OnnxPredictorFromBytes(bytes);
  const std::vector<float> x = Random(24, 5);
  Tensor dyn({2}, DataType::Int64);
  dyn.mutable_data<int64_t>()[0] = 4;
  dyn.mutable_data<int64_t>()[1] = 6;
  const auto out = p->Run(Predictor::TensorMap{{"x", FloatTensorOf({2, 3, 4}, x)}, {"dyn", dyn}});
  const Tensor& y = out.at("y");
  REQUIRE(y.shape() == std::vector<int64_t>{4, 6});
  for (int i = 0; i < 24; ++i) CHECK(y.data<float>()[i] == x[i]);
}

TEST_CASE("onnx import: malformed and hostile models are refused with kInvalidArgument, never a crash", "[onnx]") {
  CHECK(KindOf("") == ErrorKind::kInvalidArgument);
  CHECK(KindOf("\xff\xff\xff\xff garbage") == ErrorKind::kInvalidArgument);
  CHECK(KindOf(Pb().Varint(1, 8).str()) == ErrorKind::kInvalidArgument);  // no graph

  // raw_data four bytes short of its dims
  Pb shorty;
  shorty.Varint(1, 2).Varint(1, 2).Varint(2, kFloat).Bytes(8, "w").Bytes(9, std::string(12, '\0'));
  const std::string short_model =
      Model({Node("MatMul", {"x", "w"}, {"y"})}, {Value("x", {1, 2})}, {Value("y", {1, 2})}, {shorty});
  CHECK(KindOf(short_model) == ErrorKind::kInvalidArgument);
  CHECK(MessageOf(short_model).find("12 bytes of raw_data") != std::string::npos);
  // dims of 2^62 elements with no data: refused before any allocation
  const std::string huge = Model({Node("Relu", {"w"}, {"y"})}, {}, {Value("y", {})},
                                 {FloatTensor("w", {int64_t{1} << 31, int64_t{1} << 31}, {})});
  CHECK_THROWS_AS(onnxio::ImportOnnxModel(huge), Error);
  // negative dims
  CHECK(KindOf(Model({Node("Relu", {"w"}, {"y"})}, {}, {Value("y", {})}, {FloatTensor("w", {-1}, {})})) ==
        ErrorKind::kInvalidArgument);
  // 1 M empty nodes: 2 MB that parse into ~200 MB of NodeProtos, refused before parsing under a lower cap.
  {
    std::string empty_nodes;
    for (int i = 0; i < 1'000'000; ++i) empty_nodes += std::string("\x0a\x00", 2);  // GraphProto.node = 1
    const std::string model = Pb().Varint(1, 8).Bytes(7, empty_nodes).str();          // ModelProto.graph = 7
    const int64_t old = hetnet::GetLimit(hetnet::Limit::kMaxProtoParseBytes);
    hetnet::SetLimit(hetnet::Limit::kMaxProtoParseBytes, 50'000'000);
    CHECK(KindOf(model) == ErrorKind::kOutOfMemory);
    CHECK(MessageOf(model).find("the memory to parse 'ONNX model' (2000006 bytes) as onnx.ModelProto") !=
          std::string::npos);
    hetnet::SetLimit(hetnet::Limit::kMaxProtoParseBytes, old);
  }

  // Names must be UTF-8 without NUL (they become blob names and Python strings).
  const std::string bad_name = Model({Node("Relu", {"x"}, {std::string("y\xda", 2)})}, {Value("x", {1})},
                                     {Value(std::string("y\xda", 2), {1})});
  CHECK(MessageOf(bad_name).find("not valid UTF-8") != std::string::npos);
  CHECK(KindOf(Model({Node("Relu", {"x"}, {std::string("y\0z", 3)})}, {Value("x", {1})}, {Value("y", {1})})) ==
        ErrorKind::kInvalidArgument);

  // An absurd axis is refused before it sizes anything (found by mutating models: bad_alloc before).
  for (const char* op : {"LayerNormalization", "Flatten", "Gather"})
    CHECK(KindOf(Model({Node(op, {"x", "x"}, {"y"}, {AttrInt("axis", int64_t{-1} << 60)})}, {Value("x", {}, false)},
                       {Value("y", {})}, {}, 18)) == ErrorKind::kInvalidArgument);

  // Every truncation and many byte flips of a valid model either import or throw hetnet::Error.
  const std::string good = Mlp().bytes;
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      onnxio::ImportOnnxModel(good.substr(0, n));
    } catch (const Error&) {
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    std::string bad = good;
    for (int k = 0; k < 3; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    try {
      onnxio::ImportOnnxModel(bad);
    } catch (const Error&) {
    }
  }
}

TEST_CASE("onnx import: external data loads from inside base_dir and is refused outside it", "[onnx]") {
  const fs::path dir = TempDir("external");
  fs::create_directories(dir / "model");
  const std::vector<float> w = {1, 2, 3, 4};
  std::string raw(8, '\0');
  raw.append(reinterpret_cast<const char*>(w.data()), 16);
  { std::ofstream(dir / "model" / "weights.bin", std::ios::binary) << raw; }
  { std::ofstream(dir / "outside.bin", std::ios::binary) << raw; }
  auto model = [](const std::string& location, int64_t offset, int64_t length) {
    return Model({Node("MatMul", {"x", "w"}, {"y"})}, {Value("x", {1, 2})}, {Value("y", {1, 2})},
                 {ExternalTensor("w", {2, 2}, location, offset, length)});
  };
  onnxio::OnnxImportOptions options;
  options.base_dir = (dir / "model").string();
  auto p = onnxio::OnnxPredictorFromBytes(model("weights.bin", 8, 16), {}, options);
  const auto y = p->Run(Predictor::TensorMap{{"x", FloatTensorOf({1, 2}, {1.f, -1.f})}}).at("y");
  CHECK(y.data<float>()[0] == 1.f - 3.f);
  CHECK(y.data<float>()[1] == 2.f - 4.f);

  CHECK(MessageOf(model("../outside.bin", 8, 16), options).find("outside the model's directory") != std::string::npos);
  CHECK(MessageOf(model((dir / "outside.bin").string(), 8, 16), options).find("relative path") != std::string::npos);
  CHECK(MessageOf(model("weights.bin", 16, 16), options).find("exceeds the file") != std::string::npos);
  CHECK(MessageOf(model("weights.bin", 8, 12), options).find("the tensor needs 16") != std::string::npos);
  CHECK(KindOf(model("missing.bin", 0, 16), options) == ErrorKind::kNotFound);
  CHECK(MessageOf(model("weights.bin", 8, 16)).find("no base directory") != std::string::npos);
  // A file import takes the model's directory as base_dir.
  { std::ofstream(dir / "model" / "m.onnx", std::ios::binary) << model("weights.bin", 8, 16); }
  CHECK(onnxio::ImportOnnxFile((dir / "model" / "m.onnx").string()).init_net.op_size() == 1);
  fs::remove_all(dir);
}

TEST_CASE("onnx import: a missing file is kNotFound naming it, a directory is not a model", "[onnx]") {
  try {
    onnxio::LoadOnnxPredictor("/nonexistent/model.onnx");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kNotFound);
    CHECK(std::string(e.what()).find("/nonexistent/model.onnx") != std::string::npos);
  }
  const fs::path dir = TempDir("dir.onnx");
  CHECK_THROWS_AS(onnxio::ImportOnnxFile(dir.string()), Error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hetnet
