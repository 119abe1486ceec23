// The ONNX sequence / optional operators (operators/onnx_sequence_ops.h) on hand-made NetDefs: values
// made from the inputs' own slices (float and string tensors), sequences never aliasing the tensors
// put in or taken out, and the refusals the importer never emits (a tensor where a sequence is
// expected, a bad dtype argument, positions out of range, a split that does not add up, an empty
// optional read, SequenceMap arguments that do not fit). Each is a hetnet::Error naming the operator
// and the blob. tests/python/onnx/test_onnx_sequences.py covers the import path against onnx's
// reference evaluator.
#include "operators/tensor_sequence.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace {

using namespace optest;

const TensorSequence& Seq(const Workspace& ws, const std::string& name) {
  return ws.GetBlob(name)->Get<TensorSequence>();
}

void FeedIndex(Workspace& ws, const std::string& name, int64_t v) { Feed<int64_t>(ws, name, {}, {v}); }

TEST_CASE("SplitToSequence and ConcatFromSequence round-trip float and string tensors", "[ops][onnx_sequence]") {
  Workspace ws;
  const std::vector<float> x = RandomVec(12, 5);
  Feed<float>(ws, "x", {3, 4}, x);
  Feed<int64_t>(ws, "split", {2}, {1, 3});
  RunOp(ws, MakeOp("SplitToSequence", {"x", "split"}, {"s"}, {ArgI("axis", 1)}));
  const TensorSequence& s = Seq(ws, "s");
  REQUIRE(s.items.size() == 2);
  CHECK(s.items[0].shape() == std::vector<int64_t>{3, 1});
  CHECK(s.items[1].shape() == std::vector<int64_t>{3, 3});
  for (int64_t r = 0; r < 3; ++r) {
    CHECK(s.items[0].data<float>()[r] == x[r * 4]);
    for (int64_t c = 0; c < 3; ++c) CHECK(s.items[1].data<float>()[r * 3 + c] == x[r * 4 + 1 + c]);
  }
  RunOp(ws, MakeOp("ConcatFromSequence", {"s"}, {"y"}, {ArgI("axis", -1)}));
  CHECK(FetchVec<float>(ws, "y") == x);

  Tensor words({2, 2}, DataType::String);
  auto* w = words.mutable_data<std::string>();
  w[0] = "a", w[1] = "bb", w[2] = "ccc", w[3] = "";
  Feed(ws, "w", words);
  RunOp(ws, MakeOp("SplitToSequence", {"w"}, {"ws"}, {ArgI("axis", 0), ArgI("keepdims", 0)}));
  REQUIRE(Seq(ws, "ws").items.size() == 2);
  CHECK(Seq(ws, "ws").items[1].shape() == std::vector<int64_t>{2});
  RunOp(ws, MakeOp("ConcatFromSequence", {"ws"}, {"stacked"}, {ArgI("axis", 0), ArgI("new_axis", 1)}));
  const Tensor& stacked = ws.GetBlob("stacked")->GetTensor();
  CHECK(stacked.shape() == words.shape());
  for (int k = 0; k < 4; ++k) CHECK(stacked.data<std::string>()[k] == w[k]);
}

TEST_CASE("Sequences copy what goes in and out", "[ops][onnx_sequence]") {
  Workspace ws;
  Feed<float>(ws, "a", {2}, {1.f, 2.f});
  RunOp(ws, MakeOp("SequenceConstruct", {"a", "a"}, {"s"}));
  ws.CreateBlob("a")->GetMutableTensor(Device::CPU())->mutable_data_existing<float>()[0] = 9.f;  // after it went in
  FeedIndex(ws, "p", -2);
  RunOp(ws, MakeOp("SequenceAt", {"s", "p"}, {"first"}));
  CHECK(FetchVec<float>(ws, "first") == std::vector<float>{1.f, 2.f});
  ws.CreateBlob("first")->GetMutableTensor(Device::CPU())->mutable_data_existing<float>()[1] = 7.f;  // after it came out
  CHECK(Seq(ws, "s").items[0].data<float>()[1] == 2.f);
  RunOp(ws, MakeOp("SequenceErase", {"s"}, {"shorter"}));  // drops the last
  CHECK(Seq(ws, "s").items.size() == 2);
  RunOp(ws, MakeOp("SequenceLength", {"shorter"}, {"n"}));
  CHECK(FetchVec<int64_t>(ws, "n") == std::vector<int64_t>{1});
  RunOp(ws, MakeOp("OnnxOptional", {}, {"none"}));
  RunOp(ws, MakeOp("OptionalHasElement", {"none"}, {"has"}));
  CHECK(FetchVec<bool>(ws, "has") == std::vector<bool>{false});
  RunOp(ws, MakeOp("OnnxValueCopy", {"shorter"}, {"s2"}));
  CHECK(Seq(ws, "s2").items.size() == 1);
}

TEST_CASE("Sequence and optional operators refuse bad values naming the operator and blob", "[ops][onnx_sequence]") {
  Workspace ws;
  Feed<float>(ws, "x", {2, 3}, RandomVec(6, 1));
  Feed<int32_t>(ws, "i", {1}, {4});
  RunOp(ws, MakeOp("SequenceConstruct", {"x"}, {"s"}));
  RunOp(ws, MakeOp("SequenceEmpty", {}, {"empty"}));
  RunOp(ws, MakeOp("OnnxOptional", {}, {"none"}));
  FeedIndex(ws, "far", 5);
  RequireThrowsWith(ws, MakeOp("SequenceAt", {"x", "far"}, {"y"}), {"SequenceAt", "'x'", "not a sequence"});
  RequireThrowsWith(ws, MakeOp("SequenceAt", {"s", "far"}, {"y"}), {"SequenceAt", "'far'", "out of range"});
  RequireThrowsWith(ws, MakeOp("SequenceInsert", {"s", "i"}, {"y"}), {"SequenceInsert", "'i'", "int32", "float32"});
  RequireThrowsWith(ws, MakeOp("SequenceErase", {"empty"}, {"y"}), {"SequenceErase", "empty sequence", "'empty'"});
  RequireThrowsWith(ws, MakeOp("SequenceEmpty", {}, {"y"}, {ArgI("dtype", 0)}), {"SequenceEmpty", "dtype 0"});
  RequireThrowsWith(ws, MakeOp("ConcatFromSequence", {"empty"}, {"y"}), {"ConcatFromSequence", "'empty'", "is empty"});
  RequireThrowsWith(ws, MakeOp("ConcatFromSequence", {"s"}, {"y"}, {ArgI("axis", 2)}), {"ConcatFromSequence", "axis 2"});
  Feed<int64_t>(ws, "bad_split", {2}, {1, 1});
  RequireThrowsWith(ws, MakeOp("SplitToSequence", {"x", "bad_split"}, {"y"}, {ArgI("axis", 1)}),
                    {"SplitToSequence", "'bad_split'", "sums to 2"});
  RequireThrowsWith(ws, MakeOp("OptionalGetElement", {"none"}, {"y"}), {"OptionalGetElement", "'none'", "empty"});
  RequireThrowsWith(ws, MakeOp("Relu", {"s"}, {"y"}), {"'s'", "not a tensor"});
  RequireThrowsWith(ws, MakeOp("OnnxSequenceMap", {"s"}, {"y"}, {ArgI("num_inputs", 2)}), {"OnnxSequenceMap"});
  RequireThrowsWith(ws, MakeOp("OnnxSequenceMap", {"s"}, {"y"}, {ArgI("num_inputs", 1)}), {"OnnxSequenceMap", "body"});
}

}  // namespace
}  // namespace hetnet
