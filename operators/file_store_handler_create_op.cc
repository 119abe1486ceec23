#include "operators/file_store_handler_create_op.h"

#include "core/gradient.h"
#include "device/collectives/file_store_handler.h"
#include "operators/store_op_util.h"

namespace hetnet {

FileStoreHandlerCreateOp::FileStoreHandlerCreateOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      path_(GetSingleArgument<std::string>("path", "")),
      prefix_(GetSingleArgument<std::string>("prefix", "")) {
  HN_ENFORCE(!path_.empty(), "FileStoreHandlerCreate: path is a required argument");
}

void FileStoreHandlerCreateOp::RunOnDevice() {
  SetStoreHandlerOutput(this, 0, std::make_shared<FileStoreHandler>(path_, prefix_));
}

OPERATOR_SCHEMA(FileStoreHandlerCreate).NumInputs(0).NumOutputs(1)
    .SetDoc("Creates a store handler over a directory on a shared file system (for tests and prototypes). "
            "Args: path (required), prefix (a subdirectory, so several jobs can share path).");
REGISTER_CPU_OPERATOR(FileStoreHandlerCreate, FileStoreHandlerCreateOp);
NO_GRADIENT(FileStoreHandlerCreate);

}  // namespace hetnet
