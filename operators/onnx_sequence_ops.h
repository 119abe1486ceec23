// CPU operators of ONNX's sequence type (a blob holding a TensorSequence, operators/tensor_sequence.h):
//   SequenceConstruct(x...) -> seq            SequenceEmpty() -> seq          (arg dtype, caffe2 enum)
//   SequenceAt(seq, pos) -> tensor            SequenceLength(seq) -> int64 scalar
//   SequenceInsert(seq, x[, pos]) -> seq      SequenceErase(seq[, pos]) -> seq
//   SplitToSequence(x[, split]) -> seq        (args axis, keepdims)
//   ConcatFromSequence(seq) -> tensor         (args axis, new_axis)
// and of ONNX's optional type (operators/onnx_optional_ops.cc; an empty optional is an OptionalNone):
//   OnnxOptional([x]) -> opt   OptionalHasElement(opt) -> bool scalar   OptionalGetElement(opt) -> value
//   OnnxValueCopy(x) -> x (a tensor, sequence or empty optional: ONNX Identity on any value).
// Positions are int32/int64 scalars, negative ones count from the end. Errors (a position out of
// range, a dtype other than the sequence's, shapes that do not concatenate, an empty optional read,
// a tensor where a sequence is expected) are hetnet errors naming the operator and the blob. CPU
// only; no gradients.
#pragma once

#include <cstdint>
#include <string>

#include "core/operator.h"
#include "operators/tensor_sequence.h"

namespace hetnet {

// The sequence in input i (kInvalidArgument naming op and blob when it holds something else).
const TensorSequence& SequenceInput(const OperatorBase& op, int i);
// A CPU deep copy of t (elements of a sequence are never shared with a tensor blob).
Tensor CpuCopyOf(const Tensor& t);
// Copies any value (tensor, sequence, empty optional) of input blob i to output blob o.
void CopyValue(OperatorBase& op, int i, int o);
// "<type> '<name>'" of the operator (its name when it has one), for messages.
std::string OpLabel(const OperatorBase& op);

}  // namespace hetnet
