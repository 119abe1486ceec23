"""Synchronized batch normalization: training SpatialBN statistics over the batches of several
device replicas in one process and/or of several processes (shards), as Caffe2's
data_parallel_model(combine_spatial_bn=True) did within one process.

For each group of SpatialBN ops (one per replica: the same unscoped output name):
  forward   ChannelStats(X_d) -> X_d_sums, X_d_sumsq, X_d_count = N * HxW (hetnet's third output, from
            X_d's shape; batches may differ in size); Sum over the replicas on CPU
            (GPU replicas through CopyGPUToCPU/CopyCPUToGPU, Caffe2's *_gpu_{i}_copy names) into
            '<first X>_sums_combined', '_sumsq_combined', '_count_combined'; across processes one
            Allreduce of the three (concatenated) on a common world; each SpatialBN gets inputs 5, 6 and
            7 (the count, one element) and num_batches = replicas in all processes.
  backward  ChannelBackpropStats(X, saved_mean, saved_rstd, dY) -> the replica's dscale, dbias; Sum
            (and one Allreduce of both) into '<dscale>_combined', '<dbias>_combined', copied back to every
            replica's dscale, dbias, which SpatialBNGradient reads as inputs 5, 6 (in place) and
            outputs divided by num_batches (summing over all replicas gives the whole batch's).
Statistics are float64 (ChannelStats dtype="double"): var = Q/M - mean^2 stays accurate when
|mean| >> std. The inserted ops are scheduled by data dependencies (the group's ops run when every
replica's input is ready), so devices need not be 0..n-1 and the net need not be interleaved.
"""
import heapq

from hetnet import core
from hetnet._errors import InvalidArgumentError
from hetnet.proto import caffe2_pb2
from hetnet._dpm_collectives import strip_blob_name

_CPU = core.DeviceOption(caffe2_pb2.CPU)


def _arg(op, name, default=None):
    for a in op.arg:
        if a.name == name:
            return a.s.decode() if a.HasField("s") else a.i if a.HasField("i") else a.f
    return default


def _is_training_bn(op):
    return op.type == "SpatialBN" and not _arg(op, "is_test", 0) and len(op.input) == 5 and len(op.output) == 5


def _needs_backprop_stats(op, written):
    """A 5-input SpatialBNGradient, or a 7/8-input one (made from an already synced forward) whose
    inputs 5, 6 nothing computes yet."""
    if op.type != "SpatialBNGradient" or _arg(op, "is_test", 0):
        return False
    return len(op.input) == 5 or (len(op.input) >= 7 and op.input[5] not in written)


def _op(op_type, inputs, outputs, device, **kwargs):
    return core.CreateOperator(op_type, inputs, outputs, device_option=device, debug_info="", **kwargs)


class _Reducer(object):
    """Sums per-replica blobs on CPU and, with a common world, over the processes."""

    def __init__(self, comm_world, engine, control):
        self.comm_world = comm_world
        self.engine = engine
        self.control = control  # [last collective output]: chains this pass's collectives

    def reduce(self, ops, per_replica, cpu_names, devices):
        """ops += the ops summing per_replica[k][d] (quantity k, replica d) into CPU blob cpu_names[k]
        (and over the processes); GPU replicas' blobs are copied to CPU first."""
        for blobs, cpu_name in zip(per_replica, cpu_names):
            sources = []
            for blob, device in zip(blobs, devices):
                if core.IsGPUDeviceType(device.device_type):
                    copy = "{}_gpu_{}_copy".format(_cpu_name(blobs[0]), device.device_id)
                    ops.append(_op("CopyGPUToCPU", [blob], [copy], device))
                    sources.append(copy)
                else:
                    sources.append(blob)
            ops.append(_op("Sum", sources, [cpu_name], _CPU))
        if self.comm_world is not None:
            # An Allreduce sums all its tensors together (they are replicas of one blob), so the
            # quantities travel as one buffer: Concat, one Allreduce, Split.
            buffer = cpu_names[0] + "_allreduce_buffer"
            ops.append(_op("Concat", list(cpu_names), [buffer, buffer + "_split_info"], _CPU, axis=0))
            ops.append(_op("Allreduce", [self.comm_world, buffer], [buffer], _CPU, engine=self.engine,
                           control_input=self.control[:1] or None))
            ops.append(_op("Split", [buffer, buffer + "_split_info"], list(cpu_names), _CPU, axis=0))
            self.control[:] = [buffer]
        return list(cpu_names)


