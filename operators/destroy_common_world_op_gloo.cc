#include "operators/destroy_common_world_op.h"

namespace hetnet {

REGISTER_CPU_OPERATOR_WITH_ENGINE(DestroyCommonWorld, GLOO, DestroyCommonWorldOp);

}  // namespace hetnet
