// Wire format proven byte by byte: protos are hand-encoded with the field numbers of Caffe2's
// caffe2.proto (shared/spec/caffe2-facts.md), parsed, and our writer's bytes are checked too.
#include <catch2/catch.hpp>

#include "core/checked_size.h"
#include "core/proto_io.h"
#include "core/proto_parse_bound.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include "core/tensor_proto.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;
using namespace hetnet_test::wire;

namespace {

std::string HandArgument(const std::string& name, const std::string& body) { return Bytes(1, name) + body; }

// A NetDef with one Relu op, encoded by hand.
std::string HandNetDef() {
  const std::string op_device = VarintField(1, 0) + VarintField(2, 3);  // CPU, device_id 3 (field 2)
  std::string op = Bytes(1, "x") + Bytes(2, "y") + Bytes(3, "relu1") + Bytes(4, "Relu");
  op += Bytes(5, HandArgument("axes", VarintField(6, 1) + VarintField(6, 2)));  // ints unpacked
  op += Bytes(5, HandArgument("packed", PackedVarints(6, {4, 5, -1})));         // ints packed
  op += Bytes(5, HandArgument("alpha", FloatField(2, 0.5f)));
  op += Bytes(5, HandArgument("k", VarintField(3, -7)));
  op += Bytes(5, HandArgument("mode", Bytes(4, "fast")));
  op += Bytes(5, HandArgument("names", Bytes(7, "a") + Bytes(7, "b")));
  op += Bytes(6, op_device) + Bytes(7, "CUDNN,DEFAULT") + VarintField(9, 0) + Bytes(10, "made by hand");
  std::string net = Bytes(1, "wire_net") + Bytes(2, op) + Bytes(3, "simple") + VarintField(4, 2);
  net += Bytes(5, VarintField(1, 0)) + Bytes(6, HandArgument("net_arg", VarintField(3, 1)));
  net += Bytes(7, "x") + Bytes(8, "y");
  return net;
}

}  // namespace

TEST_CASE("hand-encoded binary NetDef parses field by field and runs", "[io][proto]") {
  TempDir dir;
  const std::string path = dir.Write("net.pb", HandNetDef());
  caffe2::NetDef net = ReadNetDef(path);
  REQUIRE(net.name() == "wire_net");
  CHECK(net.type() == "simple");
  CHECK(net.num_workers() == 2);
  CHECK(net.device_option().device_type() == 0);
  REQUIRE(net.arg_size() == 1);
  CHECK(net.arg(0).i() == 1);
  CHECK(net.external_input(0) == "x");
  CHECK(net.external_output(0) == "y");
  REQUIRE(net.op_size() == 1);
  const auto& op = net.op(0);
  CHECK(op.type() == "Relu");
  CHECK(op.name() == "relu1");
  CHECK(op.engine() == "CUDNN,DEFAULT");
  CHECK(op.debug_info() == "made by hand");
  CHECK(op.device_option().device_id() == 3);
  REQUIRE(op.arg_size() == 6);
  CHECK(std::vector<int64_t>(op.arg(0).ints().begin(), op.arg(0).ints().end()) == std::vector<int64_t>{1, 2});
  CHECK(std::vector<int64_t>(op.arg(1).ints().begin(), op.arg(1).ints().end()) == std::vector<int64_t>{4, 5, -1});
  CHECK(op.arg(2).f() == 0.5f);
  CHECK(op.arg(3).i() == -7);
  CHECK(op.arg(4).s() == "fast");
  CHECK(op.arg(5).strings_size() == 2);

  // Unknown engine preference falls back to the default kernel; CPU ignores device_id.
  Workspace ws;
  Tensor* x = ws.CreateBlob("x")->GetMutableTensor(Device::CPU());
  x->Resize({3});
  float* px = x->mutable_data<float>();
  px[0] = -1; px[1] = 0.5f; px[2] = 2;
  ws.RunNetOnce(net);
  const Tensor& y = ws.GetBlobOrThrow("y").GetTensor();
  CHECK(y.data<float>()[0] == 0.f);
  CHECK(y.data<float>()[2] == 2.f);
}

