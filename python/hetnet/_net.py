"""core.Net: builds a NetDef with ``net.SomeOp(inputs, outputs=None, **kwargs)`` calls."""
import threading

from hetnet import core
from hetnet.proto import caffe2_pb2

# Python creation lines of ops built through Net, keyed by net name, then op index (like Caffe2's
# workspace.operator_tracebacks). Used to fill debug_info when a NetDef goes to the C++ runtime.
operator_tracebacks = {}
_names_lock = threading.Lock()


class Net(object):
    _net_names_used = set()

    @staticmethod
    def current_prefix():
        return core.scope.CurrentNameScope()

    @staticmethod
    def _get_next_net_name(basename):
        with _names_lock:
            name = basename
            next_idx = 1
            while name in Net._net_names_used:
                name = basename + "_" + str(next_idx)
                next_idx += 1
            Net._net_names_used.add(name)
            return name

    def __init__(self, name_or_proto):
        self._input_record = None
        self._next_name_index = 0
        self._next_blob_name_ids = {}
        if isinstance(name_or_proto, caffe2_pb2.NetDef):
            self._net = caffe2_pb2.NetDef()
            self._net.CopyFrom(name_or_proto)
            self._net_blob_names = set(self._net.external_input)
            for op in self._net.op:
                self._net_blob_names.update(op.output)
        else:
            if isinstance(name_or_proto, Net):
                raise TypeError("use net.Clone(name) to copy a Net")
            self._net = caffe2_pb2.NetDef()
            self._net.name = str(name_or_proto)
            self._net_blob_names = set()
        self._net.name = Net._get_next_net_name(self._net.name)
        operator_tracebacks[self._net.name] = {}

    # ---- naming ----
    def Name(self):
        return self._net.name

    def __str__(self):
        return self.Name()

    def Proto(self):
        return self._net

    def BlobIsDefined(self, blob):
        return str(blob) in self._net_blob_names

    def NextName(self, prefix=None, output_id=None):
        """An unused blob name: '<net>/<prefix>[_k][:output_id]', or '<net>_blob_<n>'."""
        if prefix:
            output_name_base = self._net.name + "/" + prefix
            output_name = output_name_base
            if output_id is not None:
                output_name += ":" + str(output_id)
            key = output_name
            index = self._next_blob_name_ids.get(key, 2)
            while self.BlobIsDefined(core.ScopedName(output_name)):
                output_name = output_name_base + "_" + str(index)
                if output_id is not None:
                    output_name += ":" + str(output_id)
                index += 1
                self._next_blob_name_ids[key] = index
        else:
            output_name = self._net.name + "_blob_" + str(self._next_name_index)
            self._next_name_index += 1
        return str(output_name)

    def NextBlob(self, prefix=None):
        return core.BlobReference(self.NextName(prefix), self)

    def NextScopedBlob(self, prefix=None):
        return core.ScopedBlobReference(self.NextName(prefix), net=self)

    # ---- external inputs/outputs ----
    def AddExternalInput(self, *inputs):
        assert len(inputs) > 0
        refs = []
        for input in inputs:
            input_name = str(input)
            assert input_name not in self._net_blob_names, \
                "Net already contains an input named %s" % input_name
        for input in inputs:
            input_name = str(input)
            self._net.external_input.extend([input_name])
            self._net_blob_names.add(input_name)
            refs.append(core.BlobReference(input_name, self) if not isinstance(input, core.BlobReference)
                        else input)
        return refs[0] if len(refs) == 1 else refs

    def AddExternalInputs(self, *inputs):
        return self.AddExternalInput(*inputs)

    def AddExternalOutput(self, *outputs):
        for output in outputs:
            assert isinstance(output, (str, core.BlobReference)), "bad output %r" % (output,)
            assert self.BlobIsDefined(output), \
                "{} is not defined in net {}".format(output, self.Name())
        for output in outputs:
            self._net.external_output.extend([str(output)])
        return outputs[0] if len(outputs) == 1 else outputs

    def AddExternalOutputs(self, *outputs):
        return self.AddExternalOutput(*outputs)

    def external_inputs(self):
        return [core.BlobReference(b, self) for b in self._net.external_input]

    def external_outputs(self):
        return [core.BlobReference(b, self) for b in self._net.external_output]

    # ---- ops ----
    def _ExtendOps(self, new_ops, locations=None):
        tracebacks = operator_tracebacks.setdefault(self._net.name, {})
        for k, op in enumerate(new_ops):
            index = len(self._net.op)
            location = (locations[k] if locations else op.debug_info)
            self._net.op.extend([op])
            if location:
                tracebacks[index] = location
            self._net_blob_names.update(op.output)

    def _CreateAndAddToSelf(self, op_type, inputs, outputs=None, **kwargs):
        """Creates op_type without checking it is registered, adds it, returns its outputs."""
        inputs = core._RectifyInputOutput(inputs)
        for input in inputs:
            if not self.BlobIsDefined(input):
                self.AddExternalInput(input)
        if outputs is None:
            outputs = self.NextName(prefix=op_type)
        elif isinstance(outputs, int):
            outputs = [self.NextName(prefix=op_type, output_id=i) for i in range(outputs)]
        outputs = core._RectifyInputOutput(outputs, net=self)
        location = core.CallerLocation()
        op = core.CreateOperator(op_type, inputs, outputs, debug_info="", **kwargs)
        self._ExtendOps([op], [location])
        from hetnet import _workspace_compat
        _workspace_compat._OnOperatorAdded(op)  # runs it now in immediate mode
        refs = [core.BlobReference(str(o), self) for o in outputs]
        return refs[0] if len(refs) == 1 else tuple(refs)

    def __getattr__(self, op_type):
        if op_type.startswith("__") or op_type.startswith("_"):
            raise AttributeError(op_type)
        if not core.IsOperator(op_type):
            raise AttributeError(
                "Method {} is not a registered operator. Did you mean: [{}]".format(
                    op_type, ",".join(core.NearbyOperatorNames(op_type))))
        return lambda *args, **kwargs: self._CreateAndAddToSelf(op_type, *args, **kwargs)

    def __dir__(self):
        return sorted(set(dir(type(self)) | set(self.__dict__) | set(core._KnownOperatorTypes())))

    # ---- whole-net changes ----
    def Clone(self, name, blob_remap=None, op_id_mask=None, keep_schema=True):
        """A copy named `name` (made unique), with blobs renamed by blob_remap."""
        remap = {str(k): str(v) for k, v in (blob_remap or {}).items()}
        proto = caffe2_pb2.NetDef()
        proto.CopyFrom(self._net)
        del proto.op[:]
        proto.name = name
        for field in (proto.external_input, proto.external_output):
            renamed = [remap.get(b, b) for b in field]
            del field[:]
            field.extend(renamed)
        new_net = Net(proto)
        locations = operator_tracebacks.get(self._net.name, {})
        kept, kept_locations = [], []
        for i, op in enumerate(self._net.op):
            if op_id_mask is not None and i not in op_id_mask:
                continue
            new_op = caffe2_pb2.OperatorDef()
            new_op.CopyFrom(op)
            for field in (new_op.input, new_op.output):
                renamed = [remap.get(b, b) for b in field]
                del field[:]
                field.extend(renamed)
            kept.append(new_op)
            kept_locations.append(locations.get(i, ""))
        new_net._ExtendOps(kept, kept_locations)
        return new_net

    def AppendNet(self, net, device_option=None):
        """Appends the ops of `net` (a Net or NetDef) and its external inputs/outputs (Caffe2's
        Net.AppendNet); with device_option, the appended ops get it."""
        proto = net.Proto() if isinstance(net, Net) else net
        # Inputs this net already has or produces are not external (Caffe2's rule).
        self._net.external_input.extend([b for b in proto.external_input if b not in self._net.external_input
                                         and b not in self._net_blob_names])
        self._net.external_output.extend([b for b in proto.external_output if b not in self._net.external_output])
        ops = []
        for op in proto.op:
            new_op = caffe2_pb2.OperatorDef()
            new_op.CopyFrom(op)
            if device_option is not None:
                new_op.device_option.CopyFrom(device_option)
            ops.append(new_op)
        locations = operator_tracebacks.get(proto.name, {})
        self._ExtendOps(ops, [locations.get(i, "") for i in range(len(ops))])
        return self

    def RunAllOnGPU(self, gpu_id=0, use_cudnn=False):
        self._net.device_option.CopyFrom(core.DeviceOption(caffe2_pb2.CUDA, gpu_id))
        if use_cudnn:
            for op in self._net.op:
                op.engine = "CUDNN"

    def RunAllOnCPU(self):
        self._net.device_option.CopyFrom(core.DeviceOption(caffe2_pb2.CPU, 0))

    def AddGradientOperators(self, ys, skip=0):
        """Appends the gradient ops of this net (from op `skip` on) for losses `ys` and returns
        {blob: gradient blob} (BlobReferences), as Caffe2's. ys: a list of loss blobs (each seeded
        with ConstantFill(loss) -> '<loss>_autogen_grad', value 1.0, as Caffe2) or a dict {loss: given
        gradient or None}.
        The backward pass is hetnet::GetBackwardPass (core/autodiff.h)."""
        grad_ops, grad_map = core._BackwardPass(list(self._net.op[skip:]), ys, self._net.name)
        location = core.CallerLocation()
        self._ExtendOps(grad_ops, [location] * len(grad_ops))
        return {core.BlobReference(k): core.BlobReference(v, self) for k, v in grad_map.items()}

    def Const(self, array, blob_out=None, dtype=None):
        raise NotImplementedError("Net.Const is not provided by hetnet yet")


def NetProtoForRuntime(net):
    """The NetDef to hand to C++: a copy with each op's Python creation line in debug_info."""
    proto = net.Proto() if isinstance(net, Net) else net
    tracebacks = operator_tracebacks.get(proto.name)
    if not tracebacks:
        return proto
    copy = caffe2_pb2.NetDef()
    copy.CopyFrom(proto)
    for index, location in tracebacks.items():
        if index < len(copy.op) and not copy.op[index].debug_info:
            copy.op[index].debug_info = location
    return copy
