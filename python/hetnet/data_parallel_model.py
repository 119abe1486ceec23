"""Synchronous data-parallel training, as caffe2.python.data_parallel_model.

``Parallelize`` builds one replica of the model per device under ``DeviceScope`` +
``NameScope('{gpu|cpu}_{id}')``, seeds each replica's loss gradient with ConstantFill 1.0
(losses are built with loss_scale = 1 / (len(devices) * num_shards)), sums the gradients over all
devices (and over all shards of a rendezvous) in reverse order, broadcasts the computed params
(BN running statistics) from devices[0], then adds the parameter updates, and appends to the param
init net a copy of devices[0]'s (and shard 0's) initial params to every replica.

Single process: CPU replicas are reduced with Sum into devices[0] and copied back (no copy back for
``shared_model``, where every replica reads devices[0]'s params); GPU replicas with a Sum tree or
``NCCLAllreduce`` (use_nccl). Several processes (``rendezvous`` = {kv_handler, shard_id, num_shards,
engine, optional transport, interface, mpi_rendezvous}; exit_nets is ignored): common worlds
'allreduce_{slot}_cw' / 'broadcast_{slot}_cw' (CollectivesConcurrencyControl) with
timeout_ms=30000, one GLOO Allreduce per gradient over [cw] + the local replicas, one Broadcast per
param, and a barrier net ('pre_training_barrier_cw', 300 s by default) that RunNet runs first.

``combine_spatial_bn=True`` computes training BN statistics over the batch of all devices (and all
shards): see hetnet._dpm_sync_bn. Differences from Caffe2 are listed in docs/distributed.md.
"""
import copy
import logging
import multiprocessing
import warnings

from hetnet import core, dyndep, model_helper, scope, workspace
from hetnet._errors import UnsupportedError
from hetnet.proto import caffe2_pb2
from hetnet import _dpm_collectives as collectives
from hetnet import _dpm_graph as graph
from hetnet import _dpm_sync_bn as sync_bn
from hetnet._dpm_collectives import (CollectivesConcurrencyControl,  # noqa: F401  (public names)
                                     DEFAULT_TIMEOUT_SEC as _DEFAULT_TIMEOUT_SEC,
                                     DEFAULT_BARRIER_NET_TIMEOUT_SEC as _DEFAULT_BARRIER_NET_TIMEOUT_SEC)
from hetnet._dpm_graph import convert_net_for_device as ConvertNetForDevice  # noqa: F401

dyndep.InitOpsLibrary("@/caffe2/caffe2/contrib/gloo:gloo_ops")
if workspace.NumGpuDevices() > 0:
    dyndep.InitOpsLibrary("@/caffe2/caffe2/contrib/nccl:nccl_ops")
    dyndep.InitOpsLibrary("@/caffe2/caffe2/contrib/gloo:gloo_ops_gpu")

log = logging.getLogger("data_parallel_model")
log.setLevel(logging.INFO)

stripBlobName = collectives.strip_blob_name


def Parallelize_GPU(*args, **kwargs):
    kwargs["cpu_device"] = False
    Parallelize(*args, **kwargs)


def Parallelize_CPU(*args, **kwargs):
    kwargs["cpu_device"] = True
    Parallelize(*args, **kwargs)


def Parallelize_iDeep(*args, **kwargs):
    raise UnsupportedError("Parallelize_iDeep: hetnet has no IDEEP device (Caffe2's MKL-DNN device "
                           "type); use Parallelize_CPU, whose CPU kernels use oneDNN where it helps")


def _set_device_type(model, devices, cpu_device, ideep, shared_model, rendezvous):
    if ideep:
        Parallelize_iDeep()
    if not cpu_device:
        if any(d >= workspace.NumGpuDevices() for d in devices):
            log.warning("** Only %d GPUs available, GPUs %s requested", workspace.NumGpuDevices(), devices)
        model._device_type = workspace.GpuDeviceType
        model._device_prefix = "gpu"
        model._shared_model = False
        assert shared_model is False, "Shared model only supported on CPU"
        return "GPU"
    model._device_type = caffe2_pb2.CPU
    model._device_prefix = "cpu"
    model._shared_model = shared_model
    assert not (shared_model and rendezvous is not None), "Shared model only supported on single-node currently"
    return "CPU"


