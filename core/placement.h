// Device placement of a net's operators and the cross-device copy pass.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/device.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

// Applies placement rules (op option, else net option, else CPU) and, for a net spanning devices,
// the CrossDeviceCopyPass. External inputs live where the workspace holds them, else on the net's
// device.
caffe2::NetDef PrepareNetForExecution(const caffe2::NetDef& def, const Workspace& ws);

}  // namespace hetnet
