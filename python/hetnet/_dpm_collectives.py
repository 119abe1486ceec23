"""data_parallel_model's collectives: gradient allreduce and parameter broadcast between the
device replicas of one process ({prefix}_{id}/ blobs) and between processes (shards) through
common worlds, as Caffe2's data_parallel_model built them.

Ops are added by name (``net._CreateAndAddToSelf``) so a net can be built for ops this build lacks
(NCCL without CUDA, GLOO without Gloo); whether a kernel exists is checked when the net is created.
"""
import logging

from hetnet import core, scope, workspace
from hetnet._errors import InvalidArgumentError
from hetnet.proto import caffe2_pb2

log = logging.getLogger("data_parallel_model")

DEFAULT_TIMEOUT_SEC = 30
DEFAULT_BARRIER_NET_TIMEOUT_SEC = 300


def add_op(net, op_type, inputs, outputs, **kwargs):
    """Adds op_type to net whether or not this build registers it; returns its outputs."""
    return net._CreateAndAddToSelf(op_type, inputs, outputs, **kwargs)


def strip_blob_name(param):
    """'cpu_0/fc_w' -> 'fc_w' (everything after the first name-scope separator)."""
    if isinstance(param, core.GradientSlice):
        return strip_blob_name(param.indices) + ":" + strip_blob_name(param.values)
    name = str(param)
    return name[name.index(scope._NAMESCOPE_SEPARATOR) + 1:]


def check_rendezvous(rendezvous):
    """Raises InvalidArgumentError unless `rendezvous` is None or a usable rendezvous dict."""
    if rendezvous is None:
        return
    if not isinstance(rendezvous, dict):
        raise InvalidArgumentError("rendezvous must be a dict (kv_handler, shard_id, num_shards, engine) or None, "
                                   "got {}".format(type(rendezvous).__name__))
    missing = [k for k in ("kv_handler", "shard_id", "num_shards", "engine") if k not in rendezvous]
    if missing:
        raise InvalidArgumentError("rendezvous lacks {} (hetnet.distributed.rendezvous() builds one)".format(
            ", ".join(missing)))
    shards, shard = int(rendezvous["num_shards"]), int(rendezvous["shard_id"])
    if shards < 1 or not 0 <= shard < shards:
        raise InvalidArgumentError("rendezvous: shard_id {} is not in [0, num_shards {})".format(shard, shards))
    if rendezvous["kv_handler"] is None and not rendezvous.get("mpi_rendezvous"):
        raise InvalidArgumentError("rendezvous: kv_handler (a store handler blob) is required unless "
                                   "mpi_rendezvous is set")


def num_shards(rendezvous):
    return 1 if rendezvous is None else int(rendezvous["num_shards"])


def is_distributed(rendezvous):
    return rendezvous is not None and int(rendezvous["num_shards"]) > 1


# ---- where blobs live ----

def infer_blob_device(model):
    """model._blob_to_device: each blob's first producer's or consumer's device option (Iter's
    counter is on CPU), from the param init net, then the train net."""
    mapping = {}

    def map_ops(proto):
        for op in proto.op:
            option = op.device_option
            if op.type == "Iter":
                option = core.DeviceOption(caffe2_pb2.CPU)
            for b in list(op.input) + list(op.output):
                mapping.setdefault(b, option)
            if op.type.startswith("RecurrentNetwork"):
                for arg in op.arg:
                    if arg.name.endswith("step_net"):
                        map_ops(arg.n)
    map_ops(model.param_init_net.Proto())
    map_ops(model.net.Proto())
    model._blob_to_device = mapping


def _blob_device_type(model, blob_name):
    devices = model._blob_to_device
    if blob_name not in devices:
        blob_name = "{}_{}/{}".format(model._device_prefix, model._devices[0], blob_name)
    if blob_name not in devices:
        return model._device_type
    return devices[blob_name].device_type


def is_gpu_blob(model, blob_name):
    return core.IsGPUDeviceType(_blob_device_type(model, blob_name))


def is_ideep_blob(model, blob_name):
    return _blob_device_type(model, blob_name) == caffe2_pb2.IDEEP


def _grouped(model, name):
    return list(model._device_grouped_blobs[name].values())


# ---- single host ----

