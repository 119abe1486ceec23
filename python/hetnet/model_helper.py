"""ModelHelper: a forward net, its parameter init net and the parameter list, as in
caffe2.python.model_helper."""
import logging

from hetnet import core, scope
from hetnet.proto import caffe2_pb2

log = logging.getLogger(__name__)


from hetnet.modeling.parameter_info import ParameterInfo, ParameterTags  # noqa: E402,F401


_PARAM_INIT_SUFFIX = "/param_init_net"


class Initializer(object):
    """Creates a parameter with `operator_name` (e.g. XavierFill) in an init net."""

    def __init__(self, operator_name=None, **kwargs):
        self.operator_name = operator_name
        self.operator_kwargs = kwargs

    def create_param(self, param_name, init_net, shape):
        param = init_net._CreateAndAddToSelf(self.operator_name, [], param_name, shape=shape,
                                              **self.operator_kwargs)
        return param


class ExternalInitializer(object):
    """The parameter is provided from outside (no init op)."""

    def create_param(self, param_name, init_net, shape):
        return core.BlobReference(str(param_name))


def update_initializer(initializer_class, operator_name_and_kwargs, default):
    """An Initializer from an explicit one, else an (op name, kwargs) pair, else the default pair."""
    if initializer_class is not None:
        assert operator_name_and_kwargs is None, "Only one of initializer and op tuple may be given"
        return initializer_class
    name, kwargs = operator_name_and_kwargs if operator_name_and_kwargs is not None else default
    return Initializer(name, **kwargs)


class ModelHelper(object):
    def __init__(self, name=None, init_params=True, allow_not_known_ops=True, skip_sparse_optim=False,
                 param_model=None, arg_scope=None):
        self.name = name or "model"
        self.net = core.Net(self.name)
        if param_model is not None:
            self.param_init_net = param_model.param_init_net
            self.params = param_model.params
            self._parameters_info = param_model._parameters_info
            self._computed_params = param_model._computed_params
        else:
            self.param_init_net = core.Net(self.name + "_init")
            self.params = []
            self._parameters_info = {}
            self._computed_params = []
        self.param_to_grad = {}
        self.gradient_ops_added = False
        self.init_params = init_params
        self.allow_not_known_ops = allow_not_known_ops
        self.skip_sparse_optim = skip_sparse_optim
        self.weights = []
        self.biases = []
        self._arg_scope = {"order": "NCHW", "use_cudnn": True, "cudnn_exhaustive_search": False}
        if arg_scope is not None:
            self._arg_scope.update(arg_scope)

    @property
    def arg_scope(self):
        return self._arg_scope

    def Proto(self):
        return self.net.Proto()

    def InitProto(self):
        return self.param_init_net.Proto()

    # ---- parameters ----
    def create_param(self, param_name, shape, initializer, tags=None):
        """Adds the init op for a parameter (unless init_params is False) and records it."""
        if isinstance(param_name, core.BlobReference):
            param_name = str(param_name)
        else:
            param_name = core.ScopedName(param_name)
        if isinstance(initializer, tuple):
            initializer = Initializer(initializer[0], **initializer[1])
        if not self.init_params:
            initializer = ExternalInitializer()
        created = initializer.create_param(core.BlobReference(param_name), self.param_init_net, shape)
        tags = [tags] if isinstance(tags, str) else list(tags or [])
        if isinstance(created, ParameterInfo):  # a Caffe2-style initializer returns ParameterInfo
            info, blob = created, created.blob
            info.param_id = len(self._parameters_info)
            info.key = param_name
        else:
            blob = created
            info = ParameterInfo(len(self._parameters_info), blob, key=param_name, shape=shape)
        self._parameters_info[param_name] = info
        self.AddParameter(blob, tags)
        return blob

    def AddParameter(self, param, tags=None):
        tags = [tags] if isinstance(tags, str) else list(tags or [])
        if ParameterTags.COMPUTED_PARAM in tags:
            self._computed_params.append(param)
        else:
            self.params.append(param)
        if ParameterTags.WEIGHT in tags:
            self.weights.append(param)
        elif ParameterTags.BIAS in tags:
            self.biases.append(param)

    def GetParams(self, namescope=None, top_scope=False):
        """Parameters whose names start with namescope (default: the current name scope)."""
        if namescope is None:
            namescope = scope.CurrentNameScope()
        elif namescope and not namescope.endswith(scope._NAMESCOPE_SEPARATOR):
            namescope += scope._NAMESCOPE_SEPARATOR
        if namescope == "":
            return self.params[:]
        return [p for p in self.params if str(p).startswith(namescope)]

    def GetComputedParams(self, namescope=None):
        if namescope is None:
            namescope = scope.CurrentNameScope()
        return [p for p in self._computed_params if str(p).startswith(namescope)]

    def GetAllParams(self, namescope=None):
        return self.GetParams(namescope) + self.GetComputedParams(namescope)

    def AddGradientOperators(self, *args, **kwargs):
        """Adds the backward pass to self.net (see core.Net.AddGradientOperators); records each
        parameter's gradient (self.param_to_grad, ParameterInfo.grad) for the optimizers."""
        if self.gradient_ops_added:
            raise RuntimeError("You cannot run AddGradientOperators twice.")
        self.gradient_ops_added = True
        self.grad_map = self.net.AddGradientOperators(*args, **kwargs)
        self.param_to_grad = self.get_param_to_grad(self.params)
        for param, grad in self.param_to_grad.items():
            info = self.get_param_info(param)
            if info is None:
                info = ParameterInfo(len(self._parameters_info), core.BlobReference(str(param)), key=str(param))
                self._parameters_info[str(param)] = info
            info.grad = grad
        return self.grad_map

    def get_param_to_grad(self, params):
        """{param: gradient blob} for the params that have a gradient."""
        grad_map = getattr(self, "grad_map", None) or {}
        return {p: grad_map[str(p)] for p in params if str(p) in grad_map}

    def get_param_info(self, param):
        return self._parameters_info.get(str(param))

    def GetOptimizationParamInfo(self, params=None):
        """ParameterInfo (with .grad) of the parameters that received a gradient."""
        params = self.params if params is None else params
        infos = []
        for p in params:
            if str(p) in self.param_to_grad:
                info = self.get_param_info(p)
                if info is None:
                    info = ParameterInfo(len(self._parameters_info), core.BlobReference(str(p)), key=str(p))
                    self._parameters_info[str(p)] = info
                info.grad = self.param_to_grad[str(p)]
                infos.append(info)
        return infos

    # ---- checks and whole-model nets ----
    def _Validate(self):
        """The parameter names that appear more than once in self.params (sorted, each once)."""
        names = sorted(str(p) for p in self.params)
        return sorted({a for a, b in zip(names, names[1:]) if a == b})

    def Validate(self):
        dupes = self._Validate()
        assert dupes == [], "Duplicate params: {}".format(dupes)

    def GetCompleteNet(self):
        """One net: param_init_net's ops (debug_info suffixed '/param_init_net') then net's, with
        net's execution type, as Caffe2's; ConstructInitTrainNetfromNet splits it again."""
        new_net = self.param_init_net.Clone(self.name + "_complete_net", keep_schema=True)
        for op in new_net.Proto().op:
            op.debug_info = op.debug_info + _PARAM_INIT_SUFFIX
        new_net.AppendNet(self.net)
        if self.net.Proto().HasField("type"):
            new_net.Proto().type = self.net.Proto().type
        return new_net

    def ConstructInitTrainNetfromNet(self, net):
        """Sets param_init_net and net from a net made by GetCompleteNet (ops whose debug_info ends
        in '/param_init_net' go to the init net), with their external lists recomputed."""
        param_ops, train_ops = [], []
        for idx, op in enumerate(net.Proto().op):
            (param_ops if op.debug_info.endswith(_PARAM_INIT_SUFFIX) else train_ops).append(idx)
        self.param_init_net = net.Clone(net.Name() + "/generated_param_init_net", keep_schema=True,
                                        op_id_mask=param_ops, update_external_list=True)
        self.net = net.Clone(net.Name() + "/generated_net", keep_schema=True, op_id_mask=train_ops,
                             update_external_list=True)

    # ---- everything else goes to the forward net ----
    def __getattr__(self, op_type):
        if op_type.startswith("__") or op_type.startswith("_"):
            raise AttributeError(op_type)
        if not core.IsOperator(op_type):
            raise AttributeError(
                "Method {} is not a registered operator. Did you mean: [{}]".format(
                    op_type, ",".join(core.NearbyOperatorNames(op_type))))
        return self.net.__getattr__(op_type)

    def __dir__(self):
        return sorted(set(dir(type(self)) | set(self.__dict__)))


