#include "core/placement.h"

#include "core/workspace.h"

namespace hetnet {

caffe2::NetDef PrepareNetForExecution(const caffe2::NetDef& def, const Workspace& ws) {
  (void)ws;
  caffe2::NetDef out = def;
  for (auto& op : *out.mutable_op())
    if (!op.has_device_option() && def.has_device_option()) *op.mutable_device_option() = def.device_option();
  return out;
}

}  // namespace hetnet
