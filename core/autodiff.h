// Automatic differentiation of a NetDef, as Caffe2's GradientRegistry / IR did it: the forward ops
// are read into SSA form (every write of a blob is a new version), then walked backwards from the
// losses; each op's registered gradient maker (core/gradient.h) emits its gradient ops.
//
// Conventions (Caffe2's, so nets and names match):
//  - a loss without a given gradient is seeded by ConstantFill(loss) -> "<loss>_grad", value=1.0
//    (shaped like the loss), placed on the device of the op that produced the loss;
//  - a blob version whose gradient comes from several ops gets a Sum: the first partial gradient
//    (in backward order) keeps "<blob>_grad", the others are renamed "_<blob>_grad_autosplit_<i>",
//    and Sum([<blob>_grad, _<blob>_grad_autosplit_0, ...]) -> <blob>_grad is placed right before
//    the gradient ops of the op that produced that version (external inputs: at the end);
//  - ops registered with NO_GRADIENT (StopGradient, fills, ...) stop the gradient;
//  - a gradient op that needs a forward blob at a version that was overwritten later (an in-place
//    op after it) is refused, as Caffe2 refused it; in-place ops themselves are fine;
//  - gradient ops carry their forward op's device option; Sum ops the device option of their first
//    partial gradient's op.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {

struct BackwardPass {
  std::vector<caffe2::OperatorDef> ops;         // the gradient ops, in run order
  std::map<std::string, std::string> blob_to_grad;  // forward blob -> its gradient blob
};

// `losses`: blob -> gradient blob name; an empty name means "seed with ConstantFill(1.0)".
// Throws hetnet::Error naming the net, operator index, type and blob (e.g. an op on the path
// from a loss with no gradient maker, or a loss no op produces).
BackwardPass GetBackwardPass(const caffe2::NetDef& net, const std::vector<std::pair<std::string, std::string>>& losses);
BackwardPass GetBackwardPass(const caffe2::NetDef& net, const std::vector<std::string>& losses);

// Appends the backward pass's ops to net; returns blob -> gradient blob.
std::map<std::string, std::string> AddGradientOperators(caffe2::NetDef* net, const std::vector<std::string>& losses);

}  // namespace hetnet
