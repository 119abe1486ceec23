// The ONNX control-flow operators OnnxIf, OnnxLoop and OnnxScan (operators/onnx_{if,loop,scan}_op)
// on hand-made NetDefs: what the ONNX importer emits (tests/python/onnx/test_onnx_control_flow.py
// covers that path against onnx's reference evaluator) and what it never emits: missing or mistyped
// subnet arguments, argument counts that do not fit the operator, wrong condition / trip-count
// tensors. Every one is a hetnet::Error naming the operator, never a crash.
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace {

using namespace optest;

caffe2::Argument NetArg(const std::string& name, const caffe2::NetDef& net) {
  caffe2::Argument a;
  a.set_name(name);
  *a.mutable_n() = net;
  return a;
}

caffe2::NetDef Subnet(const std::string& name, const std::vector<caffe2::OperatorDef>& ops,
                      const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  caffe2::NetDef net;
  net.set_name(name);
  for (const auto& op : ops) *net.add_op() = op;
  for (const auto& i : inputs) net.add_external_input(i);
  for (const auto& o : outputs) net.add_external_output(o);
  return net;
}

// If(c, x) -> y: y = 2 x (then) or -x (else), the branches reading the outer x.
caffe2::OperatorDef IfOp(std::vector<caffe2::Argument> extra = {}, bool with_then = true) {
  std::vector<caffe2::Argument> args{ArgStrings("outer_inputs", {"x"}),
                                     NetArg("else_net", Subnet("else", {MakeOp("Negative", {"x"}, {"e"})}, {}, {"e"}))};
  if (with_then)
    args.push_back(NetArg("then_net", Subnet("then", {MakeOp("Scale", {"x"}, {"t"}, {ArgF("scale", 2.f)})}, {}, {"t"})));
  for (auto& a : extra) args.push_back(a);
  return MakeOp("OnnxIf", {"c", "x"}, {"y"}, args);
}

TEST_CASE("OnnxIf runs the branch the condition picks in a child workspace", "[ops][onnx_control_flow]") {
  for (bool flag : {true, false}) {
    Workspace ws;
    Feed<bool>(ws, "c", {}, {flag});
    Feed<float>(ws, "x", {2}, {1.5f, -3.f});
    RunOp(ws, IfOp());
    const std::vector<float> want = flag ? std::vector<float>{3.f, -6.f} : std::vector<float>{-1.5f, 3.f};
    CHECK(FetchVec<float>(ws, "y") == want);
    CHECK(FetchVec<float>(ws, "x") == std::vector<float>{1.5f, -3.f});
    CHECK_FALSE(ws.HasBlob(flag ? "t" : "e"));  // the branch's own blobs stay in the child
  }
}

TEST_CASE("OnnxIf refuses malformed arguments and conditions", "[ops][onnx_control_flow]") {
  Workspace ws;
  Feed<bool>(ws, "c", {}, {true});
  Feed<float>(ws, "x", {2}, {1.f, 2.f});
  RequireThrowsWith(ws, IfOp({}, false), {"OnnxIf", "then_net", "missing"});
  RequireThrowsWith(ws, IfOp({ArgI("then_net", 3)}, false), {"OnnxIf", "then_net", "must be a NetDef"});
  auto wrong_outer = IfOp();
  wrong_outer.mutable_arg(0)->add_strings("z");
  RequireThrowsWith(ws, wrong_outer, {"OnnxIf", "outer_inputs names 2 blobs", "1 outer inputs"});
  auto two_outputs = IfOp();
  two_outputs.add_output("y2");
  RequireThrowsWith(ws, two_outputs, {"OnnxIf", "then_net has 1 outputs, the operator 2"});
  Feed<float>(ws, "c", {}, {1.f});
  RequireThrowsWith(ws, IfOp(), {"OnnxIf", "condition 'c'", "bool", "float32"});
  Feed<bool>(ws, "c", {2}, {true, false});
  RequireThrowsWith(ws, IfOp(), {"OnnxIf", "condition 'c'", "one value", "2"});
}

// Loop(M, s0, one) -> (s, trace): s_out = s_in + one; trace stacks every s_out.
caffe2::OperatorDef LoopOp(int64_t num_carried = 1, std::vector<caffe2::Argument> extra = {}) {
  auto body = Subnet("body", {MakeOp("Add", {"s_in", "one"}, {"s_out"})}, {"i", "cond", "s_in"}, {"cond", "s_out", "s_out"});
  std::vector<caffe2::Argument> args{ArgI("has_trip_count", 1), ArgI("num_carried", num_carried),
                                     ArgStrings("outer_inputs", {"one"}), NetArg("body", body)};
  for (auto& a : extra) args.push_back(a);
  return MakeOp("OnnxLoop", {"M", "s0", "one"}, {"s", "trace"}, args);
}

TEST_CASE("OnnxLoop carries values and stacks scan outputs", "[ops][onnx_control_flow]") {
  Workspace ws;
  Feed<int64_t>(ws, "M", {}, {3});
  Feed<float>(ws, "s0", {1}, {0.5f});
  Feed<float>(ws, "one", {1}, {1.f});
  RunOp(ws, LoopOp());
  CHECK(FetchVec<float>(ws, "s") == std::vector<float>{3.5f});
  CHECK(Fetch(ws, "trace").shape() == std::vector<int64_t>{3, 1});
  CHECK(FetchVec<float>(ws, "trace") == std::vector<float>{1.5f, 2.5f, 3.5f});
  Feed<int64_t>(ws, "M", {}, {0});
  RunOp(ws, LoopOp());
  CHECK(FetchVec<float>(ws, "s") == std::vector<float>{0.5f});
  CHECK(Fetch(ws, "trace").numel() == 0);
}

TEST_CASE("OnnxLoop refuses malformed arguments, trip counts and runaway loops", "[ops][onnx_control_flow]") {
  Workspace ws;
  Feed<int64_t>(ws, "M", {}, {-1});
  Feed<float>(ws, "s0", {1}, {0.5f});
  Feed<float>(ws, "one", {1}, {1.f});
  RequireThrowsWith(ws, LoopOp(), {"OnnxLoop", "trip count 'M'", "negative"});
  Feed<int32_t>(ws, "M", {}, {2});
  RequireThrowsWith(ws, LoopOp(), {"OnnxLoop", "trip count 'M'", "int64", "int32"});
  Feed<int64_t>(ws, "M", {}, {1000});
  RequireThrowsWith(ws, LoopOp(1, {ArgI("max_iterations", 10)}), {"OnnxLoop", "no condition", "max_iterations (10)"});
  RequireThrowsWith(ws, LoopOp(1, {ArgI("max_iterations", 0)}), {"OnnxLoop", "max_iterations must be positive"});
  RequireThrowsWith(ws, LoopOp(-1), {"OnnxLoop", "num_carried -1 is out of range"});
  RequireThrowsWith(ws, LoopOp(7), {"OnnxLoop", "inputs before the outer ones"});
  auto long_body = LoopOp();
  long_body.mutable_arg(3)->mutable_n()->add_external_input("extra");
  RequireThrowsWith(ws, long_body, {"OnnxLoop", "the body has 4 inputs, expected 2 + 1"});
  auto broken_body = LoopOp();
  broken_body.mutable_arg(3)->mutable_n()->mutable_external_input()->RemoveLast();
  RequireThrowsWith(ws, broken_body, {"'s_in'", "creating subgraph 'body' of OnnxLoop"});
  // A condition that stays true: stopped at the cap.
  auto forever = LoopOp(1, {ArgI("has_cond", 1), ArgI("max_iterations", 20)});
  forever.set_input(0, "go");
  forever.mutable_arg(0)->set_i(0);
  Feed<bool>(ws, "go", {}, {true});
  RequireThrowsWith(ws, forever, {"OnnxLoop", "ran max_iterations (20) iterations"});
}

TEST_CASE("OnnxScan slices strings along an axis, in both directions", "[ops][onnx_control_flow]") {
  auto body = Subnet("body", {MakeOp("Copy", {"x"}, {"y"})}, {"x"}, {"y", "y"});
  auto def = MakeOp("OnnxScan", {"X"}, {"fwd", "rev"},
                    {ArgI("num_states", 0), ArgI("num_scan_inputs", 1), ArgInts("scan_input_axes", {1}),
                     ArgInts("scan_output_directions", {0, 1}), ArgStrings("outer_inputs", {}), NetArg("body", body)});
  Workspace ws;
  Feed<std::string>(ws, "X", {2, 3}, {"a", "bb", "ccc", "dddd", "e", "ffffffffffffffffffffffffffffff"});
  RunOp(ws, def);
  CHECK(Fetch(ws, "fwd").shape() == std::vector<int64_t>{3, 2});
  CHECK(FetchVec<std::string>(ws, "fwd") ==
        std::vector<std::string>{"a", "dddd", "bb", "e", "ccc", "ffffffffffffffffffffffffffffff"});
  CHECK(FetchVec<std::string>(ws, "rev") ==
        std::vector<std::string>{"ccc", "ffffffffffffffffffffffffffffff", "bb", "e", "a", "dddd"});
  def.mutable_arg(2)->set_ints(0, 2);
  RequireThrowsWith(ws, def, {"OnnxScan", "scan_input_axes 2 is out of range", "'X'"});
  def.mutable_arg(2)->set_ints(0, 0);
  def.mutable_arg(0)->set_i(3);
  RequireThrowsWith(ws, def, {"OnnxScan", "inputs before the outer ones"});
}

}  // namespace
}  // namespace hetnet
