// Private to onnx/: a GraphProto attribute of a control-flow node (If's branches, Loop's and Scan's
// body) imported into a NetDef, node by node through the converter registry (the converters are in
// convert_control_flow.cc). The NetDef's external inputs are the subgraph's inputs, its external
// outputs the subgraph's outputs; its initializers and constants are fills at its start. The names
// it reads from outer graphs are listed, so that the operator that runs it can take them as inputs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

// What the caller knows of a subgraph input when the subgraph does not declare it.
struct LocalInfo {
  const std::vector<int64_t>* dims = nullptr;  // nullptr: rank unknown
  caffe2::TensorProto::DataType dtype = caffe2::TensorProto::UNDEFINED;
};

// An imported subgraph (attr names the attribute).
struct Subnet {
  std::string attr;
  caffe2::NetDef net;                   // fills of its constants, then its operators
  int num_fills = 0;                    // the first num_fills ops of net
  std::vector<std::pair<std::string, ConstTensor>> consts;  // what those fills make
  std::vector<std::string> outer;       // outer blobs it reads, sorted
  std::vector<const std::vector<int64_t>*> out_dims;  // per output; nullptr: rank unknown
  std::vector<const ConstTensor*> out_consts;         // per output; nullptr: known only at run time
  std::vector<caffe2::TensorProto::DataType> out_dtypes;  // per output; UNDEFINED: unknown
  bool inlinable = true;                // defines no name the outer graph uses
  ImportState state;                    // what out_dims / out_consts point into
};

// Adds NetDef argument `name` (a subgraph) to op.
void AddNetArg(caffe2::OperatorDef& op, const std::string& name, const caffe2::NetDef& net);

// Emits `type` with inputs `fixed` then the outer blobs the subnets read (arg outer_inputs names
// them); outputs: the node's (omitted ones get fresh names). On CPU (the operators are CPU ones).
caffe2::OperatorDef& EmitControl(ConvertContext& c, const std::string& type, std::vector<std::string> inputs,
                                 const std::vector<const Subnet*>& subs);

// Emits subnet s's constants and operators into c's graph (inlined, on c's node device), each name
// it makes passed through `rename` (identity: none), with the dims the subgraph import knew.
void EmitSubnetOps(ConvertContext& c, const Subnet& s, const std::function<std::string(const std::string&)>& rename);

// "If 'name'" (or "If" for a node without a name), for errors.
std::string NodeName(const ConvertContext& c);

// Imports the GraphProto attribute `attr` of c's node; locals: what the caller knows of its inputs.
// Errors: kInvalidArgument (a missing or malformed subgraph, a name nothing defines), kUnsupported
// naming the subgraph and the node it cannot import. The outer state learns the names it used.
std::unique_ptr<Subnet> ConvertSubgraph(ConvertContext& c, const std::string& attr, const std::vector<LocalInfo>& locals);

}  // namespace hetnet::onnxio