def ExtractPredictorNet(net_proto, input_blobs, output_blobs, device=None, renames=None,
                        disabled_inputs=None):
    """A prediction net cut out of a training net, as Caffe2's: the ops from the first one reading
    an input blob (StopGradient aside) to the last one writing an output blob, keeping those whose
    inputs are known (the net's external inputs and input_blobs, minus disabled_inputs, plus what
    kept ops write). renames renames blobs; device sets every kept op's device. An op with
    is_test=0 is refused. Returns (core.Net, [external inputs other than the inputs: the
    parameters to export])."""
    renames = {str(k): str(v) for k, v in (renames or {}).items()}
    inputs = {str(b) for b in input_blobs}
    outputs = {str(b) for b in output_blobs}
    orig_inputs, orig_outputs = set(net_proto.external_input), set(net_proto.external_output)
    known = (orig_inputs | inputs) - set(str(b) for b in (disabled_inputs or []))
    ops = list(net_proto.op)
    starts = [j for j, op in enumerate(ops) if inputs & set(op.input) and op.type != "StopGradient"]
    ends = [j for j, op in enumerate(ops) if outputs & set(op.output)]
    if not starts:
        raise ValueError("ExtractPredictorNet: no operator reads the inputs {}".format(sorted(inputs)))
    if not ends:
        raise ValueError("ExtractPredictorNet: no operator writes the outputs {}".format(sorted(outputs)))
    proto = caffe2_pb2.NetDef()
    proto.name = net_proto.name + "_predict"
    ext_in, ext_out = set(inputs), set(outputs)
    for op in ops[min(starts):max(ends) + 1]:
        if not known.issuperset(op.input):
            continue
        if any(a.name == "is_test" and a.i == 0 for a in op.arg):
            raise ValueError("ExtractPredictorNet: an operator has is_test=0; extract the predictor from "
                             "a test model, not a training one. Op: {}".format(op))
        kept = proto.op.add()
        kept.CopyFrom(op)
        if device is not None:
            kept.device_option.device_type = device.device_type
            kept.device_option.device_id = device.device_id
        known.update(op.output)
        ext_in.update(set(op.input) & orig_inputs)
        ext_out.update(set(op.output) & orig_outputs)

    def renamed(names):
        return [renames.get(n, n) for n in names]

    proto.external_input.extend(renamed(sorted(ext_in)))
    proto.external_output.extend(renamed(sorted(ext_out)))
    for op in proto.op:
        for field in (op.input, op.output):
            new = renamed(field)
            del field[:]
            field.extend(new)
    renamed_inputs = set(renamed(inputs))
    return core.Net(proto), [b for b in proto.external_input if b not in renamed_inputs]
