// StoreWait([handler, optional names]): waits until every name is set in the store. The names
// come from input 1 (a string tensor) or arg blob_names, not both. Arg timeout_ms (default 30000).
#pragma once

#include <chrono>
#include <vector>

#include "core/operator.h"

namespace hetnet {

class StoreWaitOp final : public Operator<CPUContext> {
 public:
  StoreWaitOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::vector<std::string> blob_names_;
  std::chrono::milliseconds timeout_;
};

}  // namespace hetnet
