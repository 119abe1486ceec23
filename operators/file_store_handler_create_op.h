// FileStoreHandlerCreate: 0 inputs, 1 output (a store handler over a shared directory,
// device/collectives/file_store_handler.h). Args: path (required), prefix.
#pragma once

#include "core/operator.h"

namespace hetnet {

class FileStoreHandlerCreateOp final : public Operator<CPUContext> {
 public:
  FileStoreHandlerCreateOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string path_, prefix_;
};

}  // namespace hetnet