TEST_CASE("hand-encoded DeviceOption: CUDA device_id at field 2, legacy field 7 skipped", "[io][proto]") {
  const std::string dev = VarintField(1, 1) + VarintField(2, 1) + VarintField(3, 42) + Bytes(4, "node") +
                          Bytes(6, "extra") + VarintField(7, 5);
  caffe2::OperatorDef op;
  ParseProtoFromString(Bytes(4, "Relu") + Bytes(6, dev), &op);
  CHECK(op.device_option().device_type() == 1);
  CHECK(op.device_option().device_id() == 1);
  CHECK(op.device_option().random_seed() == 42u);
  CHECK(op.device_option().node_name() == "node");
  CHECK(op.device_option().extra_info(0) == "extra");
}

TEST_CASE("hand-encoded TensorProto: packed float_data, retired fields 12 and 14 skipped", "[io][proto]") {
  std::string t = VarintField(1, 2) + VarintField(1, 3) + VarintField(2, 1);
  t += PackedFloats(3, {1, 2, 3, 4, 5, 6.5f}) + Bytes(7, "w") + VarintField(12, 9) + Bytes(14, "old");
  TempDir dir;
  caffe2::TensorProto p = ReadTensorProto(dir.Write("t.pb", t));
  Tensor x = TensorFromProto(p);
  REQUIRE(x.shape() == std::vector<int64_t>{2, 3});
  REQUIRE(x.dtype() == DataType::Float);
  CHECK(x.data<float>()[5] == 6.5f);
}

TEST_CASE("hand-encoded TensorProto: fp16 patterns in int32_data, int64 and double raw_data", "[io][proto]") {
  caffe2::TensorProto p;
  ParseProtoFromString(VarintField(1, 3) + VarintField(2, 12) + PackedVarints(4, {0x3C00, 0xC000, 0x3800}), &p);
  Tensor h = TensorFromProto(p);
  REQUIRE(h.dtype() == DataType::Float16);
  CHECK(HalfToFloat(h.data<Half>()[0]) == 1.f);
  CHECK(HalfToFloat(h.data<Half>()[1]) == -2.f);
  CHECK(HalfToFloat(h.data<Half>()[2]) == 0.5f);

  std::string raw;
  for (int64_t v : {int64_t(-5), int64_t(1) << 40}) raw.append(reinterpret_cast<const char*>(&v), 8);
  ParseProtoFromString(VarintField(1, 2) + VarintField(2, 10) + Bytes(13, raw), &p);
  Tensor l = TensorFromProto(p);
  REQUIRE(l.dtype() == DataType::Int64);
  CHECK(l.data<int64_t>()[0] == -5);
  CHECK(l.data<int64_t>()[1] == (int64_t(1) << 40));

  ParseProtoFromString(VarintField(1, 2) + VarintField(2, 13) + PackedDoubles(9, {0.25, -1e300}), &p);
  Tensor d = TensorFromProto(p);
  CHECK(d.data<double>()[1] == -1e300);
}

TEST_CASE("our TensorProto writer produces Caffe2's exact bytes", "[io][proto]") {
  Tensor t({2, 2}, DataType::Float);
  for (int i = 0; i < 4; ++i) t.mutable_data<float>()[i] = 0.5f * i;
  const std::string bytes = SerializeProto(TensorToProto(t, "w"));
  const std::string expected = VarintField(1, 2) + VarintField(1, 2) + VarintField(2, 1) +
                               PackedFloats(3, {0, 0.5f, 1, 1.5f}) + Bytes(7, "w") +
                               Bytes(8, VarintField(1, 0) + VarintField(2, 0));
  CHECK(bytes == expected);

  Tensor b({3}, DataType::Bool);
  b.mutable_data<bool>()[0] = true; b.mutable_data<bool>()[1] = false; b.mutable_data<bool>()[2] = true;
  const std::string bb = SerializeProto(TensorToProto(b));
  CHECK(bb.find(VarintField(2, 5) + PackedVarints(4, {1, 0, 1})) != std::string::npos);
}

