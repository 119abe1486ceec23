// Private to onnx/: the pieces the importer and the converters share. A converter turns one ONNX node
// into hetnet operators through a ConvertContext (attributes, import-time constants, known ranks,
// fresh blob names, emitting ops on the node's device); converters are looked up in one registry keyed
// by ONNX op type and opset range. Each convert_*.cc file registers its family in one function.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "proto/caffe2.pb.h"

namespace hetnet::onnxio {

// The newest ai.onnx opset the converters were written against (PyPI onnx 1.23.1 defines 28).
constexpr int64_t kNewestOpset = 28;

// A tensor known at import time (an initializer, a Constant node's value, or one folded from them).
struct ConstTensor {
  caffe2::TensorProto::DataType dtype = caffe2::TensorProto::FLOAT;
  std::vector<int64_t> dims;
  std::vector<double> real;        // FLOAT, FLOAT16, DOUBLE
  std::vector<int64_t> integer;    // integer types and BOOL
  std::vector<std::string> text;   // STRING

  int64_t numel() const;
  bool is_real() const;
  // Values as integers (for shapes, axes); refuses reals (kInvalidArgument naming `what`).
  std::vector<int64_t> Ints(const std::string& what) const;
  std::vector<double> Reals() const;  // any numeric dtype
  static ConstTensor Float(std::vector<int64_t> dims, std::vector<double> values);
};

// ONNX element type -> hetnet's (caffe2) type, the narrow ones as core/narrow_types.h numbers them;
// UNDEFINED where hetnet has none (FLOAT6E2M3, ...).
caffe2::TensorProto::DataType DtypeFromOnnx(int32_t onnx_type);
const char* OnnxTypeName(int32_t onnx_type);

// An ONNX TensorProto's value, checked: sizes agree with dims, raw_data has exactly the bytes needed,
// external data stays inside base_dir (empty base_dir: refused). `what` names it in errors.
ConstTensor ConstFromOnnx(const onnx::TensorProto& t, const std::string& base_dir, const std::string& what);

// hetnet converts the narrow types (core/narrow_types.h) on CPU only: a Cast from or to one runs
// there whatever its node's device (the runtime copies around it).
void PinNarrowCastToCPU(caffe2::OperatorDef* cast, caffe2::TensorProto::DataType from,
                        caffe2::TensorProto::DataType to);

// Ops that make blob `name` hold `c` (GivenTensor*Fill, plus a Cast where hetnet has no fill of that
// type), appended to `net` on `device`.
void AppendFill(caffe2::NetDef* net, const std::string& name, const ConstTensor& c,
                const caffe2::DeviceOption& device);

// Argument helpers for emitted ops.
void AddArg(caffe2::OperatorDef& op, const std::string& name, int64_t value);
void AddArgF(caffe2::OperatorDef& op, const std::string& name, float value);
void AddArg(caffe2::OperatorDef& op, const std::string& name, const std::vector<int64_t>& values);
void AddArg(caffe2::OperatorDef& op, const std::string& name, const std::string& value);

// What the whole import knows while converting (owned by the importer).
struct ImportState {
  std::map<std::string, ConstTensor> consts;          // blob -> value known at import time
  // Constants in definition order with the device of their fill; the importer fills only the ones
  // the predict net reads (or that are graph outputs).
  std::vector<std::pair<std::string, caffe2::DeviceOption>> const_order;
  std::map<std::string, std::vector<int64_t>> dims;   // blob -> dims (-1 unknown) where the rank is known
  std::map<std::string, caffe2::TensorProto::DataType> dtypes;  // blob -> dtype the model declares
  std::map<std::string, int32_t> onnx_dtypes;  // blob -> declared ONNX elem_type, hetnet dtype or not
  std::set<std::string> names;                        // every blob name in use (for fresh names)
  std::set<std::string> non_tensors;  // blobs holding an ONNX sequence or optional (convert_sequence.cc)
  caffe2::NetDef* init_net = nullptr;
  caffe2::NetDef* predict_net = nullptr;
  std::string base_dir;
  int fresh_counter = 0;
};

class ConvertContext {
 public:
  ConvertContext(ImportState& state, const onnx::NodeProto& node, int64_t opset, caffe2::DeviceOption device);

  const onnx::NodeProto& node() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  int64_t opset() const { return opset_; }
  // The whole import's state (control flow converts subgraphs against it: convert_control_flow.cc).
  ImportState& state() { return state_; }

  // Inputs and outputs; an omitted optional one is "" (also past the end).
  int num_inputs() const { return node_.input_size(); }
  int num_outputs() const { return node_.output_size(); }
  const std::string& in(int i) const;
  const std::string& out(int i) const;
  bool has_in(int i) const { return !in(i).empty(); }
  bool has_out(int i) const { return !out(i).empty(); }