def _for_each_device(model, devices, f):
    for device in devices:
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            with core.NameScope("{}_{}".format(model._device_prefix, device)):
                f(device)


def Parallelize(model_helper_obj, input_builder_fun, forward_pass_builder_fun, param_update_builder_fun=None,
                optimizer_builder_fun=None, post_sync_builder_fun=None, pre_grad_net_transformer_fun=None,
                net_transformer_fun=None, devices=None, rendezvous=None, net_type="dag",
                broadcast_computed_params=True, optimize_gradient_memory=False, dynamic_memory_management=False,
                blobs_to_keep=None, use_nccl=False, max_concurrent_distributed_ops=16, cpu_device=False,
                ideep=False, num_threads_per_device=4, shared_model=False, combine_spatial_bn=False,
                barrier_net_timeout_sec=_DEFAULT_BARRIER_NET_TIMEOUT_SEC):
    """Builds a data-parallel model on `devices` (GPU ids, or CPU replica ids with cpu_device); see
    the module docstring and Caffe2's documentation of the same function."""
    model = model_helper_obj
    current = scope.CurrentDeviceScope()
    assert current is None or current.device_type == caffe2_pb2.CPU, \
        "Parallelize must be called without device-scope, device scope was: {}".format(current)
    assert isinstance(model, model_helper.ModelHelper)
    collectives.check_rendezvous(rendezvous)
    if devices is None:
        devices = (list(range(workspace.NumCudaDevices())) if not (cpu_device or ideep)
                   else list(range(multiprocessing.cpu_count())))
    devices = list(devices)
    assert devices, "Parallelize needs at least one device"
    device_name = _set_device_type(model, devices, cpu_device, ideep, shared_model, rendezvous)

    log.info("Parallelizing model for devices: %s", devices)
    num_workers = len(devices) * num_threads_per_device + (8 if rendezvous is not None else 0)
    max_concurrent_distributed_ops = min(max_concurrent_distributed_ops, num_workers - 1)
    model.net.Proto().num_workers = num_workers
    model.net.Proto().type = net_type
    model._devices = devices
    model._rendezvous = rendezvous
    model._sync_barrier_net = None
    model._broadcast_context = None
    model._grad_names = []
    model._combine_spatial_bn = combine_spatial_bn
    if not hasattr(model, "_optimizer"):
        model._optimizer = None
    non_datapar_params = copy.copy(model.params)  # params made before: not data parallel

    has_parameter_updates = param_update_builder_fun is not None or optimizer_builder_fun is not None
    assert not (param_update_builder_fun is not None and optimizer_builder_fun is not None), \
        "Can only specify one of param_update_builder_fun, optimizer_builder_fun"
    if not has_parameter_updates and model.init_params:
        log.warning("Model %s is used for testing/validation but has init_params=True; running its param "
                    "init net overwrites the trained params. Use ModelHelper(init_params=False).", model.name)

    losses_by_device = {}
    loss_scale = 1.0 / (len(devices) * collectives.num_shards(rendezvous))

    def build_replica(device):
        log.info("Model for %s : %s", device_name, device)
        input_builder_fun(model)
        losses = forward_pass_builder_fun(model, loss_scale)
        if has_parameter_updates:
            assert isinstance(losses, list), "Model builder function must return list of loss blobs"
            for loss in losses:
                assert isinstance(loss, core.BlobReference), "Model builder func must return list of loss blobs"
        losses_by_device[device] = losses
    _for_each_device(model, devices, build_replica)
    graph.validate_params(model.params)

    model._device_grouped_blobs = graph.group_by_device(model, devices, model.params, non_datapar_params)
    computed_params_grouped = graph.group_by_device(model, devices, model.GetComputedParams(""), [])
    model._device_grouped_blobs.update(computed_params_grouped)
    model._param_names = list(model._device_grouped_blobs.keys())
    model._computed_param_names = list(computed_params_grouped.keys())

    if pre_grad_net_transformer_fun:
        pre_grad_net_transformer_fun(model)
    if has_parameter_updates:
        _AddGradientOperators(devices, model, losses_by_device)
    if net_transformer_fun:
        net_transformer_fun(model, len(devices), model._device_prefix, model._device_type)
    if not has_parameter_updates:
        log.info("Parameter update function not defined --> only forward")
        collectives.infer_blob_device(model)
        return

    if combine_spatial_bn:
        sync_bn.combine_model_spatial_bn(model, devices, rendezvous)
    graph.validate_params(model.params)

    param_to_grad = model.param_to_grad
    grads_ordered = [param_to_grad[p] for p in model.params if p in param_to_grad]
    non_datapar_grads = [param_to_grad[p] for p in non_datapar_params if p in param_to_grad]
    gradients_grouped = graph.group_by_device(model, devices, grads_ordered, non_datapar_grads)
    model._device_grouped_blobs.update(gradients_grouped)
    model._grad_names = list(gradients_grouped.keys())
    model._losses_by_gpu = losses_by_device
    collectives.infer_blob_device(model)

    log.info("Add gradient all-reduces for SyncSGD")
    if broadcast_computed_params:
        _BroadcastComputedParams(devices, model, rendezvous, use_nccl)
    if model._grad_names:
        collectives.allreduce_blobs(list(reversed(model._grad_names)), devices, model, model.net, rendezvous,
                                    use_nccl, max_concurrent_distributed_ops)
    else:
        log.info("NOTE: Param builder function did not create any parameters.")

    all_params = set(model.GetParams(""))
    if shared_model:
        graph.prune_parameters_for_sharing(model)
    if param_update_builder_fun is not None:
        _for_each_device(model, devices, lambda device: param_update_builder_fun(model))
    else:
        log.info("Calling optimizer builder function")
        model._optimizer = optimizer_builder_fun(model)

    sync_blobs, sync_names = graph.compute_blobs_to_sync(model)
    model._device_grouped_blobs.update(graph.group_by_device(model, devices, sync_blobs, []))
    collectives.infer_blob_device(model)
    graph.analyze_operators(model)
    # Caffe2's dag net ran the first iteration on one worker (allocations, NCCL); hetnet's
    # executors accept the argument.
    arg = model.Proto().arg.add()
    arg.name = "first_iter_only_one_worker"
    arg.i = 1

    log.info("Add initial parameter sync")
    collectives.sync_all_params(devices, model, model.param_init_net, model.param_init_net, rendezvous,
                                sync_names, max_concurrent_distributed_ops=1)
    if post_sync_builder_fun is not None:
        _for_each_device(model, devices, lambda device: post_sync_builder_fun(model))

    assert not (optimize_gradient_memory and dynamic_memory_management), \
        "It is not advised to use gradient optimization ('memonger') with dynamic memory management."
    if optimize_gradient_memory or dynamic_memory_management:
        log.warning("data_parallel_model: optimize_gradient_memory / dynamic_memory_management are accepted "
                    "and not applied (hetnet has no training memonger); the nets are unchanged")
    model._data_parallel_model_init_nets = [model.param_init_net]
    model._data_parallel_model_nets = [model.net]
    _AddBarrierToModelNets(model, barrier_net_timeout_sec)
    if shared_model:
        graph.remap_parameter_blobs_for_shared_model(model, all_params)


