// Bad input of every kind gives a clear hetnet::Error naming net, operator (index and type) and
// blob, and the Workspace stays usable afterwards.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/net.h"
#include "core/proto_io.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

namespace {

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

// Runs net (create + run) in ws and checks the error text contains every part.
void ExpectNetError(Workspace& ws, const caffe2::NetDef& net, const std::vector<std::string>& parts) {
  try {
    ws.RunNetOnce(net);
    FAIL("net '" << net.name() << "' ran without error");
  } catch (const Error& e) {
    INFO(e.what());
    for (const auto& p : parts) CHECK_THAT(e.what(), Catch::Contains(p));
  }
  RunGoodNet(ws);
}

caffe2::NetDef OneOpNet(const std::string& name, const std::string& type, std::vector<std::string> ins,
                        std::vector<std::string> outs) {
  caffe2::NetDef net;
  net.set_name(name);
  for (const auto& i : ins) net.add_external_input(i);
  if (std::find(ins.begin(), ins.end(), "x") == ins.end()) net.add_external_input("x");
  AddOp(&net, "Relu", {"x"}, {"first"});  // a good op (on float x, fed by every test) before the bad one
  AddOp(&net, type, ins, outs);
  return net;
}

}  // namespace

TEST_CASE("bad input: truncated and garbage NetDef files, then a good net", "[io][bad_input]") {
  TempDir dir;
  Workspace ws;
  caffe2::NetDef net = OneOpNet("n", "Relu", {"x"}, {"y"});  // not run: only its bytes are used
  const std::string bytes = SerializeProto(net);
  for (const std::string& content : {bytes.substr(0, bytes.size() - 4), std::string("\x08\xff\xff\x00zz", 6)}) {
    const std::string path = dir.Write("bad.pb", content);
    CHECK_THROWS_WITH(ReadNetDef(path), Catch::Contains(path) && Catch::Contains("caffe2.NetDef"));
  }
  RunGoodNet(ws);
}

TEST_CASE("bad input: unknown operator suggests near names", "[io][bad_input]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {1, 2});
  ExpectNetError(ws, OneOpNet("typo_net", "Rleu", {"x"}, {"y"}),
                 {"net 'typo_net'", "operator #1 (Rleu)", "unknown operator type 'Rleu'", "Relu"});
}

TEST_CASE("bad input: unknown device types", "[io][bad_input]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {1, 2});
  for (int type : {2, 7}) {
    caffe2::NetDef net = OneOpNet("dev_net", "Relu", {"x"}, {"y"});
    net.mutable_op(1)->mutable_device_option()->set_device_type(type);
    ExpectNetError(ws, net, {"net 'dev_net'", "device type " + std::to_string(type), "not supported"});
  }
}

TEST_CASE("bad input: a GPU that does not exist", "[io][bad_input]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {1, 2});
  caffe2::NetDef net = OneOpNet("gpu_net", "Relu", {"x"}, {"y"});
  net.mutable_op(1)->mutable_device_option()->set_device_type(1);
  net.mutable_op(1)->mutable_device_option()->set_device_id(99);  // no machine has 100 GPUs
  try {
    ws.RunNetOnce(net);
    FAIL("no error");
  } catch (const Error& e) {
    INFO(e.what());
    CHECK_THAT(e.what(), Catch::Contains("gpu_net") && Catch::Contains("cuda:99"));
    CHECK_THAT(e.what(), Catch::Contains("without CUDA") || Catch::Contains("CUDA device(s)"));
  }
  RunGoodNet(ws);
}

TEST_CASE("bad input: wrong input and output counts", "[io][bad_input]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {1, 2});
  ExpectNetError(ws, OneOpNet("count_net", "Relu", {"x", "x"}, {"y"}), {"net 'count_net'", "operator #1 (Relu)", "input"});
  // FC with one input whose shape is not known before running.
  ExpectNetError(ws, OneOpNet("count_net2", "FC", {"x_unfed"}, {"y"}),
                 {"net 'count_net2'", "operator #1 (FC)", "3 input(s)"});
}

// With the input's shape known, the placement pass must check the input count before any shape
// inference indexes the inputs (this once crashed).
TEST_CASE("bad input: FC given one input of known shape", "[io][bad_input]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {1, 2});
  ExpectNetError(ws, OneOpNet("count_net3", "FC", {"x"}, {"y"}),
                 {"net 'count_net3'", "operator #1 (FC)", "3 input(s)"});
}

TEST_CASE("bad input: wrong shapes and dtypes name the blob", "[io][bad_input]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2, 4}, std::vector<float>(8, 1.f));
  *ws.CreateBlob("w")->GetMutable<Tensor>() = FloatTensor({3, 5}, std::vector<float>(15, 1.f));
  *ws.CreateBlob("b")->GetMutable<Tensor>() = FloatTensor({3}, {0, 0, 0});
  ExpectNetError(ws, OneOpNet("shape_net", "FC", {"x", "w", "b"}, {"y"}),
                 {"net 'shape_net'", "operator #1 (FC)", "'w'", "'x'"});
  Tensor ints({2, 4}, DataType::Int32);
  for (int i = 0; i < 8; ++i) ints.mutable_data<int32_t>()[i] = i;
  *ws.CreateBlob("xi")->GetMutable<Tensor>() = ints;
  *ws.CreateBlob("w4")->GetMutable<Tensor>() = FloatTensor({3, 4}, std::vector<float>(12, 1.f));
  ExpectNetError(ws, OneOpNet("dtype_net", "FC", {"xi", "w4", "b"}, {"y"}),
                 {"net 'dtype_net'", "operator #1 (FC)", "'xi'", "int32"});
}

TEST_CASE("bad input: a missing input blob", "[io][bad_input]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({2}, {1, 2});
  caffe2::NetDef net = OneOpNet("missing_net", "Relu", {"x"}, {"y"});
  net.mutable_op(1)->set_input(0, "not_there");
  ExpectNetError(ws, net, {"net 'missing_net'", "operator #1 (Relu)", "'not_there'"});
  // Declared as external input but never fed.
  caffe2::NetDef unfed = OneOpNet("unfed_net", "Relu", {"x"}, {"y"});
  unfed.add_external_input("never_fed");
  unfed.mutable_op(1)->set_input(0, "never_fed");
  ExpectNetError(ws, unfed, {"net 'unfed_net'", "operator #1 (Relu)", "'never_fed'"});
}
