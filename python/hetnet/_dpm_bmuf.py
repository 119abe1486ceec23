"""data_parallel_model.Parallelize_BMUF: blockwise model-update filtering (Chen & Huo, ICASSP 2016),
as Caffe2 built it. Each replica trains on its own for a block of iterations (model.net); the
global net (run once per block) averages the params over all devices and shards, and moves the
global model by a filtered step:

    v = block_momentum * v + block_learning_rate * (mean(params) - g);   g = g + v   (Nesterov:
    g = g + v - block_momentum * (v - v_prev); v_prev = v)

then every replica gets g. v, g and v_prev are '<param>_v', '<param>_g', '<param>_prev' on the
master device.
"""
import copy

from hetnet import core, model_helper, scope, workspace
from hetnet.proto import caffe2_pb2
from hetnet import _dpm_collectives as collectives
from hetnet import _dpm_graph as graph


def Parallelize_GPU_BMUF(*args, **kwargs):
    kwargs["cpu_device"] = False
    Parallelize_BMUF(*args, **kwargs)


def Parallelize_CPU_BMUF(*args, **kwargs):
    kwargs["cpu_device"] = True
    Parallelize_BMUF(*args, **kwargs)


def _new_net(name, net_type, num_workers):
    net = core.Net(name)
    net.Proto().type = net_type
    net.Proto().num_workers = num_workers
    return net


def Parallelize_BMUF(model_helper_obj, input_builder_fun, forward_pass_builder_fun, param_update_builder_fun,
                     block_learning_rate=1.0, block_momentum=None, devices=None, rendezvous=None, net_type="dag",
                     master_device=None, use_nccl=False, nesterov=False, optimize_gradient_memory=False,
                     reset_momentum_sgd=False, warmup_iterations=None, max_concurrent_distributed_ops=4,
                     add_blobs_to_sync=None, num_threads_per_device=4, cpu_device=False,
                     barrier_net_timeout_sec=collectives.DEFAULT_BARRIER_NET_TIMEOUT_SEC):
    """Builds the local-update net (model.net) and the block-update net; see the module docstring."""
    from hetnet import data_parallel_model as dpm
    model = model_helper_obj
    current = scope.CurrentDeviceScope()
    assert current is None or current.device_type == caffe2_pb2.CPU, \
        "Parallelize must be called without device-scope, device scope was: {}".format(current)
    assert isinstance(model, model_helper.ModelHelper)
    collectives.check_rendezvous(rendezvous)
    if devices is None:
        devices = list(range(workspace.NumGpuDevices()))
    devices = list(devices)
    if master_device is None:
        master_device = devices[0]
    if cpu_device:
        model._device_type, model._device_prefix = caffe2_pb2.CPU, "cpu"
    else:
        model._device_type, model._device_prefix = workspace.GpuDeviceType, "gpu"
    model._devices = devices
    model._rendezvous = rendezvous
    model._sync_barrier_net = None
    model._broadcast_context = None
    model._shared_model = False
    model._optimizer = getattr(model, "_optimizer", None)
    master_option = core.DeviceOption(model._device_type, master_device)

    num_devices = len(devices) * collectives.num_shards(rendezvous)
    num_workers = num_threads_per_device * len(devices) + (8 if rendezvous else 0)
    loss_scale = 1.0 / num_devices
    if block_momentum is None:
        block_momentum = 1.0 - 1.0 / num_devices
    max_concurrent_distributed_ops = min(max_concurrent_distributed_ops, num_workers - 1)
    model.net.Proto().num_workers = num_workers
    model.net.Proto().type = net_type
    model._global_model_init_net = _new_net("global_model_init", net_type, num_workers)
    model._global_model_param_updates_net = _new_net("global_model", net_type, num_workers)
    update_net = model._global_model_param_updates_net

    non_datapar_params = copy.copy(model.params)
    model._losses_by_gpu = {}

    def build_replica(device):
        input_builder_fun(model)
        model._losses_by_gpu[device] = forward_pass_builder_fun(model, loss_scale)
    dpm._for_each_device(model, devices, build_replica)
    graph.validate_params(model.params)
    model._device_grouped_blobs = graph.group_by_device(model, devices, model.params, non_datapar_params)
    model._param_names = list(model._device_grouped_blobs.keys())
    dpm._AddGradientOperators(devices, model, model._losses_by_gpu)
    graph.validate_params(model.params)
    collectives.infer_blob_device(model)
    dpm._for_each_device(model, devices, lambda device: param_update_builder_fun(model))

    names = list(model._device_grouped_blobs.keys())

    def master(name):
        return model._device_grouped_blobs[name][master_device]

    if warmup_iterations is not None:
        model._warmup_iterations = warmup_iterations
        model._warmup_broadcast = _new_net("warmup-broadcast", net_type, num_workers)
        collectives.sync_all_params(devices, model, model.param_init_net, model._warmup_broadcast, rendezvous,
                                    names, max_concurrent_distributed_ops)
        for name in names:
            with core.DeviceScope(master_option):
                model._warmup_broadcast.Copy(master(name), "{}_g".format(master(name)))

    init_net = model._global_model_init_net
    for name in names:
        p = master(name)
        with core.DeviceScope(master_option):
            init_net.ConstantFill(p, "{}_v".format(p), value=0.0)
            init_net.Copy(p, "{}_g".format(p))
            if nesterov:
                init_net.ConstantFill(p, "{}_prev".format(p), value=0.0)

    # The sum of every replica's params, on every replica.
    collectives.allreduce_blobs(names, devices, model, update_net, rendezvous, use_nccl,
                                max_concurrent_distributed_ops)
    for name in names:
        p = master(name)
        v, g, v_prev = "{}_v".format(p), "{}_g".format(p), "{}_prev".format(p)
        with core.DeviceScope(master_option):
            update_net.Scale(p, p, scale=1.0 / num_devices)  # the average
            update_net.Sub([p, g], p)
            update_net.Scale(p, p, scale=block_learning_rate)
            update_net.Scale(v, v, scale=block_momentum)
            update_net.Add([v, p], v)
            update_net.Add([g, v], g)
            if nesterov:
                update_net.Sub([v, v_prev], v_prev)
                update_net.Scale(v_prev, v_prev, scale=block_momentum)
                update_net.Sub([g, v_prev], g)
                update_net.Copy(v, v_prev)
            update_net.Copy(g, p)
    collectives.sync_all_params(devices, model, model.param_init_net, update_net, rendezvous, names,
                                max_concurrent_distributed_ops)
    if add_blobs_to_sync is not None:
        dpm.AddBlobSync(model, add_blobs_to_sync, net=update_net)
    if reset_momentum_sgd:
        for op in [op for op in model.net.Proto().op if op.type == "MomentumSGDUpdate"]:
            with core.DeviceScope(op.device_option):
                update_net.ConstantFill([op.input[1]], op.input[1], value=0.0)
    if optimize_gradient_memory:
        dpm.log.warning("Parallelize_BMUF: optimize_gradient_memory is accepted and not applied")
    model._data_parallel_model_init_nets = [model.param_init_net, model._global_model_init_net]
    model._data_parallel_model_nets = [model.net, (update_net, 1)]
    dpm._AddBarrierToModelNets(model, barrier_net_timeout_sec)
