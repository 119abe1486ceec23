// Copy operators report bytes and time of their last run (core/copy_timing.h); Predictor::Run
// passes both on per inserted copy. The CUDA copies' timing events run in gpu_tests only.
#include <catch2/catch.hpp>

#include "core/copy_timing.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "test_util_io.h"

using namespace hetnet;
using namespace hetnet_test;

TEST_CASE("a CPU copy reports its bytes and a duration after running", "[copy]") {
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = FloatTensor({1000}, std::vector<float>(1000, 1.5f));
  caffe2::NetDef net;
  // The CPU kernel of the inserted copy types (what a net runs under soft placement).
  auto* def = AddOp(&net, "CopyCPUToGPU", {"x"}, {"y"});
  std::unique_ptr<OperatorBase> op = CreateOperator(*def, &ws);
  const auto* timed = dynamic_cast<const TimedCopy*>(op.get());
  REQUIRE(timed != nullptr);
  CHECK(timed->copy_seconds_last_run() == -1);  // before any run
  CHECK(op->bytes_copied_last_run() == -1);
  op->Run();
  CHECK(op->bytes_copied_last_run() == 4000);
  CHECK(timed->copy_seconds_last_run() >= 0);
  CHECK(timed->copy_seconds_last_run() < 10);
  CHECK(Values(ws.GetBlobOrThrow("y").GetTensor())[999] == 1.5f);
  // Operators that copy nothing do not carry the interface.
  auto* relu = AddOp(&net, "Relu", {"x"}, {"r"});
  CHECK(dynamic_cast<const TimedCopy*>(CreateOperator(*relu, &ws).get()) == nullptr);
}