def _AddGradientOperators(devices, model, losses_by_device):
    """ConstantFill(loss -> loss_grad, 1.0) on each device, then the backward pass of all."""
    loss_grad = {}
    for device in devices:
        with core.DeviceScope(core.DeviceOption(model._device_type, device)):
            for loss in losses_by_device[device]:
                seed = model.net.ConstantFill(loss, str(loss) + "_grad", value=1.0)
                loss_grad[str(loss)] = str(seed)
    model.AddGradientOperators(loss_grad)


def _BroadcastComputedParams(devices, model, rendezvous, use_nccl=False):
    """Computed params (BN running statistics) are copied from devices[0] to the other devices
    (Caffe2 broadcasts, not averages; across shards each shard keeps its own)."""
    if collectives.is_distributed(rendezvous):
        log.warning("Distributed broadcast of computed params is not implemented yet")
    if len(devices) == 1:
        return
    for name in model._computed_param_names:
        collectives.broadcast_local(devices, model, model.net, name, use_nccl)


def _AddBarrierToModelNets(model, barrier_net_timeout_sec):
    """GLOO: a barrier net (run first by RunNet) over 'pre_training_barrier_cw', made by
    'barrier_init_net' (run first by RunInitNet), so fast shards wait for slow ones."""
    if model._rendezvous is not None and model._rendezvous["engine"] == "GLOO":
        model._barrier_init_net = core.Net("barrier_init_net")
        model._barrier_net = collectives.create_barrier_net(model, model._barrier_init_net, "pre_training",
                                                            barrier_net_timeout_sec)
        model._data_parallel_model_init_nets.insert(0, model._barrier_init_net)
        model._data_parallel_model_nets.insert(0, model._barrier_net)


