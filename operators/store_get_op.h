// StoreGet([handler]) -> [data]: waits for key blob_name (default: the output's name) and
// deserializes it into the output. Arg timeout_ms (default 30000; 0 waits forever).
#pragma once

#include <chrono>

#include "core/operator.h"

namespace hetnet {

class StoreGetOp final : public Operator<CPUContext> {
 public:
  StoreGetOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string blob_name_;
  std::chrono::milliseconds timeout_;
};

}  // namespace hetnet