def _cpu_name(blob):
    """'gpu_3/x' -> 'cpu_0/x' (Caffe2's CPU master copies); CPU names are kept."""
    if blob.startswith("gpu_"):
        return "cpu_0/" + strip_blob_name(blob)
    return blob


def _forward_block(members, reducer, num_batches, dtype):
    ops = []
    xs = [m.input[0] for m in members]
    devices = [m.device_option for m in members]
    order = [_arg(m, "order", "NCHW") for m in members]
    sums, sumsq, counts = [], [], []
    for m, x, device, o in zip(members, xs, devices, order):
        # Output 2 (hetnet's ChannelStats extension): the element count per channel (N * HxW), [1].
        ops.append(_op("ChannelStats", [x], [x + "_sums", x + "_sumsq", x + "_count"], device, order=o, dtype=dtype))
        sums.append(x + "_sums")
        sumsq.append(x + "_sumsq")
        counts.append(x + "_count")
    first = _cpu_name(xs[0])
    cpu = reducer.reduce(ops, [sums, sumsq, counts],
                         [first + s for s in ("_sums_combined", "_sumsq_combined", "_count_combined")], devices)
    for m, x, device in zip(members, xs, devices):
        if core.IsGPUDeviceType(device.device_type):
            local = [x + "_sums_combined", x + "_sumsq_combined", x + "_count_combined"]
            for source, target in zip(cpu, local):
                ops.append(_op("CopyCPUToGPU", [source], [target], device))
        else:
            local = cpu
        m.input.extend(local)
        _set_num_batches(m, num_batches)
        ops.append(m)
    return ops


def _set_num_batches(op, num_batches):
    kept = [a for a in op.arg if a.name != "num_batches"]
    del op.arg[:]
    op.arg.extend(kept + [core.MakeArgument("num_batches", num_batches)])


def _backward_block(members, reducer, num_batches, count_of):
    ops = []
    devices = [m.device_option for m in members]
    for m, device in zip(members, devices):
        ops.append(_op("ChannelBackpropStats", [m.input[0], m.input[3], m.input[4], m.input[2]],
                       [m.output[1], m.output[2]], device, order=_arg(m, "order", "NCHW")))
    scale_grads = [m.output[1] for m in members]
    bias_grads = [m.output[2] for m in members]
    cpu = reducer.reduce(ops, [scale_grads, bias_grads], [_cpu_name(g[0]) + "_combined" for g in
                                                          (scale_grads, bias_grads)], devices)
    for m, device in zip(members, devices):
        for source, target in zip(cpu, [m.output[1], m.output[2]]):
            copy_type = "CopyCPUToGPU" if core.IsGPUDeviceType(device.device_type) else "Copy"
            ops.append(_op(copy_type, [source], [target], device if copy_type != "Copy" else _CPU))
        del m.input[5:]
        m.input.extend([m.output[1], m.output[2]])
        count = count_of.get(m.input[0])
        if count is not None:
            m.input.append(count)
        _set_num_batches(m, num_batches)
        ops.append(m)
    return ops


def _dependencies(ops):
    """deps[i]: the earlier ops that op i must follow (read after write, write after read/write)."""
    last_writer, readers, deps = {}, {}, []
    for i, op in enumerate(ops):
        d = set()
        for b in list(op.input) + list(op.control_input):
            if b in last_writer:
                d.add(last_writer[b])
        for b in op.output:
            if b in last_writer:
                d.add(last_writer[b])
            d.update(readers.get(b, ()))
        for b in op.input:
            readers.setdefault(b, set()).add(i)
        for b in op.output:
            last_writer[b] = i
            readers[b] = set()
        d.discard(i)
        deps.append(d)
    return deps