def broadcast_local(devices, model, net, param, use_nccl=False):
    """Copies devices[0]'s blob to the other devices (NCCLBroadcast for GPU blobs with use_nccl)."""
    master = devices[0]
    group = model._device_grouped_blobs[param]
    if use_nccl and is_gpu_blob(model, param):
        with core.DeviceScope(core.DeviceOption(model._device_type, master)):
            # root is the index in the list (devices[0] is first), not a device id.
            add_op(net, "NCCLBroadcast", list(group.values()), list(group.values()), root=0)
        return
    for device in devices[1:]:
        if is_gpu_blob(model, param):
            option = core.DeviceOption(model._device_type, device)
        else:
            option = core.DeviceOption(caffe2_pb2.CPU, 0)
        with core.DeviceScope(option):
            net.Copy(group[master], group[device])


def _gpu_peer_access():
    try:
        return workspace.GetGpuPeerAccessPattern()
    except NotImplementedError:  # hetnet's copy pass stages cross-device inputs itself
        return None


def _sum_tree(devices, model, net, param):
    """Sums the GPU replicas of param into devices[0]'s with Sum ops named "dpm" (Caffe2's fixed
    trees for 4, 8 and 16 devices: pairs, then pairs of pairs...; one Sum otherwise)."""
    blobs = _grouped(model, param)
    p2p = _gpu_peer_access()

    def sum_into_first(*indices):
        group_devices = [devices[i] for i in indices]
        group_blobs = [blobs[i] for i in indices]
        with core.DeviceScope(core.DeviceOption(model._device_type, group_devices[0])):
            for k, peer in enumerate(group_devices[1:], 1):
                if p2p is not None and p2p.size and not p2p[group_devices[0], peer]:
                    group_blobs[k] = net.Copy(group_blobs[k], "gpu_{}/{}_gpu{}_copy".format(
                        group_devices[0], param, peer))
            net.Sum(group_blobs, [group_blobs[0]], name="dpm")

    n = len(devices)
    if n in (4, 8, 16):
        step = 1
        while step < n:
            for first in range(0, n, 2 * step):
                sum_into_first(first, first + step)
            step *= 2
    else:
        sum_into_first(*range(n))


def _allreduce_gpu_dense(devices, model, net, param, use_nccl, control_input):
    if use_nccl:
        blobs = _grouped(model, param)
        add_op(net, "NCCLAllreduce", blobs, blobs, control_input=control_input)
        return
    _sum_tree(devices, model, net, param)
    broadcast_local(devices, model, net, param)


def _allgather_slices(devices, model, net, param, concatenated):
    """Sparse GPU gradients: every device gets all devices' indices and values (Concat + Copy)."""
    group = model._device_grouped_blobs[param]
    master_ns = "{}_{}".format(model._device_prefix, devices[0])
    slices = list(group.values())
    if not any(g.indices in concatenated for g in slices):
        index_concat, _ = net.Concat([g.indices for g in slices],
                                     ["{}/{}_index_concat".format(master_ns, param),
                                      "{}/{}_index_splitinfo".format(master_ns, param)],
                                     axis=0, name="note:data_parallel_model")
        for device, g in group.items():
            with core.DeviceScope(core.DeviceOption(model._device_type, device)):
                net.Copy(index_concat, g.indices)
                concatenated.add(g.indices)
    value_concat, _ = net.Concat([g.values for g in slices],
                                 ["{}/{}_val_concat".format(master_ns, param),
                                  "{}/{}_val_splitinfo".format(master_ns, param)],
                                 axis=0, name="note:data_parallel_model")
    for device, g in group.items():
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            net.Copy(value_concat, g.values)


def allreduce_single_host(blob_names, devices, model, net, use_nccl):
    """Sums each blob over the local devices and gives every device the sum (Caffe2's order)."""
    if len(devices) == 1:
        return
    master_option = core.DeviceOption(model._device_type, devices[0])
    last_out = None
    concatenated = set()
    for name in blob_names:
        blobs = _grouped(model, name)
        if len(blobs) == 1:
            continue
        assert len(blobs) == len(devices), \
            "Each device from {} should have a copy of {}.".format(devices, name)
        if is_gpu_blob(model, name):
            with core.DeviceScope(master_option):
                if isinstance(blobs[0], core.GradientSlice):
                    _allgather_slices(devices, model, net, name, concatenated)
                else:
                    _allreduce_gpu_dense(devices, model, net, name, use_nccl, last_out)
                    last_out = blobs[0]  # serializes the NCCL ops
            continue
        assert not isinstance(blobs[0], core.GradientSlice), "Synchronizing gradient slices not supported"
        option = core.DeviceOption(caffe2_pb2.IDEEP if is_ideep_blob(model, name) else caffe2_pb2.CPU)
        with core.DeviceScope(option):
            net.Sum(blobs, [blobs[0]])  # the reduction of one process's CPU replicas
            if not model._shared_model:
                broadcast_local(devices, model, net, name)


