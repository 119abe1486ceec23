// Reshape's allowzero=1 (ONNX's): a 0 in the new shape is an empty dim, not a copy of the input's;
// 0 with -1 is refused; without the argument 0 still copies (Caffe2's rule).
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

TEST_CASE("Reshape allowzero: 0 is an empty dim, from the argument or the shape input", "[ops][reshape]") {
  Workspace ws;
  Feed<float>(ws, "X", {0, 3, 4}, {});
  RunOp(ws, MakeOp("Reshape", {"X"}, {"Y", "old"}, {ArgInts("shape", {3, 4, 0}), ArgI("allowzero", 1)}));
  CHECK(ws.GetBlob("Y")->GetTensor().shape() == std::vector<int64_t>{3, 4, 0});
  Feed<int64_t>(ws, "S", {3}, {4, 0, 3});
  RunOp(ws, MakeOp("Reshape", {"X", "S"}, {"Z", "old2"}, {ArgI("allowzero", 1)}));
  CHECK(ws.GetBlob("Z")->GetTensor().shape() == std::vector<int64_t>{4, 0, 3});
  // Without allowzero the 0 copies input dim 1 (3): 4 x 3 x 3 = 36 elements, X has 0.
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Reshape", {"X", "S"}, {"W", "old3"})), Catch::Contains("has 0 elements"));
  Feed<float>(ws, "A", {2, 3}, {1, 2, 3, 4, 5, 6});
  RunOp(ws, MakeOp("Reshape", {"A"}, {"B", "old4"}, {ArgInts("shape", {0, 3})}));
  CHECK(ws.GetBlob("B")->GetTensor().shape() == std::vector<int64_t>{2, 3});
  CHECK_THROWS_WITH(RunOp(ws, MakeOp("Reshape", {"X"}, {"V", "old5"}, {ArgInts("shape", {0, -1}), ArgI("allowzero", 1)})),
                    Catch::Contains("both 0 and -1"));
}
