// StoreSet([handler, data]): publishes the serialized blob (a tensor or a string,
// core/blob_serialization.h) under arg blob_name (default: the data input's name). Set-once.
#pragma once

#include "core/operator.h"

namespace hetnet {

class StoreSetOp final : public Operator<CPUContext> {
 public:
  StoreSetOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string blob_name_;
};

}  // namespace hetnet