TEST_CASE("our NetDef writer: unpacked ints, device_id at field 2; bytes re-parse", "[io][proto]") {
  caffe2::NetDef net;
  net.set_name("n");
  auto* op = net.add_op();
  op->set_type("Relu");
  op->add_input("a");
  op->add_output("b");
  op->mutable_device_option()->set_device_type(1);
  op->mutable_device_option()->set_device_id(2);
  auto* arg = op->add_arg();
  arg->set_name("axes");
  arg->add_ints(1);
  arg->add_ints(2);
  const std::string bytes = SerializeProto(net);
  CHECK(bytes.find(Bytes(5, Bytes(1, "axes") + VarintField(6, 1) + VarintField(6, 2))) != std::string::npos);
  CHECK(bytes.find(Bytes(6, VarintField(1, 1) + VarintField(2, 2))) != std::string::npos);
  caffe2::NetDef back;
  ParseProtoFromString(bytes, &back);
  CHECK(back.SerializeAsString() == bytes);
}

TEST_CASE("text format files read like Caffe2's (binary first, then text)", "[io][proto]") {
  TempDir dir;
  const std::string text =
      "name: \"txt\"\nop {\n  input: \"x\"\n  output: \"y\"\n  type: \"Relu\"\n"
      "  device_option { device_type: 0 device_id: -1 }\n}\nexternal_input: \"x\"\nexternal_output: \"y\"\n";
  caffe2::NetDef net = ReadNetDef(dir.Write("net.pbtxt", text));
  CHECK(net.name() == "txt");
  CHECK(net.op(0).device_option().device_id() == -1);
  // Our text writer round trips.
  WriteProtoToFile(dir.File("out.pbtxt"), net, /*text=*/true);
  CHECK(Slurp(dir.File("out.pbtxt")).find("name: \"txt\"") != std::string::npos);
  CHECK(ReadNetDef(dir.File("out.pbtxt")).SerializeAsString() == net.SerializeAsString());
  // A text file that starts like an (unknown-field) binary message still reads as text.
  caffe2::TensorProtos tps;
  ParseProtoFromString("protos { dims: 1 float_data: 2 name: \"a\" }", &tps);
  REQUIRE(tps.protos_size() == 1);
  CHECK(TensorFromProto(tps.protos(0)).data<float>()[0] == 2.f);
}

TEST_CASE("text-only parsing: a NetDef, then refusals with the nesting cap and the format named",
          "[io][proto][bad_input]") {
  caffe2::NetDef net;
  ParseTextProtoFromString("name: \"t\" op { type: \"Relu\" input: \"x\" output: \"y\" }", &net, "a.pbtxt");
  CHECK(net.name() == "t");
  CHECK(net.op(0).type() == "Relu");
  // 50,000 levels of op { arg { n { ...: protobuf's text parser alone would overflow the stack.
  std::string deep;
  for (int i = 0; i < 50000; ++i) deep += "op { arg { name: \"a\" n { ";
  try {
    ParseTextProtoFromString(deep, &net, "deep.pbtxt");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK_THAT(e.what(), Catch::Contains("'deep.pbtxt'") && Catch::Contains("in text format") &&
                             Catch::Contains("nest deeper than the nesting-depth cap of 100"));
  }
  CHECK(net.op_size() == 0);  // cleared, not half-parsed
  // Binary bytes are not text format.
  caffe2::NetDef binary;
  binary.set_name("b");
  CHECK_THROWS_WITH(ParseTextProtoFromString(binary.SerializeAsString() + std::string(1, '\0'), &net, "b.pbtxt"),
                    Catch::Contains("'b.pbtxt'") && Catch::Contains("in text format"));
  CHECK_THROWS_WITH(ParseTextProtoFromString("", &net, "e.pbtxt"), Catch::Contains("'e.pbtxt' is empty"));
}

