// Hostile sizes (issue 18, items 1, 2 and 4): size arithmetic that used to wrap (and then write out
// of bounds), allocations made before the input was checked, truncated integer arguments, NUL bytes
// in names, caps, allocation failure at every allocation of a net, and arguments that used to hang.
// Every case checks the error the user sees and that the workspace still runs a good net after it.
// docs/bad_input.md lists these rows.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <cstring>

#include "core/checked_size.h"
#include "core/minidb.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/predictor.h"
#include "core/proto_io.h"
#include "core/tensor_proto.h"
#include "core/workspace.h"
#include "core/workspace_memory.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

constexpr int64_t k2p62 = int64_t{1} << 62;

// A good net over the same workspace: proves the workspace survived the failure.
void RunGoodNet(Workspace& ws) {
  *ws.CreateBlob("good_in")->GetMutable<Tensor>() = FloatTensor({2}, {-1, 3});
  caffe2::NetDef net;
  net.set_name("good");
  net.add_external_input("good_in");
  AddOp(&net, "Relu", {"good_in"}, {"good_out"});
  ws.RunNetOnce(net);
  CHECK(Values(ws.GetBlobOrThrow("good_out").GetTensor()) == std::vector<float>{0, 3});
}

// Runs net in ws; expects a hetnet::Error of `kind` whose text holds every part; then a good net.
void ExpectNetError(Workspace& ws, const caffe2::NetDef& net, ErrorKind kind, const std::vector<std::string>& parts) {
  try {
    ws.RunNetOnce(net);
    FAIL("net '" << net.name() << "' ran without error");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.kind() == kind);
    for (const auto& p : parts) CHECK_THAT(e.what(), Catch::Contains(p));
  }
  RunGoodNet(ws);
}

caffe2::Argument Ints(const std::string& name, std::vector<int64_t> v) {
  caffe2::Argument a;
  a.set_name(name);
  for (auto x : v) a.add_ints(x);
  return a;
}
caffe2::Argument Int(const std::string& name, int64_t v) {
  caffe2::Argument a;
  a.set_name(name);
  a.set_i(v);
  return a;
}

caffe2::NetDef NetOf(const std::string& name) {
  caffe2::NetDef net;
  net.set_name(name);
  return net;
}

// Caps changed by a test are restored at scope exit.
struct LimitOverride {
  Limit which;
  int64_t old;
  LimitOverride(Limit w, int64_t v) : which(w), old(GetLimit(w)) { SetLimit(w, v); }
  ~LimitOverride() { SetLimit(which, old); }
};

}  // namespace

// ---- item 1: checked size arithmetic ---------------------------------------------------------

TEST_CASE("hostile: checked size helpers", "[hostile]") {
  CHECK(CheckedNumel({2, 3, 4}, "t") == 24);
  CHECK(CheckedNumel({0, int64_t{1} << 40, 4}, "t") == 0);
  CHECK(CheckedNumel(std::vector<int64_t>{}, "t") == 1);
  CHECK_THROWS_WITH(CheckedNumel({2, -1}, "t"), Catch::Contains("negative dimension"));
  CHECK_THROWS_WITH(CheckedNumel({k2p62 + 1, 4}, "t"), Catch::Contains("too many elements"));
  // A zero dim does not hide an absurd product of the others (products of sub-ranges must be exact).
  CHECK_THROWS_WITH(CheckedNumel({0, k2p62, k2p62}, "t"), Catch::Contains("too many elements"));
  CHECK_THROWS_AS(CheckedMul(k2p62, 4, "x"), Error);
  CHECK_THROWS_AS(CheckedAdd(INT64_MAX, 1, "x"), Error);
  CHECK_THROWS_AS(CheckedToInt(int64_t{1} << 32, "x"), Error);
  CHECK(CheckedByteSize(1000, 4, "x") == 4000);
}