def sync_params_single_host(devices, model, net, names):
    for name in names:
        broadcast_local(devices, model, net, name)


# ---- across processes ----

def create_or_clone_common_world(net, common_world_blob, rendezvous, name=None, timeout_sec=None):
    """A common world blob made in `net`: CloneCommonWorld of the first CreateCommonWorld of `net`
    with the same timeout_ms, else a CreateCommonWorld over rendezvous['kv_handler']."""
    timeout_ms = int((DEFAULT_TIMEOUT_SEC if timeout_sec is None else timeout_sec) * 1000)
    existing = None
    for op in net.Proto().op:
        if op.type != "CreateCommonWorld":
            continue
        op_timeout = next((a.i for a in op.arg if a.name == "timeout_ms"), -1)
        if op_timeout == timeout_ms:
            existing = op.output[0]
            break
    if name is None:
        name = "{}_op".format(common_world_blob)  # the store prefix of the rendezvous
    engine = rendezvous["engine"]
    # hetnet's GLOO kernels are CPU kernels (GPU blobs are staged through the host by the callers);
    # an NCCL common world is made on the current (GPU) device and has no clone.
    option = {"device_option": core.DeviceOption(caffe2_pb2.CPU)} if engine == "GLOO" else {}
    if existing is not None and engine == "GLOO":
        return add_op(net, "CloneCommonWorld", [existing], common_world_blob, name=name, engine=engine, **option)
    kwargs = {k: rendezvous[k] for k in ("transport", "interface", "mpi_rendezvous") if k in rendezvous}
    return add_op(net, "CreateCommonWorld", rendezvous["kv_handler"] or [], common_world_blob, name=name,
                  size=rendezvous["num_shards"], rank=rendezvous["shard_id"], engine=engine,
                  timeout_ms=timeout_ms, **dict(kwargs, **option))


class CollectivesConcurrencyControl(object):
    """Up to max_concurrent_context common worlds "{name}_{slot}_cw", given out round-robin; the
    collectives of one slot are chained by control_input so that every rank issues them in the
    same order."""

    def __init__(self, name, max_concurrent_context, param_init_net, rendezvous):
        self.name = name
        self.param_init_net = param_init_net
        self.max_concurrent_context = max(1, int(max_concurrent_context))
        self.counter = 0
        self.common_worlds = []
        self.control_inputs = []
        self.rendezvous = rendezvous

    def get_control_and_context(self, control_output_blob):
        """(common world, control input or None) for the next collective, whose output
        control_output_blob the slot's next collective will wait for."""
        slot = self.counter % self.max_concurrent_context
        control_input = None
        if len(self.common_worlds) < self.max_concurrent_context:
            common_world = create_or_clone_common_world(
                self.param_init_net, "{}_{}_cw".format(self.name, slot), rendezvous=self.rendezvous)
            self.common_worlds.append(common_world)
            self.control_inputs.append(control_output_blob)
        else:
            common_world = self.common_worlds[slot]
            control_input = self.control_inputs[slot]
            self.control_inputs[slot] = control_output_blob
        self.counter += 1
        return common_world, control_input


