"""data_parallel_model's bookkeeping on the model's nets: grouping the {prefix}_{id}/ replicas of a
blob, the blobs the initial sync must copy, shared-model remapping, the cross-device check and the
predictor extraction."""
import collections
import copy
import logging

from hetnet import core, scope
from hetnet.proto import caffe2_pb2
from hetnet._dpm_collectives import strip_blob_name

log = logging.getLogger("data_parallel_model")


def device_id_of(model, blob):
    """The device id in '{prefix}_{id}/...', checking the prefix is the model's."""
    namescope = blob.GetNameScope()
    try:
        device = int(namescope.split("_")[1].split("/")[0])
    except (IndexError, ValueError):
        raise AssertionError("Blob {} expected to have namescope '{}_<device id>/'".format(
            str(blob), model._device_prefix))
    assert "{}_{}/".format(model._device_prefix, device) in namescope, \
        "Param {} expected to have namescope '{}_{}'".format(str(blob), model._device_prefix, device)
    return device


def group_by_device(model, devices, params, non_data_params):
    """OrderedDict {unscoped name: {device id: blob}} of the data-parallel params (those after the
    non_data_params prefix of the list), in the list's order."""
    grouped = collections.OrderedDict()
    for p in params[len(non_data_params):]:
        assert isinstance(p, (core.BlobReference, core.GradientSlice)), \
            "Param {} is not BlobReference or GradientSlice".format(p)
        if isinstance(p, core.GradientSlice):
            device = device_id_of(model, p.indices)
            assert device_id_of(model, p.values) == device
        else:
            device = device_id_of(model, p)
        grouped.setdefault(strip_blob_name(p), {})[device] = p
    return grouped


def validate_params(params):
    names = [str(p) for p in params]
    dupes = sorted(set(n for n in names if names.count(n) > 1))
    assert not dupes, "Duplicate entries in params: {}".format(dupes)


def compute_blobs_to_sync(model):
    """(sorted blobs, unscoped names) that the initial sync copies: every '{prefix}_*' output of the
    param init net (the computed params only, for a shared model), sorted by (device id, name)."""
    if model._shared_model:
        blobs = [str(p) for p in model.GetComputedParams("")]
        names = set(strip_blob_name(p) for p in blobs)
    else:
        blobs, names = [], set()
        for op in model.param_init_net.Proto().op:
            outputs = [o for o in op.output if o.startswith("{}_".format(model._device_prefix))]
            names.update(strip_blob_name(o) for o in outputs)
            blobs.extend(outputs)
        missing = set(model._param_names) - names
        assert not missing, "Some params not instantiated in param init net: {}".format(missing)
    prefix_length = len(model._device_prefix) + 1

    def key(b):
        return (int(b[prefix_length:b.index(scope._NAMESCOPE_SEPARATOR)]), b)
    return [core.BlobReference(b) for b in sorted(set(blobs), key=key)], names


def prune_parameters_for_sharing(model):
    """Only the master device's params get update ops in a shared model."""
    master_prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    model.params = model.GetParams(master_prefix)
    kept = set(str(p) for p in model.params)
    model.param_to_grad = {p: g for p, g in model.param_to_grad.items() if str(p) in kept}
    model.weights = [w for w in model.weights if str(w) in kept]
    model.biases = [b for b in model.biases if str(b) in kept]


def remap_parameter_blobs_for_shared_model(model, all_params):
    """Every replica reads the master's params: ops writing another device's param are dropped
    and inputs naming one are renamed to the master's."""
    master_prefix = "{}_{}/".format(model._device_prefix, model._devices[0])
    log.info("Remapping param blobs to master -> %s", master_prefix)
    all_names = set(str(p) for p in all_params)
    master_names = set(str(p) for p in model.GetParams())
    replicas = all_names - master_names

    def modify(net):
        kept = []
        for op in net.Proto().op:
            if any(o in replicas for o in op.output):
                continue
            for j, name in enumerate(op.input):
                if name in replicas:
                    op.input[j] = master_prefix + strip_blob_name(name)
            kept.append(op)
        del net.Proto().op[:]
        net.Proto().op.extend(kept)
    modify(model.param_init_net)
    modify(model.net)