  // Attributes (a wrong attribute type is kInvalidArgument).
  bool Has(const std::string& name) const;
  int64_t Int(const std::string& name, int64_t def) const;
  float Float(const std::string& name, float def) const;
  std::string Str(const std::string& name, const std::string& def) const;
  std::vector<int64_t> Ints(const std::string& name) const;
  std::vector<float> Floats(const std::string& name) const;
  const onnx::AttributeProto* Attr(const std::string& name) const;

  // Import-time constants: nullptr when blob's value is only known at run time.
  const ConstTensor* Const(const std::string& blob) const;
  // Input i's value, or Refuse("<what> must be a constant ...").
  const ConstTensor& RequireConst(int i, const std::string& what) const;
  // A new init-net blob holding c (named from hint); its value is known to later nodes.
  std::string AddConst(const std::string& hint, ConstTensor c);
  // Blob `name` (a node output) is c: filled by the init net, known to later nodes.
  void DefineConst(const std::string& name, ConstTensor c);

  // Known dims (-1 for an unknown dim); nullptr when even the rank is unknown.
  const std::vector<int64_t>* Dims(const std::string& blob) const;
  int Rank(const std::string& blob) const;  // -1 when unknown
  void SetDims(const std::string& blob, std::vector<int64_t> dims);
  void SetRank(const std::string& blob, int rank);  // dims all unknown
  void SameDims(const std::string& to, const std::string& from);
  // The element type the model declares for blob (graph inputs/outputs, value_info, constants), or
  // UNDEFINED.
  caffe2::TensorProto::DataType Dtype(const std::string& blob) const;
  // The ONNX elem_type the model declares for a graph input/output or value_info (0: none), also a
  // type hetnet tensors lack (FLOAT6*, ...), where Dtype says UNDEFINED.
  int32_t OnnxDtype(const std::string& blob) const;
  // Canonical axis in [0, rank) (rank may be -1 only when axis >= 0; else Refuse).
  int64_t Axis(int64_t axis, int rank, const std::string& what) const;

  // Emits an op on this node's device (committed when the converter returns normally).
  caffe2::OperatorDef& Emit(const std::string& type, const std::vector<std::string>& inputs,
                            const std::vector<std::string>& outputs);
  std::string Fresh(const std::string& base);

  // The node cannot be imported: kUnsupported with the reason (collected into one error).
  [[noreturn]] void Refuse(const std::string& reason) const;

  // Called by the importer after the converter returned: when every input of the node is a
  // constant, runs the emitted ops now on CPU and makes the outputs constants (onnx_fold.cc);
  // false (nothing changed) when the node cannot be folded.
  bool FoldIfConstant();
  void Commit();

 private:
  ImportState& state_;
  const onnx::NodeProto& node_;
  int64_t opset_;
  caffe2::DeviceOption device_;
  std::deque<caffe2::OperatorDef> ops_;  // deque: references from Emit stay valid
  std::vector<std::pair<std::string, ConstTensor>> new_consts_;
  std::map<std::string, std::vector<int64_t>> new_dims_;
};

using Converter = std::function<void(ConvertContext&)>;

class ConverterRegistry {
 public:
  // Converter for op_type at opsets [since, until].
  void Add(const std::string& op_type, int64_t since, int64_t until, Converter fn);
  void Add(const std::string& op_type, Converter fn) { Add(op_type, 1, kNewestOpset, std::move(fn)); }
  const Converter* Find(const std::string& op_type, int64_t opset) const;
  std::vector<std::string> OpTypes() const;

 private:
  struct Entry {
    int64_t since, until;
    Converter fn;
  };
  std::map<std::string, std::vector<Entry>> entries_;
};

// The registry with every family registered (built once, thread-safe).
const ConverterRegistry& Converters();

// One per converter family file.
void RegisterMathConverters(ConverterRegistry& r);    // convert_math.cc
void RegisterNnConverters(ConverterRegistry& r);      // convert_nn.cc
void RegisterConvConverters(ConverterRegistry& r);    // convert_conv.cc
void RegisterTensorConverters(ConverterRegistry& r);  // convert_tensor.cc
void RegisterShapeConverters(ConverterRegistry& r);   // convert_shape.cc
void RegisterActivationConverters(ConverterRegistry& r);  // convert_activation.cc
void RegisterNormConverters(ConverterRegistry& r);    // convert_norm.cc
void RegisterDropoutConverters(ConverterRegistry& r);  // convert_dropout.cc
void RegisterFlexAttentionConverters(ConverterRegistry& r);  // convert_flex_attention.cc
void RegisterTrainingConverters(ConverterRegistry& r);  // convert_training.cc
void RegisterMlConverters(ConverterRegistry& r);        // convert_ml.cc
void RegisterResizeConverters(ConverterRegistry& r);  // convert_resize.cc
void RegisterControlFlowConverters(ConverterRegistry& r);  // convert_control_flow.cc
// Sequences, optionals and Identity on them; registered first (its Identity precedes convert_math's).
void RegisterSequenceConverters(ConverterRegistry& r);  // convert_sequence.cc

}  // namespace hetnet::onnxio