TEST_CASE("TensorProtos and BlobProto files", "[io][proto]") {
  TempDir dir;
  caffe2::TensorProtos tps;
  Tensor a({2}, DataType::Int32);
  a.mutable_data<int32_t>()[0] = 7; a.mutable_data<int32_t>()[1] = -8;
  *tps.add_protos() = TensorToProto(a, "a");
  WriteProtoToFile(dir.File("tps.pb"), tps);
  caffe2::TensorProtos back = ReadTensorProtos(dir.File("tps.pb"));
  CHECK(TensorFromProto(back.protos(0)).data<int32_t>()[1] == -8);

  WriteProtoToFile(dir.File("blob.pb"), TensorToBlobProto(a, "a"));
  caffe2::BlobProto blob = ReadBlobProto(dir.File("blob.pb"));
  CHECK(blob.type() == "Tensor");
  CHECK(TensorFromBlobProto(blob).data<int32_t>()[0] == 7);
}

TEST_CASE("missing, empty, truncated and garbage proto files give named errors", "[io][proto][bad_input]") {
  TempDir dir;
  auto expect_error = [](const std::string& path, ErrorKind kind, const std::string& must_contain) {
    try {
      ReadNetDef(path);
      FAIL("no error for " << path);
    } catch (const Error& e) {
      CHECK(e.kind() == kind);
      CHECK_THAT(e.what(), Catch::Contains(path));
      CHECK_THAT(e.what(), Catch::Contains(must_contain));
    }
  };
  expect_error(dir.File("nope.pb"), ErrorKind::kNotFound, "does not exist");
  expect_error(dir.Write("empty.pb", ""), ErrorKind::kInvalidArgument, "caffe2.NetDef");
  const std::string good = HandNetDef();
  expect_error(dir.Write("trunc.pb", good.substr(0, good.size() / 2)), ErrorKind::kInvalidArgument,
               "truncated");
  expect_error(dir.Write("garbage.pb", std::string("\xff\xff\xff\xff\x00\x13garbage", 13)),
               ErrorKind::kInvalidArgument, "caffe2.NetDef");
  expect_error(dir.Write("bad.pbtxt", "name: \"x\"\nop { type: }\n"), ErrorKind::kInvalidArgument, "line 2");
  // Segment has required fields: a partial message is refused, not half-read.
  caffe2::TensorProto p;
  CHECK_THROWS_AS(ParseProtoFromString(Bytes(11, VarintField(1, 0)), &p), Error);
}

TEST_CASE("binary protos whose parse would take more than the proto-parse-memory cap are refused unparsed",
          "[io][proto][bad_input]") {
  // 1 M empty `op {}` entries: 2 MB of bytes, ~200 MB of OperatorDefs once parsed (20 M of them
  // made `hetnet serve` peak at 2.15 GB loading a 20 MB model file).
  std::string ops;
  for (int i = 0; i < 1'000'000; ++i) ops += std::string("\x12\x00", 2);
  const int64_t old = GetLimit(Limit::kMaxProtoParseBytes);
  SetLimit(Limit::kMaxProtoParseBytes, 100'000'000);
  caffe2::NetDef net;
  try {
    ParseProtoFromString(ops, &net, "many_ops.pb");
    FAIL("parsed");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kOutOfMemory);
    CHECK_THAT(e.what(), Catch::Contains("the memory to parse 'many_ops.pb' (2000000 bytes) as caffe2.NetDef (") &&
                             Catch::Contains("exceeds the proto-parse-memory cap of 100000000 bytes") &&
                             Catch::Contains("HETNET_MAX_PROTO_PARSE_BYTES"));
  }
  CHECK(net.op_size() == 0);
  // The same ops with a truncated field at the end: the parse would fail, but only after building
  // every op before it, so the bytes up to the fault count.
  try {
    ParseProtoFromString(ops + std::string("\x12\x05", 2), &net, "many_ops_cut.pb");
    FAIL("parsed");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kOutOfMemory);
    CHECK_THAT(e.what(), Catch::Contains("'many_ops_cut.pb' (2000002 bytes)"));
  }
  // Under the cap the same bytes parse; the bound held what the parse took.
  SetLimit(Limit::kMaxProtoParseBytes, 400'000'000);
  ParseProtoFromString(ops, &net, "many_ops.pb");
  CHECK(net.op_size() == 1'000'000);
  CHECK(net.SpaceUsedLong() <= 400'000'000);
  SetLimit(Limit::kMaxProtoParseBytes, old);
  // A real model's bound is near its size: a 4 MB weight tensor passes a 16 MB cap.
  caffe2::TensorProto weights;
  weights.add_dims(1'000'000);
  weights.set_data_type(caffe2::TensorProto::FLOAT);
  for (int i = 0; i < 1'000'000; ++i) weights.add_float_data(0.5f * i);
  // Enum values the type does not know go to the unknown field set (found by fuzz_text_format).
  {
    std::string unknown_enums;
    for (int i = 0; i < 50; ++i) unknown_enums += std::string("\x10\x10", 2);  // data_type = 16, 50 times
    caffe2::TensorProto t;
    REQUIRE(t.ParseFromString(unknown_enums));
    google::protobuf::io::ArrayInputStream in(unknown_enums.data(), static_cast<int>(unknown_enums.size()));
    const ParseBound b = BoundParsedSize(caffe2::TensorProto::descriptor(), &in, unknown_enums.size());
    REQUIRE(b.ok);
    CHECK(b.bytes >= t.SpaceUsedLong());
    // Unknown length-delimited fields: a string and an entry each (found by fuzz_text_format).
    std::string unknown;
    for (int i = 0; i < 10; ++i) unknown += std::string("\x4a\x00", 2);  // BlobProto has no field 9
    caffe2::BlobProto blob;
    REQUIRE(blob.ParseFromString(unknown));
    google::protobuf::io::ArrayInputStream in2(unknown.data(), static_cast<int>(unknown.size()));
    CHECK(BoundParsedSize(caffe2::BlobProto::descriptor(), &in2, unknown.size()).bytes >= blob.SpaceUsedLong());
  }
  SetLimit(Limit::kMaxProtoParseBytes, 16'000'000);
  caffe2::TensorProto back;
  ParseProtoFromString(weights.SerializeAsString(), &back, "w.pb");
  CHECK(back.float_data_size() == 1'000'000);
  SetLimit(Limit::kMaxProtoParseBytes, old);
}