def analyze_operators(model):
    """A GPU op may touch only its own device's '{prefix}_{id}/' blobs (the DPM's own copies,
    sums, NCCL and GLOO collectives excepted)."""
    prefix = "{}_".format(model._device_prefix)
    for op in model.Proto().op:
        if "NCCL" in op.type or "Copy" in op.type or "Concat" in op.type:
            continue
        if op.type == "Sum" and op.name == "dpm":
            continue
        if "Allreduce" in op.type and "GLOO" in op.engine:
            continue
        if not core.IsGPUDeviceType(op.device_option.device_type):
            continue
        namescope = "{}{}/".format(prefix, op.device_option.device_id)
        for blob in list(op.input) + list(op.output):
            if blob.startswith(prefix) and not blob.startswith(namescope):
                raise Exception("Blob {} of op {}, should have namescope {}. Op: {}".format(
                    blob, op.type, namescope, str(op)))


def convert_net_for_device(net, device=None):
    """A copy of net whose blobs are in '{prefix}_{id}/' and whose ops run on device (default:
    the current device scope)."""
    converted = copy.deepcopy(net)
    if device is None:
        device = scope.CurrentDeviceScope()
    if device is None:
        device = core.DeviceOption(caffe2_pb2.CPU)
    if core.IsGPUDeviceType(device.device_type):
        prefix = "gpu"
    elif device.device_type == caffe2_pb2.IDEEP:
        prefix = "ideep"
    else:
        prefix = "cpu"
    namescope = "{}_{}/".format(prefix, device.device_id)
    proto = converted.Proto()
    for op in proto.op:
        if "RecurrentNetwork" in op.type:
            raise NotImplementedError("RecurrentNetwork conversion not yet supported")
        for field in (op.input, op.output, op.control_input):
            renamed = [namescope + b for b in field]
            del field[:]
            field.extend(renamed)
        op.device_option.CopyFrom(device)
    for field in (proto.external_input, proto.external_output):
        renamed = [namescope + b for b in field]
        del field[:]
        field.extend(renamed)
    return converted


def extract_predictor_net(net_proto, input_blobs, output_blobs, device=None, renames=None):
    """(predict net, params): the ops of a training net from the first reader of an input to the
    last writer of an output whose inputs are known (inputs, external inputs, earlier outputs),
    copied, renamed by `renames`, placed on `device`; params are its external inputs other than
    the inputs (Caffe2's model_helper.ExtractPredictorNet)."""
    renames = {str(k): str(v) for k, v in (renames or {}).items()}
    inputs = set(str(b) for b in input_blobs)
    outputs = set(str(b) for b in output_blobs)
    original_inputs = set(net_proto.external_input)
    original_outputs = set(net_proto.external_output)
    known = original_inputs | inputs
    external_inputs, external_outputs = set(inputs), set(outputs)
    ops = list(net_proto.op)
    readers = [j for j, op in enumerate(ops) if inputs.intersection(op.input) and op.type != "StopGradient"]
    writers = [j for j, op in enumerate(ops) if outputs.intersection(op.output)]
    if not readers:
        raise Exception("No ops with input={}".format(inputs))
    if not writers:
        raise Exception("No ops with output={}".format(outputs))
    predict_net = core.Net(net_proto.name + "_predict")
    proto = predict_net.Proto()
    for op in ops[min(readers):max(writers) + 1]:
        if not known.issuperset(op.input):
            continue
        if any(a.name == "is_test" and a.i == 0 for a in op.arg):
            raise Exception("An operator had is_test=0, did you try to extract a predictor from a train "
                            "model (instead of test model)? Op was: {}".format(str(op)))
        new_op = copy.deepcopy(op)
        if device is not None:
            new_op.device_option.CopyFrom(device)
        for field in (new_op.input, new_op.output):
            renamed = [renames.get(b, b) for b in field]
            del field[:]
            field.extend(renamed)
        proto.op.extend([new_op])
        known.update(op.output)
        external_inputs.update(set(op.input) & original_inputs)
        external_outputs.update(set(op.output) & original_outputs)
    proto.external_input.extend(sorted(renames.get(b, b) for b in external_inputs))
    proto.external_output.extend(sorted(renames.get(b, b) for b in external_outputs))
    renamed_inputs = set(renames.get(b, b) for b in inputs)
    return predict_net, list(set(proto.external_input) - renamed_inputs)
