// StoreAdd([handler]) -> [value]: atomically adds add_value (default 1) to the integer under
// blob_name (required; 0 when absent); the output is an int64 tensor [1] with the new value.
#pragma once

#include "core/operator.h"

namespace hetnet {

class StoreAddOp final : public Operator<CPUContext> {
 public:
  StoreAddOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string blob_name_;
  int64_t add_value_;
};

}  // namespace hetnet
