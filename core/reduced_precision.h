// Reduced-precision inference (issue 16 item 5): an inference net whose argument `hetnet_precision`
// is "bfloat16" (or "bf16") or "float16" ("fp16", "half") runs the operators that have a kernel for
// that dtype on bfloat16 / float16 blobs, with float32 accumulation inside the kernels, and everything
// else in float32. `hetnet run --precision`, `hetnet inspect --precision` and a Predictor (the net
// argument) ask for it; "float32" (the default) leaves the net alone.
//
// Which operators: those whose kernel (operator type, device, engine) registered here what it
// computes in, next to its definition (REGISTER_REDUCED_PRECISION_KERNEL), e.g. the DNNL engine's
// Conv and FC on CPU (bfloat16). The rewrite is the last of the inference rewrites (after BN folding
// and the fusions, so folded weights and fused ops are what gets converted), on the engine shared
// with channels-last (core/blob_form_pass.h):
//   * activations: a Cast to the narrow dtype where a run of narrow operators starts, a Cast back to
//     float32 before any other reader and for the net's outputs, so the net's inputs and outputs keep
//     their float32 dtype and the user's code does not change;
//   * weights (float32 tensors in the workspace that no net writes): a CastConstant op, which
//     converts again only when the weight changed. A Predictor goes further: weights that only
//     narrow operators read are converted in place before its net is created
//     (NarrowConstantsInPlace), as PyTorch's `model.half()` converts parameters, so their float32
//     copies are freed and the memory report shows the halving; BN-folded weights are written
//     narrow by the fold itself (FoldBatchNormWeights' `to`), and in a Predictor the filter it
//     folds is converted too (rounded before the fold: the product is rounded once more);
//   * cheap operators (elementwise, pooling) registered as followers run narrow only where their
//     inputs are narrow already, so no conversion is ever added just for them.
// Where no operator of the net has a kernel for the dtype on its device, the net runs in float32 and
// the rewrite's notes say so.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/types.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

struct ReducedPrecisionKernel {
  std::vector<DataType> dtypes;  // what it computes in (Float16, BFloat16)
  int float_inputs = -1;         // the leading inputs that are float data (-1: all)
  bool follower = false;         // convert only where its float inputs are narrow already
  // A finer check of the op's arguments (null: every op of the type); e.g. a fused activation the
  // narrow kernel does not apply.
  std::function<bool(const caffe2::OperatorDef&, DataType)> accepts;
  int float_outputs = -1;  // the leading outputs that are float data (-1: all; Reshape: 1)
};

void RegisterReducedPrecisionKernel(const std::string& type, DeviceType device, const std::string& engine,
                                    ReducedPrecisionKernel kernel);
const ReducedPrecisionKernel* FindReducedPrecisionKernel(const std::string& type, DeviceType device,
                                                         const std::string& engine);

struct ReducedPrecisionRegisterer {
  ReducedPrecisionRegisterer(const char* type, DeviceType device, const char* engine, ReducedPrecisionKernel k) {
    RegisterReducedPrecisionKernel(type, device, engine, std::move(k));
  }
};
#define REGISTER_REDUCED_PRECISION_KERNEL(type, device, engine, ...)                                 \
  static ::hetnet::ReducedPrecisionRegisterer HN_ANON(hn_rp_reg_)(#type, ::hetnet::DeviceType::device, \
                                                                   engine, __VA_ARGS__)

// The net argument's value: Float (absent, "float32", "fp32"), Float16 or BFloat16; anything else is
// a kInvalidArgument error naming the net and the accepted values.
DataType NetPrecision(const caffe2::NetDef& def);
// Sets the net argument (replacing one there); Float removes it.
void SetNetPrecision(caffe2::NetDef* def, DataType precision);
// "float32", "float16" or "bfloat16"; ParsePrecision accepts those and fp32/fp16/bf16/half.
std::string PrecisionName(DataType t);
DataType ParsePrecision(const std::string& s);

struct ReducedPrecisionInput {
  const caffe2::NetDef* net;
  std::vector<caffe2::OperatorDef>* ops;      // rewritten in place
  std::vector<std::string>* op_notes;         // one per op, kept aligned
  std::set<std::string> keep, taken;          // as for channels-last (core/blob_form_pass.h)
  std::function<bool(const std::string&)> is_constant;  // a float32 weight no net writes
  std::function<bool(const std::string&)> is_narrow_constant;  // a weight already in the dtype
};

// Rewrites *in.ops for `precision`; returns the log lines (one saying why nothing changed, if so).
std::vector<std::string> ConvertToReducedPrecision(ReducedPrecisionInput in, DataType precision);

// For a Predictor: converts, in ws, the float32 weights that only this net's narrow operators read
// (in their float inputs, or as the filter of a BN fold writing the narrow dtype; no other net, no
// external output) into the net's precision, on the CPU or on a GPU (through the host, once).
// Returns their names. Nothing happens when the net asks for float32 or is not rewritten for inference.
std::vector<std::string> NarrowConstantsInPlace(const caffe2::NetDef& def, Workspace* ws);

}  // namespace hetnet