TEST_CASE("hostile: tensor shapes whose element count overflows are refused", "[hostile]") {
  Tensor t;
  CHECK_THROWS_WITH(t.Resize({k2p62 + 1, 4}), Catch::Contains("too many elements"));
  CHECK_THROWS_WITH(t.Resize({-3}), Catch::Contains("negative dimension"));
  // The tensor is unchanged after a refused Resize.
  t.Resize({2, 2});
  t.mutable_data<float>()[3] = 7.f;
  CHECK_THROWS(t.Resize({int64_t{1} << 40, int64_t{1} << 40}));
  CHECK(t.numel() == 4);
  CHECK(t.data<float>()[3] == 7.f);
}

TEST_CASE("hostile: ConstantFill and UniformFill with shape [2^62] fail cleanly", "[hostile]") {
  // Used to get a 64-byte buffer (2^62 * 4 bytes wraps to 0) and fill 2^62 floats: SIGSEGV.
  Workspace ws;
  for (const char* type : {"ConstantFill", "UniformFill", "GaussianFill", "XavierFill"}) {
    INFO(type);
    caffe2::NetDef net = NetOf(std::string("fill_") + type);
    *AddOp(&net, type, {}, {"y"})->add_arg() = Ints("shape", {k2p62});
    ExpectNetError(ws, net, ErrorKind::kInvalidArgument, {"too many elements", type, "'y'"});
    // Representable but absurd: the cap, before any allocation.
    caffe2::NetDef net2 = NetOf(std::string("fill_cap_") + type);
    *AddOp(&net2, type, {}, {"y"})->add_arg() = Ints("shape", {int64_t{1} << 40});
    ExpectNetError(ws, net2, ErrorKind::kOutOfMemory,
                   {"largest-tensor cap", "HETNET_MAX_TENSOR_BYTES", type, "while allocating output", "'y'"});
  }
  // The product wrapping to a small number is refused before the fill runs.
  caffe2::NetDef net = NetOf("fill_wrap");
  *AddOp(&net, "ConstantFill", {}, {"y"})->add_arg() = Ints("shape", {k2p62 + 1, 4});
  ExpectNetError(ws, net, ErrorKind::kInvalidArgument, {"too many elements", "ConstantFill", "'y'"});
}

namespace {
// An operator that sizes its output itself (Output(0)->Resize) to a shape whose product overflows.
class HostileTestResizeOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override {
    Tensor* y = Output(0);
    y->Resize({k2p62 + 1, 4});
    y->mutable_data<float>();
  }
};
}  // namespace
OPERATOR_SCHEMA(HostileTestResize).NumInputs(0).NumOutputs(1);
REGISTER_CPU_OPERATOR(HostileTestResize, HostileTestResizeOp);

TEST_CASE("hostile: a shape error from Tensor itself names the operator's output", "[hostile]") {
  // Tensor::Resize cannot know its blob ("tensor: shape [...] has too many elements"): the net
  // names the operator's outputs.
  Workspace ws;
  caffe2::NetDef net = NetOf("resize_itself");
  AddOp(&net, "HostileTestResize", {}, {"resized"});
  ExpectNetError(ws, net, ErrorKind::kInvalidArgument,
                 {"tensor: shape [4611686018427387905, 4] has too many elements", "while sizing output 'resized'",
                  "operator #0 (HostileTestResize)", "net 'resize_itself'"});
}

TEST_CASE("hostile: GivenTensorFill shape [2^62+1, 4] with 4 values is refused, FC never sees it", "[hostile]") {
  // The unchecked product (2^62+1)*4 wrapped to 4 == the value count; FC or Softmax then crashed.
  Workspace ws;
  caffe2::NetDef net = NetOf("given_wrap");
  AddFill(&net, "x", {k2p62 + 1, 4}, {1, 2, 3, 4});
  AddOp(&net, "Softmax", {"x"}, {"p"});
  ExpectNetError(ws, net, ErrorKind::kInvalidArgument, {"too many elements", "GivenTensorFill", "'x'"});
  CHECK(ws.GetBlobOrThrow("p").empty());  // Softmax never ran
}

