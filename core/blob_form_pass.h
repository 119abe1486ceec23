// The engine shared by the inference rewrites that keep activations in another form between the
// ops that run on it: channels-last (core/channels_last_pass.h, NHWC blobs between DNNL convolutions)
// and reduced precision (core/reduced_precision.h, bfloat16 / float16 blobs between ops with
// narrow kernels). A policy says which ops run on the form and makes the conversion ops; the engine
// walks the net once, in order:
//   * a converted op reads the form of each of its form inputs: the blob's current value in the
//     form if there is one, else a new blob `<name><suffix>` written by a ToForm op just before it;
//     its form outputs are written under `<name><suffix>` too;
//   * any other reader of a blob whose current value exists only in the form gets the blob itself
//     back first (a FromForm op writing the original name), and so do, at the end of the net, an
//     external output, a blob another net reads, and a blob this net reads before writing it (next
//     run's input);
//   * a follower op (cheap elementwise ops, pooling) is converted only where every form input has
//     its form already, so the form never starts at a cheap op.
// Blobs used only inside a region are no longer written under their own names.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {

struct FormRole {
  bool convert = false;      // the op runs on the form
  bool follower = false;     // only where each form input already has the form
  std::vector<int> inputs;   // input slots that take the form (the others are left as they are)
  std::vector<int> outputs;  // output slots written in the form
};

class BlobFormPolicy {
 public:
  virtual ~BlobFormPolicy() = default;
  virtual std::string Suffix() const = 0;  // of the form's blob names, e.g. "_nhwc"
  virtual FormRole RoleOf(const caffe2::OperatorDef& op) const = 0;
  // Blobs that hold their value in the form under their own name before the net runs (weights
  // converted in place): read as they are, no ToForm op.
  virtual bool InForm(const std::string&) const { return false; }
  // The op that writes `to`, the form of `from`, for `reader` (the first op that needs it, in its
  // input `slot`).
  virtual caffe2::OperatorDef ToForm(const std::string& from, const std::string& to, const caffe2::OperatorDef& reader,
                                     int slot) const = 0;
  // The op that writes `to` back from its form `from`, which `writer` wrote.
  virtual caffe2::OperatorDef FromForm(const std::string& from, const std::string& to,
                                       const caffe2::OperatorDef& writer) const = 0;
  // A converted op's arguments (inputs and outputs are renamed by the engine); returns its note.
  virtual std::string Adapt(caffe2::OperatorDef* op) const = 0;
};

struct BlobFormInput {
  const caffe2::NetDef* net;              // external inputs and outputs
  const std::vector<caffe2::OperatorDef>* ops;
  const std::vector<std::string>* op_notes;  // one per op
  std::set<std::string> keep;             // blobs whose own value must be there after a run
  std::set<std::string> taken;            // names in use (in this net, other nets, external)
};

struct BlobFormResult {
  std::vector<caffe2::OperatorDef> ops;  // the rewritten ops (the caller decides whether to take them)
  std::vector<std::string> op_notes;     // one per op of `ops`
  int anchors = 0;     // converted ops that are not followers
  int followers = 0;   // converted followers
  int switches = 0;    // ToForm and FromForm ops inserted
};

BlobFormResult ConvertBlobForms(BlobFormInput in, const BlobFormPolicy& policy);

// The layout passes' rule (channels-last, blocked): r replaces *ops and *op_notes only when it
// converted a Conv (one with `activation_order`) and has fewer switches than twice those Convs, as
// each conversion saves that Conv's two reorders. Returns the converted Convs (0: nothing taken).
int TakeLayoutIfWorthIt(BlobFormResult* r, std::vector<caffe2::OperatorDef>* ops, std::vector<std::string>* op_notes);

// Sets (or adds) a string argument of op: the policies' Adapt.
void SetStringArgument(caffe2::OperatorDef* op, const std::string& name, const std::string& value);

}  // namespace hetnet