def _schedule(ops, groups):
    """The ops in an order that respects their dependencies, each group (op indices) merged into
    one node, earliest original index first."""
    deps = _dependencies(ops)
    node_of = {}
    nodes = []
    for members in groups:
        for i in members:
            node_of[i] = len(nodes)
        nodes.append(list(members))
    for i in range(len(ops)):
        if i not in node_of:
            node_of[i] = len(nodes)
            nodes.append([i])
    node_deps = [set(node_of[j] for i in members for j in deps[i]) - {n} for n, members in enumerate(nodes)]
    users = [[] for _ in nodes]
    for n, ds in enumerate(node_deps):
        for d in ds:
            users[d].append(n)
    waiting = [len(ds) for ds in node_deps]
    ready = [(min(nodes[n]), n) for n in range(len(nodes)) if waiting[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, n = heapq.heappop(ready)
        order.append(n)
        for u in users[n]:
            waiting[u] -= 1
            if waiting[u] == 0:
                heapq.heappush(ready, (min(nodes[u]), u))
    if len(order) != len(nodes):
        stuck = [ops[nodes[n][0]] for n in range(len(nodes)) if waiting[n] and len(nodes[n]) > 1]
        raise InvalidArgumentError("sync batch norm: the SpatialBN ops of replicas depend on each other; cannot "
                                   "synchronize {}".format([o.output[0] for o in stuck] or "these ops"))
    return order, nodes


def rewrite(proto, replica_key, num_batches, comm_world=None, engine="GLOO", dtype="double"):
    """Rewrites the training SpatialBN / SpatialBNGradient ops of NetDef `proto` in place.

    replica_key(op) -> (group key, replica index) groups the ops of the replicas of one layer;
    num_batches is the number of replicas in all processes; comm_world (a blob) adds the Allreduce
    across processes. Returns the number of synchronized forward groups."""
    ops = list(proto.op)
    forward, backward = {}, {}
    written = set()
    for i, op in enumerate(ops):
        if _is_training_bn(op):
            key, replica = replica_key(op, op.output[0])
            forward.setdefault(key, []).append((replica, i))
        elif _needs_backprop_stats(op, written):
            key, replica = replica_key(op, op.input[3])  # the saved mean: one per layer and replica
            backward.setdefault(key, []).append((replica, i))
        written.update(op.output)
    groups = [[i for _, i in sorted(g)] for g in list(forward.values()) + list(backward.values())]
    if not groups:
        return 0
    order, nodes = _schedule(ops, groups)
    reducer = _Reducer(comm_world, engine, [])
    count_of = {}
    fwd_nodes = set(range(len(forward)))
    new_ops = []
    for n in order:
        members = [ops[i] for i in nodes[n]]
        if n in fwd_nodes:
            block = _forward_block(members, reducer, num_batches, dtype)
            for m in members:
                count_of[m.input[0]] = m.input[7]
            new_ops.extend(block)
        elif n < len(groups):
            new_ops.extend(_backward_block(members, reducer, num_batches, count_of))
        else:
            new_ops.extend(members)
    del proto.op[:]
    proto.op.extend(new_ops)
    return len(forward)


def rewrite_net(net, replica_key, num_batches, comm_world=None, engine="GLOO", dtype="double"):
    """rewrite() on a core.Net, keeping each op's Python creation line (the op order changes)."""
    from hetnet import _net
    proto = net.Proto()
    locations = _net.operator_tracebacks.get(proto.name, {})
    for index, location in locations.items():
        if index < len(proto.op) and not proto.op[index].debug_info:
            proto.op[index].debug_info = location
    _net.operator_tracebacks[proto.name] = {}
    groups = rewrite(proto, replica_key, num_batches, comm_world, engine, dtype)
    for op in proto.op:
        net._net_blob_names.update(op.output)
    return groups


def replica_key_by_namescope(prefix, devices):
    """Groups the ops of '{prefix}_{id}/' replicas by unscoped name; replica = index in devices."""
    index = {d: k for k, d in enumerate(devices)}

    def key(op, blob):
        scope_name = blob.split("/", 1)[0]
        head, _, device = scope_name.rpartition("_")
        if "/" not in blob or head != prefix or not device.isdigit() or int(device) not in index:
            raise InvalidArgumentError("sync batch norm: {} '{}' is not in a '{}_<device>/' name scope of devices "
                                       "{}".format(op.type, blob, prefix, devices))
        return strip_blob_name(blob), index[int(device)]
    return key


def combine_model_spatial_bn(model, devices, rendezvous):
    """data_parallel_model's combine_spatial_bn: sync BN over every device of every shard."""
    from hetnet import _dpm_collectives as collectives
    comm_world, engine = None, "GLOO"
    if collectives.is_distributed(rendezvous):
        # The statistics are reduced on the host: a GLOO common world whatever the gradients' engine.
        context = collectives.CollectivesConcurrencyControl("spatial_bn", 1, model.param_init_net,
                                                            dict(rendezvous, engine="GLOO"))
        comm_world = str(context.get_control_and_context(None)[0])
    num_batches = len(devices) * collectives.num_shards(rendezvous)
    return rewrite_net(model.net, replica_key_by_namescope(model._device_prefix, devices), num_batches,
                       comm_world, engine)