TEST_CASE("hostile: Reshape to a shape whose product overflows is refused", "[hostile]") {
  Workspace ws;
  caffe2::NetDef net = NetOf("reshape_wrap");
  AddFill(&net, "x", {4}, {1, 2, 3, 4});
  auto* op = AddOp(&net, "Reshape", {"x"}, {"y", "old"});
  *op->add_arg() = Ints("shape", {k2p62 + 1, 4});
  ExpectNetError(ws, net, ErrorKind::kInvalidArgument, {"Reshape", "too many elements", "'x'"});
  caffe2::NetDef net2 = NetOf("reshape_wrap_infer");
  AddFill(&net2, "x", {4}, {1, 2, 3, 4});
  auto* op2 = AddOp(&net2, "Reshape", {"x"}, {"y", "old"});
  *op2->add_arg() = Ints("shape", {k2p62, k2p62, -1});
  ExpectNetError(ws, net2, ErrorKind::kInvalidArgument, {"Reshape", "too many elements"});
}

TEST_CASE("hostile: Conv and pooling with huge pads, strides or kernels fail before Im2Col", "[hostile]") {
  // pad 2^31-1 made the output 2^32 x 2^32: its element count wrapped and Im2Col wrote out of bounds.
  Workspace ws;
  const int64_t big = 2147483647;
  struct Case {
    const char* type;
    std::vector<caffe2::Argument> args;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"Conv", {Int("pad", big)}, "too many elements"},
      {"Conv", {Int("pad", big), Int("stride", big)}, ""},  // tiny output: must simply work or fail cleanly
      {"Conv", {Int("dilation", big)}, ""},
      {"MaxPool", {Int("kernel", big), Int("pad", big)}, "too many elements"},
      {"AveragePool", {Int("kernel", 1), Int("pad", big)}, "too many elements"},
      {"MaxPool", {Int("kernel", 2), Int("stride", 1), Int("pad", big), Int("legacy_pad", 3)}, ""},
      {"ConvTranspose", {Int("kernel", 1), Int("stride", big)}, "too many elements"},
  };
  for (const auto& c : cases) {
    caffe2::NetDef net = NetOf(std::string("cnn_") + c.type);
    AddFill(&net, "x", {1, 1, 2, 2}, {1, 2, 3, 4});
    const bool conv = std::string(c.type).find("Conv") != std::string::npos;
    if (conv) AddFill(&net, "w", {1, 1, 1, 1}, {1});
    auto* op = AddOp(&net, c.type, conv ? std::vector<std::string>{"x", "w"} : std::vector<std::string>{"x"}, {"y"});
    for (const auto& a : c.args) *op->add_arg() = a;
    if (!conv) {
      bool has_kernel = false;
      for (const auto& a : c.args) has_kernel |= a.name() == "kernel";
      if (!has_kernel) *op->add_arg() = Int("kernel", 1);
    }
    INFO(c.type << " " << op->ShortDebugString());
    try {
      ws.RunNetOnce(net);
      CHECK(std::string(c.expect).empty());
    } catch (const Error& e) {
      INFO(e.what());
      CHECK((e.kind() == ErrorKind::kInvalidArgument || e.kind() == ErrorKind::kOutOfMemory));
      CHECK_THAT(e.what(), Catch::Contains(c.type));
      if (*c.expect) CHECK_THAT(e.what(), Catch::Contains(c.expect) || Catch::Contains("largest-tensor cap"));
    }
    RunGoodNet(ws);
  }
}

