// ONNX's optional type on CPU (operators/onnx_sequence_ops.h): an optional holding a value is that
// tensor or sequence; an empty one is an OptionalNone blob.
#include <memory>

#include "core/gradient.h"
#include "operators/onnx_sequence_ops.h"

namespace hetnet {

namespace {

// OnnxOptional([x]) -> x, or an empty optional without an input.
class OnnxOptionalOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    if (InputSize() == 0) {
      OutputBlob(0)->Reset(std::make_shared<OptionalNone>());
      return;
    }
    HN_CHECK_KIND(kInvalidArgument, !InputBlob(0)->IsType<OptionalNone>(), OpLabel(*this), ": input '",
                  def().input(0), "' is already an optional (an optional of an optional is not a value)");
    CopyValue(*this, 0, 0);
  }
};

class OptionalHasElementOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    const Blob* b = InputBlob(0);
    HN_CHECK_KIND(kNotFound, !b->empty(), OpLabel(*this), ": input '", def().input(0), "' has no data: it was never fed");
    const bool has = !b->IsType<OptionalNone>();
    *Output(0, {}, DataType::Bool)->mutable_data<bool>() = has;
  }
};

class OptionalGetElementOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    const Blob* b = InputBlob(0);
    HN_CHECK_KIND(kNotFound, !b->empty(), OpLabel(*this), ": input '", def().input(0), "' has no data: it was never fed");
    HN_CHECK_KIND(kInvalidArgument, !b->IsType<OptionalNone>(), OpLabel(*this), ": the optional '", def().input(0),
                  "' is empty");
    CopyValue(*this, 0, 0);
  }
};

class OnnxValueCopyOp final : public Operator<CPUContext> {
 public:
  using Operator::Operator;
  void RunOnDevice() override {
    HN_CHECK_KIND(kNotFound, !InputBlob(0)->empty(), OpLabel(*this), ": input '", def().input(0),
                  "' has no data: it was never fed");
    CopyValue(*this, 0, 0);
  }
};

}  // namespace

OPERATOR_SCHEMA(OnnxOptional).NumInputs(0, 1).NumOutputs(1).SetDoc(
    "ONNX Optional: the input's value (tensor or sequence), or an empty optional without an input.");
REGISTER_CPU_OPERATOR(OnnxOptional, OnnxOptionalOp);
NO_GRADIENT(OnnxOptional);
OPERATOR_SCHEMA(OptionalHasElement).NumInputs(1).NumOutputs(1).SetDoc(
    "ONNX OptionalHasElement: a bool scalar, false for an empty optional.");
REGISTER_CPU_OPERATOR(OptionalHasElement, OptionalHasElementOp);
NO_GRADIENT(OptionalHasElement);
OPERATOR_SCHEMA(OptionalGetElement).NumInputs(1).NumOutputs(1).SetDoc(
    "ONNX OptionalGetElement: the optional's value; an empty optional is an error.");
REGISTER_CPU_OPERATOR(OptionalGetElement, OptionalGetElementOp);
NO_GRADIENT(OptionalGetElement);
OPERATOR_SCHEMA(OnnxValueCopy).NumInputs(1).NumOutputs(1).SetDoc(
    "A copy of any value: tensor, sequence or empty optional (ONNX Identity on a non-tensor).");
REGISTER_CPU_OPERATOR(OnnxValueCopy, OnnxValueCopyOp);
NO_GRADIENT(OnnxValueCopy);

}  // namespace hetnet
