"""sync_batch_norm: a net pass that makes the training SpatialBN ops of a net compute their batch
statistics over several replicas (device replicas in this process and/or processes), without
data_parallel_model. The rewrite is the one combine_spatial_bn uses (hetnet._dpm_sync_bn).
"""
from hetnet import core
from hetnet._errors import InvalidArgumentError
from hetnet import _dpm_sync_bn


def _single_replica_key(op, blob):
    return str(blob), 0


def sync_batch_norm(net, comm_world=None, devices=None, world_size=None, device_prefix=None, engine="GLOO",
                    dtype="double"):
    """Rewrites `net` (a core.Net or ModelHelper) in place; returns the number of synchronized layers.

    net         the training net, after its gradient ops were added (the forward and backward
                SpatialBN ops are rewritten; a forward-only net may be rewritten before, and its
                gradient ops by a second call afterwards).
    comm_world  a common world blob (CreateCommonWorld in an init net) spanning the processes;
                None: this process only.
    devices     the ids of this process's replicas whose blobs are '{device_prefix}_{id}/...'
                (as data_parallel_model names them); None: every SpatialBN op is one replica.
    world_size  processes in comm_world (required with comm_world).
    dtype       "double" (default) or "float" for the statistics that are summed and allreduced.

    Each SpatialBNGradient then outputs dscale, dbias of the whole batch divided by the number of
    replicas (len(devices) * world_size), as Caffe2's multi-batch form: summing them over all
    replicas, as data_parallel_model does for every gradient, gives the whole batch's gradient."""
    if hasattr(net, "net") and hasattr(net, "param_init_net"):
        net = net.net
    if not isinstance(net, core.Net):
        raise InvalidArgumentError("sync_batch_norm: expected a core.Net or ModelHelper, got {}".format(type(net)))
    if comm_world is not None and world_size is None:
        raise InvalidArgumentError("sync_batch_norm: world_size (the processes in comm_world) is required with "
                                   "comm_world")
    world_size = 1 if world_size is None else int(world_size)
    if dtype not in ("double", "float"):
        raise InvalidArgumentError("sync_batch_norm: dtype must be 'double' or 'float', got {!r}".format(dtype))
    if devices is None:
        key, replicas = _single_replica_key, 1
    else:
        devices = list(devices)
        if device_prefix is None:
            device_prefix = _guess_prefix(net)
        key, replicas = _dpm_sync_bn.replica_key_by_namescope(device_prefix, devices), len(devices)
    return _dpm_sync_bn.rewrite_net(net, key, replicas * world_size, None if comm_world is None else str(comm_world),
                                    engine, dtype)


def _guess_prefix(net):
    for op in net.Proto().op:
        if op.type == "SpatialBN":
            head = op.output[0].split("/", 1)[0].rpartition("_")[0]
            if head:
                return head
    return "cpu"
