"""core.Net: builds a NetDef with ``net.SomeOp(inputs, outputs=None, **kwargs)`` calls."""
import threading

from hetnet import core
from hetnet.proto import caffe2_pb2

# Python creation lines of ops built through Net, keyed by net name, then op index (like Caffe2's
# workspace.operator_tracebacks). Used to fill debug_info when a NetDef goes to the C++ runtime.
operator_tracebacks = {}
# The Python function that created each op (for PopulateProtoWithFileName), keyed like the above.
operator_functions = {}
_names_lock = threading.Lock()


class _BlobList(list):
    """A list that returns itself when called: Net.external_inputs is a property in Caffe2 and
    was a method in hetnet; both spellings work."""

    def __call__(self):
        return self


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
        self._registered_blob_names = set()
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

    def NextBlob(self, prefix="unnamed"):
        """A blob name not defined in this net nor returned before: `prefix`, else
        `prefix_auto_<k>` (Caffe2's rule; the name does not depend on the net's name)."""
        base = str(prefix)
        name, index = base, 0
        while name in self._registered_blob_names or self.BlobIsDefined(name):
            name = "{}_auto_{}".format(base, index)
            index += 1
        self._registered_blob_names.add(name)
        return core.BlobReference(name)

    def NextScopedBlob(self, prefix="unnamed"):
        """NextBlob of the prefix in the current name scope."""
        return self.NextBlob(core.ScopedName(str(prefix)))

    def GetBlobRef(self, blob_name):
        blob_name = str(blob_name)
        assert self.BlobIsDefined(blob_name), "Net does not define blob {}".format(blob_name)
        return core.BlobReference(blob_name, self)

    def _CheckLookupTables(self):
        """For tests: the defined-blob table matches the proto (external inputs and op outputs)."""
        from_proto = set(self._net.external_input)
        for op in self._net.op:
            from_proto.update(op.output)
        assert from_proto == self._net_blob_names, (from_proto ^ self._net_blob_names)

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

    @property
    def external_inputs(self):
        """The external inputs as BlobReferences (a property, as Caffe2's; calling it works too)."""
        return _BlobList(core.BlobReference(b, self) for b in self._net.external_input)

    @property
    def external_outputs(self):
        return _BlobList(core.BlobReference(b, self) for b in self._net.external_output)

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
        where = core.CallerFrame()
        op = core.CreateOperator(op_type, inputs, outputs, debug_info="", **kwargs)
        self._ExtendOps([op], ["{}:{}".format(where[0], where[1]) if where else ""])
        if where:
            operator_functions.setdefault(self._net.name, {})[len(self._net.op) - 1] = where[2]
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
    def Clone(self, name, blob_remap=None, op_id_mask=None, remap_funcs=None, keep_schema=True,
              update_external_list=False):
        """A copy named `name` (made unique), with blobs renamed by blob_remap, keeping the ops whose
        index is in op_id_mask (default all). With update_external_list the external inputs become
        the blobs read before any kept op writes them and the external outputs the blobs written
        and not read afterwards, as Caffe2."""
        if remap_funcs:
            raise NotImplementedError("Net.Clone: remap_funcs is not supported by hetnet")
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
        if update_external_list:
            new_net._UpdateExternalLists()
        return new_net

    def _UpdateExternalLists(self):
        produced, read_after, inputs = set(), set(), []
        for op in self._net.op:
            for b in op.input:
                if b in produced:
                    read_after.add(b)
                elif b not in inputs:
                    inputs.append(b)
            produced.update(op.output)
        outputs = []
        for op in self._net.op:
            outputs.extend(b for b in op.output if b not in read_after and b not in outputs)
        del self._net.external_input[:]
        del self._net.external_output[:]
        self._net.external_input.extend(inputs)
        self._net.external_output.extend(outputs)
        self._net_blob_names = set(inputs) | produced

    def ClonePartial(self, name, inputs, outputs, remap_funcs=None):
        """Only the ops needed for outputs given inputs (hetnet/_ssa.py); (new net, outputs)."""
        from hetnet import _ssa
        return _ssa.ClonePartial(self, name, inputs, outputs, remap_funcs)

    def PopulateProtoWithFileName(self):
        """Names each op '<file>:<line>:<function>' of the Python line that created it (Caffe2's
        aid for reading error messages)."""
        locations = operator_tracebacks.get(self._net.name, {})
        functions = operator_functions.get(self._net.name, {})
        for index, op in enumerate(self._net.op):
            if index in locations:
                op.name = "{}:{}".format(locations[index], functions.get(index, "<unknown>"))

    def reroute_tensor(self, tensor, new_producer, can_modify=None):
        """Inserts new_producer (an OperatorDef reading `tensor`) right after the op that writes
        tensor (first, for an external input) and makes the consumers in can_modify read its first
        output instead. Returns how many consumers changed. Assumes tensor is written once."""
        tensor = str(tensor)
        if tensor in self._net.external_input:
            index = -1
        else:
            assert tensor in new_producer.input, "new producer {} is not taking in {}".format(
                new_producer.type, tensor)
            index = next((i for i, op in enumerate(self._net.op) if tensor in op.output), None)
            assert index is not None, "the tensor {} is not generated by any op".format(tensor)
        new_tensor = new_producer.output[0]
        ops = list(self._net.op)
        ops.insert(index + 1, new_producer)
        for table in (operator_tracebacks, operator_functions):  # creation lines follow their ops
            old = table.get(self._net.name, {})
            table[self._net.name] = {(i + 1 if i > index else i): v for i, v in old.items()}
        del self._net.op[:]
        self._net.op.extend(ops)
        self._net_blob_names.update(new_producer.output)
        count = 0
        for op in self._net.op[index + 2:]:
            if can_modify is not None and op in can_modify:
                renamed = [new_tensor if b == tensor else b for b in op.input]
                del op.input[:]
                op.input.extend(renamed)
                count += 1
        return count

    def set_input_record(self, input_record):
        """Sets the net's input record (a schema.Struct); a record without blobs gets new ones under
        the net's name scope. Its blobs become external inputs."""
        from hetnet import schema
        assert self._input_record is None or (
            input_record.has_blobs() and
            set(input_record.field_blobs()) == set(self._input_record.field_blobs())), \
            "Input schema cannot be reset"
        if not input_record.has_blobs():
            with core.NameScope(self.Name()):
                self._input_record = schema.NewRecord(self, input_record)
        else:
            self._input_record = input_record
        for blob in self._input_record.field_blobs():
            if str(blob) not in self._net.external_input:
                self.AddExternalInput(blob)
        return self._input_record

    def input_record(self):
        return self._input_record

    def AppendNet(self, net, device_option=None):
        """Appends the ops of `net` (a Net or NetDef) and its external inputs/outputs (Caffe2's
        Net.AppendNet); with device_option, the appended ops get it."""
        proto = net.Proto() if isinstance(net, Net) else net
        # Inputs this net already has or produces are not external (Caffe2's rule).
        new_inputs = [b for b in proto.external_input if b not in self._net.external_input
                      and b not in self._net_blob_names]
        self._net.external_input.extend(new_inputs)
        self._net_blob_names.update(new_inputs)
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
