"""Optimizers, as in caffe2.python.optimizer: build_sgd, build_adam, build_adagrad, build_rms_prop,
add_weight_decay and gradient clipping by global norm, on a ModelHelper whose gradient ops were
added (model.AddGradientOperators).

Sign convention (Caffe2's): ``build_lr`` gives the LearningRate op ``base_lr = -base_learning_rate``
("we are minimizing, so the learning rate is negative"). Plain SGD then does
``WeightedSum([param, ONE, grad, lr], param)`` (param -= |lr| grad); momentum SGD passes
``-base_learning_rate`` so that the LearningRate is positive for MomentumSGDUpdate (which
subtracts); Adam, Adagrad and RmsProp add ``lr * step`` with the negative lr.

Iteration counter: ``optimizer_iteration`` (int64 [1], CPU), ConstantFill 0 in the init net and
``Iter`` once per run of the train net, before LearningRate, so the first run's learning rate is
computed at iteration 1, as in Caffe2.
"""
import collections

from hetnet import core, scope
from hetnet.proto import caffe2_pb2

OPTIMIZER_ITERATION_NAME = "optimizer_iteration"
AuxOptimizerParams = collections.namedtuple("AuxOptimizerParams", ["local", "shared"])
_optimizer_instance_count = collections.defaultdict(int)
_CPU = core.DeviceOption(caffe2_pb2.CPU)


def BuildIteration(param_init_net, net, iter_val=0):
    """The shared iteration counter: created once per init net, incremented once per train net."""
    with core.DeviceScope(_CPU):
        if not param_init_net.BlobIsDefined(OPTIMIZER_ITERATION_NAME):
            param_init_net.ConstantFill([], OPTIMIZER_ITERATION_NAME, shape=[1], value=iter_val,
                                        dtype=caffe2_pb2.TensorProto.INT64)
        if not any(op.type == "Iter" and op.output[0] == OPTIMIZER_ITERATION_NAME for op in net.Proto().op):
            net.Iter(OPTIMIZER_ITERATION_NAME, OPTIMIZER_ITERATION_NAME)
    return core.BlobReference(OPTIMIZER_ITERATION_NAME)


def _device_suffix():
    dev = scope.CurrentDeviceScope()
    if dev is None:
        dev = _CPU
    return dev, "{}_{}{}".format(dev.device_type, dev.device_id, dev.node_name)


def _const(param_init_net, name, value):
    if not param_init_net.BlobIsDefined(name):
        param_init_net.ConstantFill([], name, shape=[1], value=float(value))
    return core.BlobReference(name)


class Optimizer(object):
    def __init__(self):
        self._aux_params = AuxOptimizerParams(local=[], shared=[])
        self._instance_num = _optimizer_instance_count[self.__class__.__name__]
        _optimizer_instance_count[self.__class__.__name__] += 1
        self._lr_multiplier = None

    def __call__(self, net, param_init_net, param, grad=None):
        if grad is None:
            param_info = param  # a ParameterInfo with .blob and .grad
        else:
            param_info = _ParamInfo(param, grad)
        self._run(net, param_init_net, param_info)

    def _run(self, net, param_init_net, param_info):
        raise NotImplementedError("Optimizer subclasses implement _run")

    def get_cpu_blob_name(self, base_str, node_name=""):
        return "%s_%d_%s%s_cpu" % (self.__class__.__name__, self._instance_num, base_str, node_name)

    def get_gpu_blob_name(self, base_str, gpu_id, device_type):
        return "%s_%d_%s_gpu%d" % (self.__class__.__name__, self._instance_num, base_str, gpu_id)

    def make_unique_blob_name(self, base_str):
        current = scope.CurrentDeviceScope()
        if current is None:
            return self.get_cpu_blob_name(base_str)
        if core.IsGPUDeviceType(current.device_type):
            return self.get_gpu_blob_name(base_str, current.device_id, current.device_type)
        return self.get_cpu_blob_name(base_str, current.node_name)

    def build_lr(self, net, param_init_net, base_learning_rate, learning_rate_blob=None, policy="fixed",
                 iter_val=0, **kwargs):
        """LearningRate(iteration) with base_lr = -base_learning_rate (descent), once per device."""
        if learning_rate_blob is None:
            learning_rate_blob = self.make_unique_blob_name("lr")
        iteration = BuildIteration(param_init_net, net, iter_val)
        if not net.BlobIsDefined(learning_rate_blob):
            lr = net.LearningRate([iteration], learning_rate_blob, base_lr=-float(base_learning_rate),
                                  policy=policy, **kwargs)
        else:
            lr = core.BlobReference(learning_rate_blob, net)
        return lr, iteration

    def get_auxiliary_parameters(self):
        return self._aux_params

    def scale_learning_rate(self, *args, **kwargs):
        raise NotImplementedError("Optimizer.scale_learning_rate is not provided by hetnet")


class _ParamInfo(object):
    def __init__(self, blob, grad):
        self.blob = blob
        self.name = str(blob)
        self.grad = grad