# ---- running ----

def CreateNet(model, overwrite=False):
    for net_iters in model._data_parallel_model_nets:
        workspace.CreateNet(net_iters[0] if isinstance(net_iters, tuple) else net_iters, overwrite=overwrite)


def RunInitNet(model):
    for init_net in model._data_parallel_model_init_nets:
        workspace.RunNetOnce(init_net)
    CreateNet(model)


def RunWarmup(model):
    workspace.RunNet(model.net, model._warmup_iterations)
    workspace.RunNetOnce(model._warmup_broadcast)


def RunNet(model, num_iterations):
    """Runs each DPM net num_iterations times; a (net, k) entry runs k times (the barrier net runs
    every call, as in Caffe2)."""
    for net_iter in model._data_parallel_model_nets:
        if isinstance(net_iter, tuple):
            workspace.RunNet(net_iter[0].Proto().name, net_iter[1])
        else:
            workspace.RunNet(net_iter, num_iterations)


def Synchronize(model, timeout_sec=_DEFAULT_BARRIER_NET_TIMEOUT_SEC):
    """Deprecated: runs a barrier over all shards (Parallelize's barrier net replaces it)."""
    warnings.warn("The Synchronize API has been deprecated. We now have a barrier net which runs before "
                  "training to ensure all hosts wait before training starts. The default timeout for the "
                  "barrier is 300s and it can be overridden using the barrier_net_timeout_sec parameter "
                  "when calling Parallelize.", category=DeprecationWarning, stacklevel=2)
    if model._rendezvous is None or model._rendezvous["num_shards"] <= 1:
        return
    if model._sync_barrier_net is None:
        barrier_init_net = core.Net("sync_barrier_init_net")
        model._sync_barrier_net = collectives.create_barrier_net(model, barrier_init_net, "sync", timeout_sec)
        workspace.RunNetOnce(barrier_init_net)
        workspace.CreateNet(model._sync_barrier_net)
        model._sync_barrier_net_timeout = timeout_sec
    assert model._sync_barrier_net_timeout == timeout_sec, \
        "Must use fixed timeout, {} != {}".format(model._sync_barrier_net_timeout, timeout_sec)
    workspace.RunNet(model._sync_barrier_net)


# ---- checkpoints, learning rates, predictors ----

def GetCheckpointParams(model):
    """The blobs a checkpoint needs: devices[0]'s synced blobs and the unscoped iteration counters."""
    all_blobs, _ = graph.compute_blobs_to_sync(model)
    first = "{}_{}/".format(model._device_prefix, model._devices[0])
    blobs = set(b for b in all_blobs if str(b).startswith(first))
    for op in model.net.Proto().op:
        if op.type in ("Iter", "AtomicIter") and not op.output[0].startswith("{}_".format(model._device_prefix)):
            blobs.add(core.BlobReference(op.output[0]))
    return blobs


