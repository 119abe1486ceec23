// Work of one operator from its input/output shapes, for cost-based placement (issue 17): FLOPs
// and bytes moved. Operators register a cost function next to their schema
// (REGISTER_OP_COST(Conv, fn)); types without one get the generic estimate (one FLOP per output
// element, bytes = inputs + outputs), flagged `estimated`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/op_schema.h"  // TensorInfo
#include "proto/caffe2.pb.h"

namespace hetnet {

enum class OpKind { kGemm, kConv, kMemory };  // which throughput of DeviceCaps applies

struct OpCost {
  double flops = 0;
  double bytes_read = 0, bytes_written = 0;
  OpKind kind = OpKind::kMemory;
  bool estimated = false;  // generic fallback: no cost function registered for the type
};

using OpCostFn = std::function<OpCost(const caffe2::OperatorDef&, const std::vector<TensorInfo>& inputs,
                                      const std::vector<TensorInfo>& outputs)>;

class OpCostRegistry {
 public:
  static void Register(const std::string& type, OpCostFn fn);
  static const OpCostFn* Find(const std::string& type);
};

// The registered function, else the generic estimate. Unknown shapes give flops = bytes = 0,
// estimated = true.
OpCost CostOf(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& inputs,
              const std::vector<TensorInfo>& outputs);

// Helpers for cost functions. Unknown shapes count as 0 elements.
double NumElements(const TensorInfo& t);
double NumBytes(const TensorInfo& t);
bool AllKnown(const std::vector<TensorInfo>& ts);
// Bandwidth-bound work: bytes = all inputs read + all outputs written, `flops_per_out` FLOPs per
// output element (0 for copies), kind kMemory.
OpCost MemoryCost(const std::vector<TensorInfo>& inputs, const std::vector<TensorInfo>& outputs,
                  double flops_per_out);
// `flops` of kind (kGemm / kConv) with the bytes of MemoryCost.
OpCost ComputeCost(OpKind kind, double flops, const std::vector<TensorInfo>& inputs,
                   const std::vector<TensorInfo>& outputs);

// What decides an operator's running time, as a string: its type, engine, input dtypes and shapes
// and arguments (sorted by name), never blob names: "FC[engine](float32[1,784],...){axis:1}".
// Empty when an input shape is unknown. The key of measured times (DeviceProfile::measured_op_us).
std::string OpSignature(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& inputs);

// The cost function of a bandwidth-bound op: MemoryCost(inputs, outputs, flops_per_out).
OpCostFn ElementwiseCostFn(double flops_per_out);

struct OpCostRegisterer {
  OpCostRegisterer(const char* type, OpCostFn fn) { OpCostRegistry::Register(type, std::move(fn)); }
};

}  // namespace hetnet

#define REGISTER_OP_COST(type, ...) static ::hetnet::OpCostRegisterer HN_ANON(hn_cost_reg_)(#type, __VA_ARGS__)