class SgdOptimizer(Optimizer):
    def __init__(self, base_learning_rate=0.01, policy="fixed", momentum=0.0, nesterov=1, **kwargs):
        super(SgdOptimizer, self).__init__()
        self.base_learning_rate = base_learning_rate
        self.policy = policy
        self.momentum = momentum
        self.nesterov = nesterov
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.base_learning_rate == 0:
            return
        assert self.base_learning_rate > 0, \
            "Expect positive base learning rate, got {}".format(self.base_learning_rate)
        # Negative lr for WeightedSum; positive for MomentumSGDUpdate (it subtracts).
        lr_sign = -1 if self.momentum else 1
        lr, _ = self.build_lr(net, param_init_net, base_learning_rate=self.base_learning_rate * lr_sign,
                              policy=self.policy, **self.init_kwargs)
        dev, suffix = _device_suffix()
        with core.DeviceScope(dev):
            ONE = _const(param_init_net, "ONE_" + suffix, 1.0)
        self._aux_params.shared.append(ONE)
        if self.momentum > 0:
            momentum_data = param_init_net.ConstantFill(param, str(param) + "_momentum", value=0.0)
            self._aux_params.local.append(momentum_data)
            net.MomentumSGDUpdate([grad, momentum_data, lr, param], [grad, momentum_data, param],
                                  momentum=float(self.momentum), nesterov=int(self.nesterov))
        else:
            net.WeightedSum([param, ONE, grad, lr], param)


class AdamOptimizer(Optimizer):
    def __init__(self, alpha=0.001, beta1=0.9, beta2=0.999, epsilon=1e-4, policy="fixed", **kwargs):
        super(AdamOptimizer, self).__init__()
        self.alpha, self.beta1, self.beta2, self.epsilon = alpha, beta1, beta2, epsilon
        self.policy = policy
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha == 0:
            return
        lr, iteration = self.build_lr(net, param_init_net, base_learning_rate=self.alpha, policy=self.policy,
                                      **self.init_kwargs)
        m1 = param_init_net.ConstantFill([param], str(param) + "_first_moment", value=0.0)
        m2 = param_init_net.ConstantFill([param], str(param) + "_second_moment", value=0.0)
        self._aux_params.shared.append(iteration)
        self._aux_params.local.extend([m1, m2])
        net.Adam([param, m1, m2, grad, lr, iteration], [param, m1, m2], beta1=float(self.beta1),
                 beta2=float(self.beta2), epsilon=float(self.epsilon))


class AdagradOptimizer(Optimizer):
    def __init__(self, alpha=0.01, epsilon=1e-4, decay=1, policy="fixed", **kwargs):
        super(AdagradOptimizer, self).__init__()
        self.alpha, self.epsilon, self.decay = alpha, epsilon, decay
        self.policy = policy
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        if self.alpha <= 0:
            return
        lr, _ = self.build_lr(net, param_init_net, base_learning_rate=self.alpha, policy=self.policy,
                              **self.init_kwargs)
        moment = param_init_net.ConstantFill([param], str(param) + "_squared_sum", value=0.0)
        self._aux_params.local.append(moment)
        net.Adagrad([param, moment, grad, lr], [param, moment], epsilon=float(self.epsilon),
                    decay=float(self.decay))


class RmsPropOptimizer(Optimizer):
    def __init__(self, learning_rate=0.01, decay=0.9, momentum=0.0, epsilon=1e-5, policy="fixed", **kwargs):
        super(RmsPropOptimizer, self).__init__()
        self.learning_rate, self.decay, self.momentum, self.epsilon = learning_rate, decay, momentum, epsilon
        self.policy = policy
        self.init_kwargs = kwargs

    def _run(self, net, param_init_net, param_info):
        param, grad = param_info.blob, param_info.grad
        assert self.learning_rate > 0
        lr, _ = self.build_lr(net, param_init_net, base_learning_rate=self.learning_rate, policy=self.policy,
                              **self.init_kwargs)
        grad_o = str(grad) + "_rmsprop_step"
        ms = param_init_net.ConstantFill([param], str(param) + "_mean_squares", value=0.0)
        mom = param_init_net.ConstantFill([param], str(param) + "_momentum", value=0.0)
        self._aux_params.local.extend([ms, mom])
        net.RmsProp([grad, ms, mom, lr], [grad_o, ms, mom], decay=float(self.decay),
                    momentum=float(self.momentum), epsilon=float(self.epsilon))
        net.Sum([param, grad_o], param)


