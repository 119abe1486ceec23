#include "operators/onnx_loop_op.h"

#include <limits>
#include <string>
#include <vector>

#include "core/gradient.h"
#include "operators/tensor_sequence.h"

namespace hetnet {

OnnxLoopOp::OnnxLoopOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      has_trip_count_(GetSingleArgument<int64_t>("has_trip_count", 0) != 0),
      has_cond_(GetSingleArgument<int64_t>("has_cond", 0) != 0),
      num_carried_(OnnxCountArg(*this, "num_carried")),
      max_iterations_(GetSingleArgument<int64_t>("max_iterations", kDefaultOnnxMaxIterations)),
      body_(*this, ws, "body", int{has_trip_count_} + int{has_cond_} + num_carried_) {
  HN_CHECK_KIND(kInvalidArgument, num_carried_ >= 0 && num_carried_ <= OutputSize(), type(), " '", def.name(),
                "': num_carried ", num_carried_, " must be in [0, ", OutputSize(), "] (the number of outputs)");
  HN_CHECK_KIND(kInvalidArgument, max_iterations_ > 0, type(), " '", def.name(), "': max_iterations must be positive");
  HN_CHECK_KIND(kInvalidArgument, body_.num_locals() == 2 + num_carried_, type(), " '", def.name(), "': the body has ",
                body_.num_locals(), " inputs, expected 2 + ", num_carried_, " (iteration number, condition, carried values)");
  HN_CHECK_KIND(kInvalidArgument, body_.num_outputs() == 1 + OutputSize(), type(), " '", def.name(), "': the body has ",
                body_.num_outputs(), " outputs, expected 1 + ", OutputSize(),
                " (condition, then one per Loop output: carried values and scan outputs)");
}

void OnnxLoopOp::RunOnDevice() {
  int in = 0;
  int64_t trip_count = std::numeric_limits<int64_t>::max();
  if (has_trip_count_) {
    const Tensor& m = Input(in);
    HN_CHECK_KIND(kInvalidArgument, m.dtype() == DataType::Int64 && m.numel() == 1, type(), " '", def().name(),
                  "': the trip count '", def().input(in), "' must be one int64, got ", DataTypeName(m.dtype()), " ",
                  ShapeToString(m.shape()));
    trip_count = m.data<int64_t>()[0];
    HN_CHECK_KIND(kInvalidArgument, trip_count >= 0, type(), " '", def().name(), "': the trip count '", def().input(in),
                  "' is negative (", trip_count, ")");
    ++in;
  }
  bool cond = true;
  if (has_cond_) cond = ReadOnnxCondition(*this, Input(in), "the condition '" + def().input(in) + "'"), ++in;
  HN_CHECK_KIND(kInvalidArgument, has_cond_ || trip_count <= max_iterations_, type(), " '", def().name(),
                "': the trip count ", has_trip_count_ ? "'" + def().input(0) + "' " : std::string("(none given) "),
                trip_count == std::numeric_limits<int64_t>::max() ? std::string("is unbounded") : std::to_string(trip_count),
                " and there is no condition: more than max_iterations (", max_iterations_, ")");
  // A carried value may be a sequence or an optional (operators/tensor_sequence.h): copied as a value.
  for (int j = 0; j < num_carried_; ++j)
    if (InputBlob(in + j)->IsTensor() || !CopyOnnxValue(*InputBlob(in + j), body_.LocalBlob(2 + j)))
      body_.Local(2 + j)->CopyFrom(Input(in + j));
  const int num_scans = OutputSize() - num_carried_;
  std::vector<std::vector<Tensor>> scans(num_scans);
  std::vector<Tensor> next(num_carried_);
  std::vector<Blob> next_values(num_carried_);  // carried sequences / optionals
  for (int64_t it = 0; cond && it < trip_count; ++it) {
    HN_CHECK_KIND(kInvalidArgument, it < max_iterations_, type(), " '", def().name(), "': the loop ran max_iterations (",
                  max_iterations_, ") iterations and its condition still holds (arg max_iterations raises the cap)");
    Tensor* iter = body_.Local(0);
    iter->Resize({});
    iter->mutable_data<int64_t>()[0] = it;
    Tensor* c = body_.Local(1);
    c->Resize({});
    c->mutable_data<bool>()[0] = cond;
    body_.Run();
    cond = ReadOnnxCondition(*this, body_.Output(0), "the body's condition output");
    for (int j = 0; j < num_carried_; ++j)
      if (const Blob& v = body_.OutputValue(1 + j); !v.IsTensor()) CopyOnnxValue(v, &next_values[j]);
      else next[j].CopyFrom(body_.Output(1 + j)), next_values[j].Reset();
    for (int k = 0; k < num_scans; ++k) {
      scans[k].emplace_back();
      scans[k].back().CopyFrom(body_.Output(1 + num_carried_ + k));
    }
    for (int j = 0; j < num_carried_; ++j) {
      if (!next_values[j].empty()) *body_.LocalBlob(2 + j) = next_values[j], next_values[j].Reset();
      else body_.Local(2 + j)->ShareData(next[j]), next[j] = Tensor();
    }
  }
  for (int j = 0; j < num_carried_; ++j)
    if (body_.LocalBlob(2 + j)->IsTensor()) Output(j)->CopyFrom(*body_.Local(2 + j));
    else CopyOnnxValue(*body_.LocalBlob(2 + j), OutputBlob(j));
  for (int k = 0; k < num_scans; ++k)
    StackOnnxParts(*this, scans[k], 0, false, "scan output '" + def().output(num_carried_ + k) + "'",
                   Output(num_carried_ + k));
}

OPERATOR_SCHEMA(OnnxLoop)
    .NumInputs(0, 1 << 30)
    .NumOutputs(0, 1 << 30)
    .SetDoc("ONNX Loop: runs the NetDef argument body in a child workspace while the condition holds and "
            "fewer than M iterations ran (at most max_iterations); carries values and stacks scan outputs.");
REGISTER_CPU_OPERATOR(OnnxLoop, OnnxLoopOp);
NO_GRADIENT(OnnxLoop);

}  // namespace hetnet