def FinalizeAfterCheckpoint(model, blobs=None, cpu_mode=False):
    """After loading devices[0]'s blobs (e.g. from a checkpoint), copies them to every replica (and
    from shard 0 to every shard). A CPU model's sync net runs on CPU whatever cpu_mode says."""
    if not hasattr(model, "_checkpoint_net"):
        if blobs is None:
            _, names = graph.compute_blobs_to_sync(model)
        else:
            names = [stripBlobName(p) for p in blobs]
        for name in names:
            if name not in model._device_grouped_blobs:
                model._device_grouped_blobs[name] = {
                    d: core.BlobReference("{}_{}{}{}".format(model._device_prefix, d, scope._NAMESCOPE_SEPARATOR,
                                                             name)) for d in model._devices}
        on_gpu = not cpu_mode and core.IsGPUDeviceType(model._device_type)
        model._checkpoint_net = core.Net("checkpoint_sync_net")
        if on_gpu:
            model._checkpoint_net.RunAllOnGPU()
        checkpoint_init_net = None
        if model._rendezvous is not None and model._rendezvous["num_shards"] > 1:
            checkpoint_init_net = core.Net("checkpoint_init_net")
            if on_gpu:
                checkpoint_init_net.RunAllOnGPU()
        collectives.sync_all_params(model._devices, model, checkpoint_init_net, model._checkpoint_net,
                                    model._rendezvous, names, max_concurrent_distributed_ops=1)
        if checkpoint_init_net is not None:
            workspace.RunNetOnce(checkpoint_init_net)
        workspace.CreateNet(model._checkpoint_net)
    workspace.RunNet(model._checkpoint_net.Proto().name)


def GetLearningRateBlobNames(model):
    """The learning-rate blobs of the model's optimizer (else the outputs of its LearningRate ops)."""
    optimizer = getattr(model, "_optimizer", None)
    if optimizer is not None:
        if model._device_type in (caffe2_pb2.CPU, caffe2_pb2.IDEEP):
            return [optimizer.get_cpu_blob_name("lr")]
        if core.IsGPUDeviceType(model._device_type):
            return [optimizer.get_gpu_blob_name("lr", gpu, "") for gpu in model._devices]
        raise Exception("Unsupported device type : {}".format(model._device_type))
    return [op.output[0] for op in model.net.Proto().op if op.type == "LearningRate"]


def ExtractPredictorNet(model, inputs, outputs, device):
    """(net, params) to export devices[0]'s replica as a predictor, with unprefixed input and output
    names."""
    prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    prefixed_inputs = [prefix + str(b) for b in inputs]
    prefixed_outputs = [prefix + str(b) for b in outputs]
    renames = dict(zip(prefixed_inputs + prefixed_outputs, [str(b) for b in list(inputs) + list(outputs)]))
    return graph.extract_predictor_net(model.net.Proto(), prefixed_inputs, prefixed_outputs, device, renames)


def OptimizeGradientMemory(model, input_shapes, excluded_blobs, recycle_activations):
    """Accepted for Caffe2 scripts; hetnet has no training-net memonger, so the net is unchanged."""
    log.warning("data_parallel_model.OptimizeGradientMemory: not applied (hetnet has no training memonger)")


# ---- extra syncs ----

def AddBlobSync(model, blobs, net=None):
    """Copies devices[0]'s (and shard 0's) unprefixed `blobs` to every replica each run of net."""
    if len(blobs) == 0:
        return
    net = model.net if net is None else net
    for b in blobs:
        assert not b.startswith(model._device_prefix), "Provide unprefixed blob name: {}".format(b)
        model._device_grouped_blobs[b] = {
            d: core.BlobReference("{}_{}/{}".format(model._device_prefix, d, b)) for d in model._devices}
    collectives.sync_all_params(model._devices, model, model.param_init_net, net, model._rendezvous, set(blobs))


def AddDistributedBlobSync(model, blobs):
    """Sums `blobs` (full names) over the shards (not over the devices) each run of the net."""
    if model._rendezvous is None:
        return
    synth_name = "_".join([str(b) for b in blobs])
    cw = collectives.create_or_clone_common_world(model.param_init_net, "blob_sync_cw_" + synth_name,
                                                  rendezvous=model._rendezvous)
    collectives.add_op(model.net, "Allreduce", [cw] + list(blobs), list(blobs),
                       engine=model._rendezvous["engine"])


from hetnet._dpm_bmuf import (Parallelize_BMUF, Parallelize_CPU_BMUF,  # noqa: E402,F401
                              Parallelize_GPU_BMUF)