class WeightDecayBuilder(Optimizer):
    """grad += weight_decay * param (L2), as Caffe2's; with l1=True grad += weight_decay * sign(param)."""

    def __init__(self, weight_decay, l1=False):
        super(WeightDecayBuilder, self).__init__()
        self.weight_decay = weight_decay
        self.l1 = l1

    def _run(self, net, param_init_net, param_info):
        dev, suffix = _device_suffix()
        with core.DeviceScope(dev):
            ONE = _const(param_init_net, "ONE_" + suffix, 1.0)
            WD = _const(param_init_net, ("wd_l1_" if self.l1 else "wd_") + suffix, self.weight_decay)
        if self.l1:
            sign = net.Sign([param_info.blob], str(param_info.blob) + "_sign")
            net.WeightedSum([param_info.grad, ONE, sign, WD], param_info.grad)
        else:
            net.WeightedSum([param_info.grad, ONE, param_info.blob, WD], param_info.grad)


def _params(model, weights_only=False):
    infos = model.GetOptimizationParamInfo()
    if weights_only:
        weights = set(str(w) for w in model.weights)
        infos = [i for i in infos if str(i.blob) in weights]
    return infos


def _param_device(model, param_info):
    for op in model.net.Proto().op:
        if str(param_info.blob) in op.input and op.HasField("device_option"):
            return op.device_option
    return None


def _build(model, optimizer, weights_only=False, max_gradient_norm=None):
    assert model.gradient_ops_added, "call model.AddGradientOperators(losses) before building an optimizer"
    params = _params(model, weights_only)
    if max_gradient_norm is not None:
        add_gradient_clipping(model, max_gradient_norm, params)
    for info in params:
        device = _param_device(model, info)
        with core.DeviceScope(device) if device is not None else _NullScope():
            optimizer(model.net, model.param_init_net, info)
    return optimizer


class _NullScope(object):
    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False


def add_weight_decay(model, weight_decay, l1=False):
    """L2 (or L1) weight decay on the model's weights (not biases), added to their gradients."""
    return _build(model, WeightDecayBuilder(weight_decay=weight_decay, l1=l1), weights_only=True)


def add_gradient_clipping(model, max_gradient_norm, params=None, name_scope="norm_clipped_grad_update"):
    """Scales every gradient by max_norm / max(global_norm, max_norm): global_norm is the L2 norm of
    all gradients together (SumSqrElements of each, Sum, Sqrt on CPU), applied with
    ClipTensorByScaling (in place). Returns the global norm blob."""
    params = _params(model) if params is None else params
    with core.NameScope(name_scope):
        sums = []
        for i, info in enumerate(params):
            device = _param_device(model, info)
            with core.DeviceScope(device) if device is not None else _NullScope():
                sums.append(model.net.SumSqrElements(info.grad, "grad_{}_squared_sum".format(i)))
        with core.DeviceScope(_CPU):
            full = model.net.Sum(sums, "grad_squared_full_sum")
            norm = model.net.Sqrt(full, "global_norm")
        for info in params:
            device = _param_device(model, info)
            with core.DeviceScope(device) if device is not None else _NullScope():
                model.net.ClipTensorByScaling([info.grad, norm], info.grad, threshold=float(max_gradient_norm))
    return norm


def build_sgd(model, base_learning_rate, max_gradient_norm=None, weight_decay=None, policy="fixed", **kwargs):
    """SGD (momentum=..., nesterov=..., LearningRate policy args); weight_decay adds L2 decay first."""
    if weight_decay:
        add_weight_decay(model, weight_decay)
    return _build(model, SgdOptimizer(base_learning_rate, policy=policy, **kwargs),
                  max_gradient_norm=max_gradient_norm)


def build_adam(model, base_learning_rate, max_gradient_norm=None, weight_decay=None, **kwargs):
    if weight_decay:
        add_weight_decay(model, weight_decay)
    return _build(model, AdamOptimizer(alpha=base_learning_rate, **kwargs), max_gradient_norm=max_gradient_norm)


def build_adagrad(model, base_learning_rate, max_gradient_norm=None, weight_decay=None, **kwargs):
    if weight_decay:
        add_weight_decay(model, weight_decay)
    return _build(model, AdagradOptimizer(alpha=base_learning_rate, **kwargs), max_gradient_norm=max_gradient_norm)


def build_rms_prop(model, base_learning_rate, max_gradient_norm=None, weight_decay=None, **kwargs):
    if weight_decay:
        add_weight_decay(model, weight_decay)
    return _build(model, RmsPropOptimizer(learning_rate=base_learning_rate, **kwargs),
                  max_gradient_norm=max_gradient_norm)


class SmoothedLoss(object):
    """Caffe's UpdateSmoothedLoss: the mean of the last `average_loss` losses."""

    def __init__(self, average_loss=1):
        assert average_loss >= 1
        self.average_loss = int(average_loss)
        self.losses = []
        self.smoothed = 0.0
        self._iter = 0

    def update(self, loss):
        loss = float(loss)
        if len(self.losses) < self.average_loss:
            self.losses.append(loss)
            size = len(self.losses)
            self.smoothed = (self.smoothed * (size - 1) + loss) / size
        else:
            idx = self._iter % self.average_loss
            self.smoothed += (loss - self.losses[idx]) / self.average_loss
            self.losses[idx] = loss
        self._iter += 1
        return self.smoothed