TEST_CASE("hostile: integer arguments are range-checked, never truncated", "[hostile]") {
  // stride = 2^32 + 2 used to run as stride 2.
  Workspace ws;
  caffe2::NetDef net = NetOf("stride_trunc");
  AddFill(&net, "x", {1, 1, 4, 4}, std::vector<float>(16, 1.f));
  auto* op = AddOp(&net, "MaxPool", {"x"}, {"y"});
  *op->add_arg() = Int("kernel", 2);
  *op->add_arg() = Int("stride", (int64_t{1} << 32) + 2);
  ExpectNetError(ws, net, ErrorKind::kInvalidArgument,
                 {"argument 'stride'", "MaxPool", "4294967298", "32-bit", "net 'stride_trunc'", "operator #1"});
  // Repeated arguments too, naming the value.
  caffe2::NetDef net2 = NetOf("pads_trunc");
  AddFill(&net2, "x", {1, 1, 4, 4}, std::vector<float>(16, 1.f));
  auto* op2 = AddOp(&net2, "MaxPool", {"x"}, {"y"});
  *op2->add_arg() = Int("kernel", 2);
  *op2->add_arg() = Ints("pads", {0, 0, -(int64_t{1} << 40), 0});
  ExpectNetError(ws, net2, ErrorKind::kInvalidArgument, {"argument 'pads'", "value #2"});
  // int64 arguments keep their full range.
  caffe2::OperatorDef def;
  def.set_type("X");
  *def.add_arg() = Int("big", int64_t{1} << 40);
  ArgumentHelper args(def);
  CHECK(args.GetSingleArgument<int64_t>("big", 0) == (int64_t{1} << 40));
  CHECK_THROWS_WITH(args.GetSingleArgument<int>("big", 0), Catch::Contains("'big'"));
  CHECK_THROWS_WITH(args.GetSingleArgument<uint8_t>("big", 0), Catch::Contains("8-bit"));
}

TEST_CASE("hostile: names with NUL bytes are refused where they become messages or paths", "[hostile]") {
  Workspace ws;
  const std::string nul_name("a\0b", 3);
  caffe2::NetDef net = NetOf("nul_blob");
  AddFill(&net, nul_name, {1}, {1});
  ExpectNetError(ws, net, ErrorKind::kInvalidArgument, {"NUL", "a\\x00b", "operator #0"});
  caffe2::NetDef net2 = NetOf(std::string("nul\0net", 7));
  AddFill(&net2, "x", {1}, {1});
  ExpectNetError(ws, net2, ErrorKind::kInvalidArgument, {"net name", "nul\\x00net"});
  CHECK_THROWS_WITH(ws.CreateBlob(nul_name), Catch::Contains("NUL"));
  // Save to a path with a NUL (it would be cut at the NUL and write another file).
  TempDir dir;
  caffe2::NetDef save = NetOf("nul_save");
  AddFill(&save, "x", {1}, {1});
  auto* op = AddOp(&save, "Save", {"x"}, {});
  caffe2::Argument db;
  db.set_name("db");
  db.set_s(dir.File("ck") + std::string("\0.evil", 6));
  *op->add_arg() = db;
  ExpectNetError(ws, save, ErrorKind::kInvalidArgument, {"NUL", "Save"});
  CHECK_FALSE(std::filesystem::exists(dir.File("ck")));
}

// ---- item 2: limits before allocation ----------------------------------------------------------

