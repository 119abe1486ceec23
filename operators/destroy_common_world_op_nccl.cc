// DestroyCommonWorld, engine NCCL: the engine-neutral kernel (CommonWorld::Close; for NCCL it
// waits, bounded, for queued collectives, then finalizes or aborts the communicator).
#include "operators/destroy_common_world_op.h"

namespace hetnet {

REGISTER_CPU_OPERATOR_WITH_ENGINE(DestroyCommonWorld, NCCL, DestroyCommonWorldOp);

}  // namespace hetnet
