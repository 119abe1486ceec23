// What ONNX's control-flow operators (OnnxIf, OnnxLoop, OnnxScan: operators/onnx_if_op,
// onnx_loop_op, onnx_scan_op) share: a subgraph imported as a NetDef argument (onnx/
// convert_control_flow.cc) that runs in a child workspace of the operator's own. The child sees the
// outer blobs by name (ONNX lets a subgraph read outer values); what the subnet makes stays in the
// child. Arg `outer_inputs` lists the outer names the subnet reads, one per operator input from
// `first_outer` on, so that an input renamed by the runtime (a cross-device copy) is still found.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/net.h"
#include "core/operator.h"
#include "core/workspace.h"

namespace hetnet {

class OnnxSubgraph {
 public:
  // op: the control-flow operator (its def names the NetDef argument `arg`). The NetDef's external
  // inputs are the subgraph's own inputs (loop counter, carried values, scan slices): blobs of the
  // child, made before the subnet, written through Local(i) before each Run.
  OnnxSubgraph(const OperatorBase& op, Workspace* ws, const std::string& arg, int first_outer);

  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  int num_locals() const { return static_cast<int>(locals_.size()); }
  // The tensor of local input i, written before Run.
  Tensor* Local(int i) { return locals_.at(i)->GetMutableTensor(Device::CPU()); }
  // The blob of local input i (for a sequence / optional value: operators/tensor_sequence.h).
  Blob* LocalBlob(int i) { return locals_.at(i); }
  void Run();
  // Subgraph output i after Run: a tensor with data, else kInvalidArgument naming the blob.
  const Tensor& Output(int i) const;
  // Subgraph output i after Run as any value (tensor, sequence, empty optional); kInvalidArgument
  // naming the blob when it holds nothing.
  const Blob& OutputValue(int i) const;
  const std::string& arg() const { return arg_; }

 private:
  const OperatorBase& op_;
  std::string arg_;
  std::unique_ptr<Workspace> child_;
  std::vector<Blob*> locals_;
  std::vector<std::string> outputs_;
  // Outer blobs the runtime renamed: child blob name -> operator input index (shared each run).
  std::vector<std::pair<Blob*, int>> renamed_;
  std::unique_ptr<NetBase> net_;
};

// Int argument `name` of op (a count of inputs or outputs): kInvalidArgument unless in [0, 2^20].
int OnnxCountArg(const OperatorBase& op, const std::string& name);

// The one-element bool tensor of input `i` (kInvalidArgument naming the blob otherwise).
bool ReadOnnxCondition(const OperatorBase& op, const Tensor& t, const std::string& what);

// Copies `count` elements (any dtype, strings included) from src at src_offset to dst at dst_offset.
void CopyOnnxElements(const Tensor& src, int64_t src_offset, Tensor* dst, int64_t dst_offset, int64_t count);

// out = x[..., index, ...] along `axis` (that axis removed).
void SliceOnnxAxis(const Tensor& x, int axis, int64_t index, Tensor* out);

// Stacks tensors of one shape and dtype along a new axis `axis` (in [0, rank]); index t of the new
// axis is parts[order[t]]. Refuses parts of differing shapes or dtypes naming `what`.
void StackOnnxParts(const OperatorBase& op, const std::vector<Tensor>& parts, int axis, bool reverse,
                    const std::string& what, Tensor* out);

// A loop never runs more than this many iterations (arg max_iterations overrides it).
constexpr int64_t kDefaultOnnxMaxIterations = int64_t{1} << 20;

}  // namespace hetnet
