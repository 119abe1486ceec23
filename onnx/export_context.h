// Private to onnx/: what an exporter (one Caffe2 operator type -> ONNX nodes) sees and uses. The
// driver (onnx_export.cc) has already run the net once on CPU, so every input and output of the
// operator comes with its shape and dtype, and the weights with their values.
#pragma once

#include <onnx/onnx_pb.h>  // defines ONNX_API / ONNX_ML, then onnx-ml.pb.h

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/argument.h"
#include "core/tensor.h"
#include "proto/caffe2.pb.h"

namespace hetnet::onnxio::exporter {

// ONNX TensorProto.DataType number of a hetnet dtype (kUnsupported for none), and back.
int32_t OnnxElemType(DataType t);
DataType HetnetDataType(int32_t elem_type);

// The ONNX graph under construction: unique value names, nodes, constant initializers.
class GraphBuilder {
 public:
  GraphBuilder(onnx::GraphProto* graph, int64_t opset, std::set<std::string> reserved)
      : graph_(graph), opset_(opset), used_(std::move(reserved)) {}
  int64_t opset() const { return opset_; }
  onnx::GraphProto* graph() { return graph_; }
  // A value name not used so far (hint, else hint_1, hint_2, ...); marks it used.
  std::string Fresh(const std::string& hint);
  void Reserve(const std::string& name) { used_.insert(name); }
  onnx::NodeProto* Node(const std::string& op_type, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs);
  // Initializers: an int64 vector (shapes, axes) and a one-element tensor of `dtype` (rank 0).
  std::string Int64s(const std::string& hint, const std::vector<int64_t>& values);
  std::string Scalar(const std::string& hint, DataType dtype, double value);
  // The tensor as an initializer named `name` (raw little-endian data; strings as string_data).
  void AddInitializer(const std::string& name, const Tensor& t);

 private:
  onnx::GraphProto* graph_;
  int64_t opset_;
  std::set<std::string> used_;
};

void SetAttr(onnx::NodeProto* n, const std::string& name, int64_t v);
void SetAttr(onnx::NodeProto* n, const std::string& name, float v);
void SetAttr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v);

struct BlobFacts {
  std::vector<int64_t> shape;
  DataType dtype = DataType::Undefined;
};

// One Caffe2 operator being exported.
struct OpExport {
  const caffe2::OperatorDef& def;
  ArgumentHelper args;
  GraphBuilder& g;
  std::vector<std::string> in, out;       // ONNX value names of the inputs and outputs
  std::vector<BlobFacts> in_facts, out_facts;  // from the reference run
  std::vector<bool> out_used;             // read later or a graph output
  std::vector<const Tensor*> weights;     // per input: its value when it is an initializer, else null

  int64_t opset() const { return g.opset(); }
  int in_rank(int i) const { return static_cast<int>(in_facts.at(i).shape.size()); }
  // Throws kUnsupported naming the argument form; the driver collects it with the others.
  [[noreturn]] void Unsupported(const std::string& form) const;
  // Refuses when output i exists and is used (Caffe2's auxiliary outputs such as split_info).
  void RequireUnused(int i, const std::string& what) const;
  // A fresh name for an intermediate value of this operator.
  std::string Temp(const std::string& what) { return g.Fresh(out.empty() ? def.type() : out[0] + "_" + what); }
  // Emits Unsqueeze / Squeeze with the axes as an attribute (opset < 13) or an input (>= 13).
  onnx::NodeProto* AxesNode(const std::string& op_type, const std::string& x, const std::string& y,
                            const std::vector<int64_t>& axes);
  // Emits Reshape(x, shape) -> y with shape as an initializer.
  onnx::NodeProto* ReshapeTo(const std::string& x, const std::string& y, const std::vector<int64_t>& shape);
  // Input i in `shape`: a reshaped initializer when input i is one (consumers that need constant
  // slopes or biases get them), else a Reshape node. Returns the value's name.
  std::string ReshapedInput(int i, const std::vector<int64_t>& shape, const std::string& what);
};

using ExportFn = std::function<void(OpExport&)>;
using ExporterTable = std::map<std::string, ExportFn>;

// One function per family file (export_*.cc) adds that family's exporters.
void AddNnExporters(ExporterTable& table);           // export_nn.cc: FC, Conv, pooling, BN, LRN, Dropout
void AddActivationExporters(ExporterTable& table);   // export_activation.cc: Relu, Softmax, unary math
void AddArithmeticExporters(ExporterTable& table);   // export_arithmetic.cc: Add..Div, comparisons, Sum, Clip, Cast, MatMul
void AddShapeExporters(ExporterTable& table);        // export_shape.cc: Concat, Reshape, Flatten, Transpose, Squeeze
void AddLossExporters(ExporterTable& table);         // export_loss.cc: SoftmaxWithLoss

}  // namespace hetnet::onnxio::exporter