TEST_CASE("text-format protos are bounded too: \"op{}\" is 4 characters and an OperatorDef", "[io][proto][bad_input]") {
  std::string ops;
  for (int i = 0; i < 1'000'000; ++i) ops += "op{}";
  const int64_t old = GetLimit(Limit::kMaxProtoParseBytes);
  SetLimit(Limit::kMaxProtoParseBytes, 100'000'000);
  caffe2::NetDef net;
  for (bool text_only : {false, true}) {
    try {
      if (text_only) ParseTextProtoFromString(ops, &net, "many_ops.pbtxt");
      else ParseProtoFromString(ops, &net, "many_ops.pbtxt");
      FAIL("parsed");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::kOutOfMemory);
      CHECK_THAT(e.what(), Catch::Contains("the memory to parse 'many_ops.pbtxt' (4000000 bytes) as caffe2.NetDef "
                                           "in text format (") &&
                               Catch::Contains("exceeds the proto-parse-memory cap of 100000000 bytes"));
    }
  }
  SetLimit(Limit::kMaxProtoParseBytes, old);
  // The bound holds what text parses take: nets of every field kind, lists, maps of arguments.
  caffe2::NetDef rich;
  rich.set_name("rich");
  for (int i = 0; i < 300; ++i) {
    auto* op = rich.add_op();
    op->set_type(i % 2 ? "Relu" : "FC");
    op->add_input("x" + std::to_string(i));
    op->add_output("y");
    auto* a = op->add_arg();
    a->set_name("a");
    for (int k = 0; k < i % 7; ++k) a->add_ints(k);
    for (int k = 0; k < i % 3; ++k) a->add_strings("");
    op->mutable_device_option()->set_device_type(i % 2);
  }
  // (a lone newline: the copy of a text parse carries an empty unknown-field set; found by fuzz_netdef)
  for (const std::string& text : {SerializeProto(rich, true), ops.substr(0, 4000), std::string("op{arg{ints:[1,2,3]}}"),
                                  std::string("\n")}) {
    caffe2::NetDef parsed;
    ParseTextProtoFromString(text, &parsed, "t.pbtxt");
    CHECK(BoundTextParsedSize(caffe2::NetDef::descriptor(), text) >= parsed.SpaceUsedLong());
  }
}