def allreduce_distributed(blob_names, devices, model, net, rendezvous, max_concurrent_distributed_ops,
                          use_nccl=False):
    """Sums each blob over all devices of all shards. GLOO with CPU replicas: one
    Allreduce([cw] + local replicas). GLOO with GPU replicas (hetnet's GLOO kernels are CPU
    kernels): local reduction into devices[0], Allreduce of a host copy, local broadcast. Another
    engine (NCCL): local NCCLAllreduce, Allreduce of devices[0]'s copy, local broadcast (Caffe2's)."""
    assert model.net.Proto().num_workers > 1, "Please specify more than 1 worker"
    engine = rendezvous["engine"]
    master_option = core.DeviceOption(model._device_type, devices[0])
    cpu_option = core.DeviceOption(caffe2_pb2.CPU)
    context = CollectivesConcurrencyControl("allreduce", max_concurrent_distributed_ops, model.param_init_net,
                                            rendezvous)
    local_control = None
    for name in blob_names:
        master = model._device_grouped_blobs[name][devices[0]]
        blobs = _grouped(model, name)
        gpu = is_gpu_blob(model, name)

        def allreduce(group, option, **kwargs):
            with core.DeviceScope(option):
                cw, control_input = context.get_control_and_context(group[0])
                add_op(net, "Allreduce", [cw] + group, group, name=name, engine=engine,
                       control_input=control_input, **kwargs)

        if engine == "GLOO" and not gpu:
            allreduce(blobs, cpu_option)
            continue
        with core.DeviceScope(master_option):
            if gpu and len(blobs) > 1 and (use_nccl or engine != "GLOO"):
                add_op(net, "NCCLAllreduce", blobs, blobs, control_input=local_control)
                local_control = blobs[0]
            elif gpu and len(blobs) > 1:
                _sum_tree(devices, model, net, name)
            elif len(blobs) > 1:
                net.Sum(blobs, [blobs[0]])
        if engine == "GLOO":  # GPU replicas: through a host copy
            host = core.BlobReference(str(master) + "_host")
            with core.DeviceScope(master_option):
                net.CopyGPUToCPU(master, host)
            allreduce([host], cpu_option)
            with core.DeviceScope(master_option):
                net.CopyCPUToGPU(host, master)
        else:
            reduced = core.BlobReference(str(master) + "_red")
            with core.DeviceScope(master_option):
                net.Copy(master, reduced)
            allreduce([reduced], master_option)
            with core.DeviceScope(master_option):
                net.Copy(reduced, master)
        broadcast_local(devices, model, net, name)


def sync_params_distributed(devices, model, init_net, net, rendezvous, names, max_concurrent_distributed_ops):
    """Every replica of every shard gets shard 0's devices[0] copy: one Broadcast([cw] + replicas)
    per CPU blob; for GPU blobs a Broadcast of devices[0]'s copy (through a host copy with GLOO)
    followed by a local broadcast."""
    assert rendezvous["num_shards"] > 1
    if model._broadcast_context is None:
        model._broadcast_context = CollectivesConcurrencyControl("broadcast", max_concurrent_distributed_ops,
                                                                 init_net, rendezvous)
    context = model._broadcast_context
    cpu_option = core.DeviceOption(caffe2_pb2.CPU)
    for name in sorted(names):
        master = model._device_grouped_blobs[name][devices[0]]
        group = _grouped(model, name)

        def broadcast(blobs):
            cw, control_input = context.get_control_and_context(blobs)
            add_op(net, "Broadcast", [cw] + blobs, blobs, name=name, engine=rendezvous["engine"],
                   control_input=control_input)

        gpu = is_gpu_blob(model, name)
        if not gpu:
            with core.DeviceScope(cpu_option):
                broadcast(group)
            continue
        option = core.DeviceOption(model._device_type, devices[0])
        if rendezvous["engine"] == "GLOO":  # CPU kernels: through a host copy (Caffe2's name)
            with core.DeviceScope(option):
                master_cpu = net.CopyGPUToCPU(master, str(master) + "cpu")
            with core.DeviceScope(cpu_option):
                broadcast([master_cpu])
            with core.DeviceScope(option):
                net.CopyCPUToGPU(master_cpu, master)
        else:
            with core.DeviceScope(option):
                broadcast([master])
        broadcast_local(devices, model, net, name)


def sync_all_params(devices, model, init_net, net, rendezvous, names, max_concurrent_distributed_ops=4):
    if not is_distributed(rendezvous):
        sync_params_single_host(devices, model, net, names)
    else:
        sync_params_distributed(devices, model, init_net, net, rendezvous, names, max_concurrent_distributed_ops)


def allreduce_blobs(blob_names, devices, model, net, rendezvous, use_nccl, max_concurrent_distributed_ops):
    if not is_distributed(rendezvous):
        allreduce_single_host(blob_names, devices, model, net, use_nccl)
    else:
        allreduce_distributed(blob_names, devices, model, net, rendezvous, max_concurrent_distributed_ops,
                              use_nccl)


def create_barrier_net(model, init_net, name_prefix, timeout_sec):
    """A net holding one Barrier over a common world that init_net creates."""
    assert model._rendezvous["engine"] == "GLOO", "Engine does not support barrier"
    cw = create_or_clone_common_world(init_net, name_prefix + "_barrier_cw", rendezvous=model._rendezvous,
                                      timeout_sec=timeout_sec)
    barrier_net = core.Net(name_prefix + "_barrier_net")
    add_op(barrier_net, "Barrier", [cw], [], engine=model._rendezvous["engine"])
    return barrier_net