TEST_CASE("hostile: a 7-byte string TensorProto claiming 2^26 strings fails fast without allocating", "[hostile]") {
  // Used to allocate 2^26 std::string (2.26 GB) before counting string_data.
  caffe2::TensorProto p;
  p.add_dims(int64_t{1} << 26);
  p.set_data_type(caffe2::TensorProto::STRING);
  std::string bytes;
  REQUIRE(p.SerializeToString(&bytes));
  CHECK(bytes.size() == 7);
  for (int64_t d : {int64_t{1} << 26, int64_t{1} << 40, k2p62}) {
    p.set_dims(0, d);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(TensorFromProto(p), (Catch::Contains("string_data") && Catch::Contains("expected")) ||
                                              Catch::Contains("too many elements"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  }
  // The same for a float tensor with 18 bytes of raw_data claiming 2^62 elements.
  caffe2::TensorProto f;
  f.add_dims(k2p62);
  f.set_data_type(caffe2::TensorProto::FLOAT);
  f.set_raw_data("0123");
  CHECK_THROWS_WITH(TensorFromProto(f), Catch::Contains("too many elements"));
  f.set_dims(0, int64_t{1} << 40);
  CHECK_THROWS_WITH(TensorFromProto(f), Catch::Contains("raw_data") && Catch::Contains("4 bytes"));
}

TEST_CASE("hostile: chunked tensors are checked for coverage before allocating", "[hostile]") {
  // One chunk of 1 element claiming a tensor of 2^31 floats (8 GiB) must not allocate the tensor:
  // with a 1 MiB cap, allocating first would report the cap instead of the missing chunks.
  LimitOverride cap(Limit::kMaxTensorBytes, 1 << 20);
  caffe2::BlobProto b;
  b.set_name("w");
  b.set_type("Tensor");
  auto* t = b.mutable_tensor();
  t->add_dims(int64_t{1} << 31);
  t->set_data_type(caffe2::TensorProto::FLOAT);
  t->add_float_data(1.f);
  t->mutable_segment()->set_begin(0);
  t->mutable_segment()->set_end(1);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(TensorFromBlobProtos({b}), Catch::Contains("cover 1 of 2147483648"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
}

TEST_CASE("hostile: a tiny minidb file claiming 2 GiB records fails fast", "[hostile]") {
  // A 440-byte file given to Load used to take 3.9 GB and 6 s.
  TempDir dir;
  std::string bytes;
  const int32_t lens[2] = {0x7fffffff, 0x7fffffff};
  bytes.append(reinterpret_cast<const char*>(lens), 8);
  bytes += std::string(432, 'x');
  const std::string path = dir.Write("evil.minidb", bytes);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(ReadMiniDB(path), Catch::Contains("truncated") && Catch::Contains("432 bytes are left"));
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  Workspace ws;
  caffe2::NetDef load = NetOf("evil_load");
  auto* op = AddOp(&load, "Load", {}, {"w"});
  caffe2::Argument db;
  db.set_name("db");
  db.set_s(path);
  *op->add_arg() = db;
  ExpectNetError(ws, load, ErrorKind::kInvalidArgument, {"truncated", "evil.minidb", "net 'evil_load'"});
}

TEST_CASE("hostile: the largest-tensor cap names itself and how to raise it", "[hostile]") {
  LimitOverride cap(Limit::kMaxTensorBytes, 1 << 20);
  Workspace ws;
  caffe2::NetDef net = NetOf("capped");
  *AddOp(&net, "ConstantFill", {}, {"big"})->add_arg() = Ints("shape", {1024, 1024});  // 4 MiB
  ExpectNetError(ws, net, ErrorKind::kOutOfMemory,
                 {"largest-tensor cap of 1 MiB", "HETNET_MAX_TENSOR_BYTES", "float32[1024, 1024]",
                  "while allocating output 'big'", "operator #0 (ConstantFill)"});
  caffe2::NetDef ok = NetOf("under_cap");
  *AddOp(&ok, "ConstantFill", {}, {"small"})->add_arg() = Ints("shape", {256, 256});  // 256 KiB
  ws.RunNetOnce(ok);
  CHECK(ws.GetBlobOrThrow("small").GetTensor().numel() == 65536);
}

TEST_CASE("hostile: the total-workspace-bytes cap counts a workspace and its children", "[hostile]") {
  LimitOverride cap(Limit::kMaxWorkspaceBytes, 1000);
  auto fill = [](const std::string& net_name, const std::string& out, int64_t n, const char* type = "") {
    caffe2::NetDef net = NetOf(net_name);
    net.set_type(type);
    *AddOp(&net, "ConstantFill", {}, {out})->add_arg() = Ints("shape", {n});
    return net;
  };
  Workspace ws;
  RunGoodNet(ws);  // 8 bytes ('good_out'; each ExpectNetError runs it again)
  ws.RunNetOnce(fill("a", "a", 100));  // 408 bytes
  ws.RunNetOnce(fill("b", "b", 100, "dag"));  // 808 (a DAG net's worker threads charge it too)
  CHECK(WorkspaceBytes(&ws) == 808);
  for (const char* type : {"", "dag"}) {
    INFO(type);
    ExpectNetError(ws, fill("over", "c", 100, type), ErrorKind::kOutOfMemory,
                   {"total-workspace-bytes cap of 1000 bytes", "HETNET_MAX_WORKSPACE_BYTES", "hetnet::SetLimit",
                    "float32[100]", "holding 808 bytes", "while allocating output 'c'", "net 'over'"});
    CHECK(WorkspaceBytes(&ws) == 808);  // the refused allocation left no charge behind
  }
  // Reallocating a blob counts only the growth (the old memory is freed); freeing memory returns it.
  ws.RunNetOnce(fill("grow", "b", 148));
  CHECK(WorkspaceBytes(&ws) == 1000);
  CHECK(ws.RemoveBlob("a"));
  CHECK(WorkspaceBytes(&ws) == 600);
  ws.RunNetOnce(fill("now_fits", "c", 100));
  CHECK(WorkspaceBytes(&ws) == 1000);
  CHECK(ws.RemoveBlob("c"));

  // A child counts toward its parent's total: the parent's tensors and a child's share the cap.
  Workspace child(&ws);
  ExpectNetError(child, fill("child_over", "d", 101), ErrorKind::kOutOfMemory,
                 {"total-workspace-bytes cap", "counted with its parent's", "holding 600 bytes",
                  "while allocating output 'd'"});
  child.RunNetOnce(fill("child_fits", "d", 98));
  CHECK(WorkspaceBytes(&child) == 400);
  CHECK(WorkspaceBytes(&ws) == 1000);

  // A Predictor: the init net's weights (parent) plus each run's tensors (child) stay under the cap.
  caffe2::NetDef init = fill("init", "w", 200);  // 800 bytes of weights
  caffe2::NetDef predict = NetOf("predict");
  predict.add_external_input("w");
  predict.add_external_input("x");
  predict.add_external_output("y");
  AddOp(&predict, "Add", {"w", "x"}, {"y"});
  Predictor p(init, predict);
  try {
    p.Run(Predictor::TensorMap{{"x", FloatTensor({200}, std::vector<float>(200, 1.f))}});
    FAIL("a run over the cap succeeded");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kOutOfMemory);
    CHECK_THAT(e.what(), Catch::Contains("total-workspace-bytes cap") && Catch::Contains("'y'"));
  }
  SetLimit(Limit::kMaxWorkspaceBytes, 2000);
  auto out = p.Run(Predictor::TensorMap{{"x", FloatTensor({200}, std::vector<float>(200, 1.f))}});
  CHECK(out.at("y").data<float>()[0] == 1.f);
}

TEST_CASE("hostile: the operator-count and DAG worker caps", "[hostile]") {
  Workspace ws;
  {
    LimitOverride cap(Limit::kMaxNetOps, 10);
    caffe2::NetDef net = NetOf("many_ops");
    AddFill(&net, "x", {1}, {1});
    for (int i = 0; i < 11; ++i) AddOp(&net, "Relu", {"x"}, {"x"});
    ExpectNetError(ws, net, ErrorKind::kInvalidArgument,
                   {"operators-per-net cap of 10", "HETNET_MAX_NET_OPS", "net 'many_ops'"});
  }
  caffe2::NetDef dag = NetOf("many_workers");
  dag.set_type("dag");
  dag.set_num_workers(1000000);
  AddFill(&dag, "x", {1}, {1});
  ExpectNetError(ws, dag, ErrorKind::kInvalidArgument,
                 {"num_workers (1000000)", "DAG worker cap of 1024", "HETNET_MAX_DAG_WORKERS", "net 'many_workers'"});
}

TEST_CASE("hostile: proto files over the proto-size cap are refused before reading", "[hostile]") {
  TempDir dir;
  caffe2::NetDef net = NetOf("n");
  AddFill(&net, "x", {4}, {1, 2, 3, 4});
  const std::string path = dir.Write("net.pb", SerializeProto(net));
  LimitOverride cap(Limit::kMaxProtoBytes, 16);
  CHECK_THROWS_WITH(ReadNetDef(path), Catch::Contains("proto-size cap of 16 bytes") &&
                                          Catch::Contains("HETNET_MAX_PROTO_BYTES") && Catch::Contains("net.pb"));
}

TEST_CASE("hostile: deeply nested NetDefs (text and binary) fail cleanly at the nesting-depth cap", "[hostile]") {
  // 3,000 levels of op { arg { n { ... } } } in text format overflowed the stack of protobuf's
  // text parser (no recursion limit by default): SIGSEGV.
  std::string text = "name: \"deep\" ";
  for (int i = 0; i < 3000; ++i) text += "op { arg { n { ";
  for (int i = 0; i < 3000; ++i) text += "} } } ";
  caffe2::NetDef net;
  CHECK_THROWS_WITH(ParseProtoFromString(text, &net, "deep.pbtxt"),
                    Catch::Contains("nesting-depth cap of 100") && Catch::Contains("HETNET_MAX_PROTO_DEPTH"));
  // The same nesting in binary.
  std::string bin = wire::Bytes(1, "x");  // NetDef.name
  for (int i = 0; i < 3000; ++i) bin = wire::Bytes(2, wire::Bytes(5, wire::Bytes(8, bin)));  // op.arg.n
  CHECK_THROWS_WITH(ParseProtoFromString(bin, &net, "deep.pb"), Catch::Contains("deep.pb"));
  // Shallow nesting still parses.
  std::string ok = "name: \"ok\" ";
  for (int i = 0; i < 10; ++i) ok += "op { arg { name: \"a\" n { ";
  for (int i = 0; i < 10; ++i) ok += "} } } ";
  ParseProtoFromString(ok, &net, "ok.pbtxt");
  CHECK(net.name() == "ok");
}

TEST_CASE("hostile: an allocation failing at every N of a net is a named out-of-memory error", "[hostile]") {
  // Count the tensor allocations of one run of a small MLP, then fail each one in turn.
  caffe2::NetDef init, predict;
  MakeMlp(&init, &predict);
  auto fresh = [&](Workspace& ws) {
    ws.RunNetOnce(init);
    *ws.CreateBlob("data")->GetMutable<Tensor>() = FloatTensor({2, 4}, {1, 2, 3, 4, -1, -2, -3, -4});
  };
  Workspace ref;
  fresh(ref);
  SetTensorAllocationFailureAt(0);
  ref.RunNetOnce(predict);
  const int64_t allocations = SetTensorAllocationFailureAt(0);
  REQUIRE(allocations >= 3);
  const std::vector<float> expected = Values(ref.GetBlobOrThrow("prob").GetTensor());
  for (int64_t n = 1; n <= allocations; ++n) {
    INFO("failing allocation #" << n << " of " << allocations);
    Workspace ws;
    fresh(ws);
    SetTensorAllocationFailureAt(n);
    try {
      ws.RunNetOnce(predict);
      FAIL("no error");
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.kind() == ErrorKind::kOutOfMemory);
      CHECK_THAT(e.what(), Catch::Contains("injected") && Catch::Contains("net 'mlp'") &&
                               Catch::Contains("while allocating output "));
    }
    SetTensorAllocationFailureAt(0);
    // The workspace is usable: the same net now runs and gives the reference result.
    ws.RunNetOnce(predict);
    CHECK(Values(ws.GetBlobOrThrow("prob").GetTensor()) == expected);
    RunGoodNet(ws);
  }
}

// ---- item 4: no hangs or blowups from arguments -----------------------------------------------

TEST_CASE("hostile: LRN with a huge size finishes and equals a size covering all channels", "[hostile]") {
  // size 2^31-1 used to loop 2^31 times per element.
  Workspace ws;
  caffe2::NetDef net = NetOf("lrn_huge");
  std::vector<float> xs(2 * 6 * 3 * 3);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
  AddFill(&net, "x", {2, 6, 3, 3}, xs);
  for (int64_t size : {int64_t{2147483647}, int64_t{13}}) {
    auto* op = AddOp(&net, "LRN", {"x"}, {size == 13 ? "y13" : "ybig", size == 13 ? "s13" : "sbig"});
    *op->add_arg() = Int("size", size);
    caffe2::Argument a;
    a.set_name("alpha");
    a.set_f(1e-3f * static_cast<float>(size));  // alpha / size equal in both
    *op->add_arg() = a;
    caffe2::Argument b;
    b.set_name("beta");
    b.set_f(0.75f);
    *op->add_arg() = b;
  }
  const auto t0 = std::chrono::steady_clock::now();
  ws.RunNetOnce(net);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  // Both windows cover every channel: same scale (alpha / size equal), same output.
  const auto big = Values(ws.GetBlobOrThrow("ybig").GetTensor());
  const auto small = Values(ws.GetBlobOrThrow("y13").GetTensor());
  REQUIRE(big.size() == small.size());
  for (size_t i = 0; i < big.size(); ++i) CHECK(big[i] == Approx(small[i]).epsilon(1e-5));
  RunGoodNet(ws);
}

TEST_CASE("hostile: LRN and its gradient are linear in the elements for any size and channel count", "[hostile]") {
  // 20,000 channels with a window covering them all: per-element windows would be 4e8 (forward)
  // and 8e12 (gradient) steps; the CPU kernels slide one window over the channels instead.
  Workspace ws;
  const int64_t C = 20000;
  caffe2::NetDef net = NetOf("lrn_wide");
  std::vector<float> xs(static_cast<size_t>(C));
  for (int64_t i = 0; i < C; ++i) xs[i] = 0.01f * static_cast<float>(i % 13) - 0.05f;
  AddFill(&net, "x", {1, C, 1, 1}, xs);
  AddFill(&net, "dy", {1, C, 1, 1}, std::vector<float>(static_cast<size_t>(C), 1.f));
  auto* op = AddOp(&net, "LRN", {"x"}, {"y"});
  *op->add_arg() = Int("size", 2147483647);
  auto* grad = AddOp(&net, "LRNGradient", {"x", "y", "dy"}, {"dx"});
  *grad->add_arg() = Int("size", 2147483647);
  const auto t0 = std::chrono::steady_clock::now();
  ws.RunNetOnce(net);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  CHECK(ws.GetBlobOrThrow("dx").GetTensor().numel() == C);
  RunGoodNet(ws);
}

TEST_CASE("hostile: net creation is near-linear in operators and blobs", "[hostile]") {
  // A chain of ops each writing a new blob: was quadratic (100k ops: 48 s). 20k here, bounded loosely.
  auto build = [](int n) {
    caffe2::NetDef net = NetOf("chain");
    AddFill(&net, "b0", {1}, {1});
    for (int i = 0; i < n; ++i) AddOp(&net, "Relu", {"b" + std::to_string(i)}, {"b" + std::to_string(i + 1)});
    return net;
  };
  auto seconds = [&](int n) {
    Workspace ws;
    const caffe2::NetDef net = build(n);
    const auto t0 = std::chrono::steady_clock::now();
    ws.CreateNet(net);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double t5 = seconds(5000), t20 = seconds(20000);
  INFO("5k ops: " << t5 << " s, 20k ops: " << t20 << " s");
  CHECK(t20 < 4.0);
  CHECK(t20 < 10 * t5 + 0.2);  // quadratic would be ~16x
}
