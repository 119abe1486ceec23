"""core.ExecutionStep and core.Plan (Caffe2's PlanDef builders) and the plan runner behind
workspace.RunPlan / RunPlanInBackground.

hetnet has no C++ plan executor: a plan runs here, in Python, on the current workspace. Its nets
are created (overwriting nets of the same name), then its steps run in order. A step runs its
nets, or else its substeps, ``num_iter`` times (default once); with ``should_stop_blob`` and no
``num_iter`` it repeats until that blob is true, and the blob is also checked before each
iteration and after each substep or net. ``only_once`` substeps run on the first iteration only;
``report_net`` runs after the step. ``concurrent_substeps`` substeps run one after another (the
result is the same for independent substeps). Fields hetnet cannot honour (``create_workspace``,
``num_concurrent_instances`` > 1, ``criteria_network``, ``run_every_ms``) raise
``UnsupportedError`` naming the step.
"""
import collections
import threading

from hetnet import _C, _errors
from hetnet.proto import caffe2_pb2

_names_lock = threading.Lock()


def _Net():
    from hetnet.core import Net
    return Net


def _NetName(net):
    return net.Proto().name if hasattr(net, "Proto") else str(net)


def _AddNetToDict(net_dict, net):
    name = _NetName(net)
    if name in net_dict:
        assert net_dict[name] is None or net is net_dict[name], \
            "Different nets with same name: " + name
        return False
    net_dict[name] = net
    return True


class ExecutionStep(object):
    _step_names_used = set()

    @staticmethod
    def _get_next_step_name(basename):
        with _names_lock:
            name, idx = basename, 1
            while name in ExecutionStep._step_names_used:
                name = "{}_{}".format(basename, idx)
                idx += 1
            ExecutionStep._step_names_used.add(name)
            return name

    def __init__(self, name, nets=None, num_iter=None):
        self._step = caffe2_pb2.ExecutionStep()
        self._step.name = name or ExecutionStep._get_next_step_name("step")
        self._net_dict = collections.OrderedDict()
        self._is_used = False
        self._substeps = []
        if nets is not None:
            if isinstance(nets, _Net()):
                nets = [nets]
            for net in nets:
                if _AddNetToDict(self._net_dict, net):
                    self._step.network.extend([_NetName(net)])
        if num_iter is not None:
            self._step.num_iter = num_iter

    def get_net(self, name):
        return self._net_dict[name]

    def Name(self):
        return self._step.name

    def __str__(self):
        return self._step.name

    def _assert_can_mutate(self):
        assert not self._is_used, \
            "Cannot mutate a step that has already been added to a plan/step."

    def _notify_is_used(self):
        self._is_used = True

    def Proto(self):
        return self._step

    def HasNets(self):
        return len(self._step.network) > 0

    def HasSubsteps(self):
        return len(self._step.substep) > 0

    def Nets(self):
        return list(self._net_dict.values())

    def Substeps(self):
        return self._substeps

    def SetIter(self, num_iter):
        self._assert_can_mutate()
        self._step.num_iter = num_iter

    def SetCreateWorkspace(self, create_workspace):
        self._assert_can_mutate()
        self._step.create_workspace = create_workspace

    def SetNumConcurrentInstances(self, num_concurrent_instances):
        self._assert_can_mutate()
        self._step.num_concurrent_instances = num_concurrent_instances

    def SetOnlyOnce(self, only_once):
        self._assert_can_mutate()
        self._step.only_once = only_once

    def SetShouldStopBlob(self, should_stop_blob):
        from hetnet.core import BlobReference
        assert isinstance(should_stop_blob, BlobReference), \
            "expects BlobReference here, got {}".format(type(should_stop_blob))
        self._assert_can_mutate()
        self._step.should_stop_blob = str(should_stop_blob)

    def RunEveryMillis(self, interval):
        self._assert_can_mutate()
        self._step.run_every_ms = interval

    def SetReportNet(self, report_net, report_interval):
        self._assert_can_mutate()
        _AddNetToDict(self._net_dict, report_net)
        self._step.report_net = _NetName(report_net)
        self._step.report_interval = report_interval

    def AddSubstep(self, substep):
        self._assert_can_mutate()
        assert not self.HasNets(), "Cannot have both network and substeps."
        if isinstance(substep, ExecutionStep):
            substep._notify_is_used()
            if not substep.HasNets() and not substep.HasSubsteps():
                return self
            for net in substep.Nets():
                _AddNetToDict(self._net_dict, net)
            self._substeps.append(substep)
            proto = substep.Proto()
        else:
            proto = substep
        self._step.substep.add().CopyFrom(proto)
        return self

    def SetConcurrentSubsteps(self, concurrent_substeps):
        self._assert_can_mutate()
        assert not self.HasNets(), "Cannot have both network and substeps."
        self._step.concurrent_substeps = concurrent_substeps

    def AddNet(self, net):
        self._assert_can_mutate()
        assert not self.HasSubsteps(), "Cannot have both network and substeps."
        assert isinstance(net, _Net())
        _AddNetToDict(self._net_dict, net)
        self._step.network.extend([_NetName(net)])
        return self


class Plan(object):
    def __init__(self, name_or_step):
        self._plan = caffe2_pb2.PlanDef()
        self._net_dict = collections.OrderedDict()
        self._steps = []
        if isinstance(name_or_step, ExecutionStep):
            self._plan.name = name_or_step.Name()
            self.AddStep(name_or_step)
        elif isinstance(name_or_step, str):
            self._plan.name = name_or_step
        else:
            raise ValueError("name_or_step must be a string or ExecutionStep")

    def __str__(self):
        return self._plan.name

    def Proto(self):
        return self._plan

    def AddNets(self, nets):
        for net in nets:
            if _AddNetToDict(self._net_dict, net):
                assert isinstance(net, _Net())
                self._plan.network.add().CopyFrom(net.Proto())

    def Nets(self):
        return list(self._net_dict.values())

    def AddStep(self, step):
        assert isinstance(step, ExecutionStep)
        step._notify_is_used()
        if not step.HasNets() and not step.HasSubsteps():
            return
        self._plan.execution_step.add().CopyFrom(step.Proto())
        self._steps.append(step)
        self.AddNets(step.Nets())  # nets are added after the step, as Caffe2

    def Steps(self):
        return self._steps


# ---- running ----

def _Unsupported(step, what):
    raise _errors.UnsupportedError("plan step '{}': {} is not supported by hetnet's plan runner"
                                   .format(step.name, what))


def _ShouldStop(step):
    if not step.should_stop_blob:
        return False
    if not _C.has_blob(step.should_stop_blob):
        raise _errors.NotFoundError("plan step '{}': should_stop_blob '{}' does not exist".format(
            step.name, step.should_stop_blob))
    value = _C.fetch_blob(step.should_stop_blob)
    return bool(value.reshape(-1)[0]) if value.size else False


def _RunStep(step):
    if step.create_workspace:
        _Unsupported(step, "create_workspace")
    if step.num_concurrent_instances > 1:
        _Unsupported(step, "num_concurrent_instances > 1")
    if step.criteria_network:
        _Unsupported(step, "criteria_network")
    if step.run_every_ms:
        _Unsupported(step, "run_every_ms")
    if step.network and step.substep:
        raise _errors.InvalidArgumentError("plan step '{}' has both networks and substeps".format(step.name))
    if step.HasField("num_iter"):
        num_iter = step.num_iter
    else:
        num_iter = None if step.should_stop_blob else 1
    iteration = 0
    while num_iter is None or iteration < num_iter:
        if _ShouldStop(step):
            break
        for name in step.network:
            _C.run_net(name, 1)
        stopped = False
        for sub in step.substep:
            if sub.only_once and iteration > 0:
                continue
            _RunStep(sub)
            if _ShouldStop(step):
                stopped = True
                break
        iteration += 1
        if stopped:
            break
    if step.report_net:
        _C.run_net(step.report_net, 1)


def RunPlanProto(plan):
    """Creates the plan's nets in the current workspace and runs its steps in order."""
    for net in plan.network:
        _C.create_net(net.SerializeToString(), True)
    for step in plan.execution_step:
        _RunStep(step)
    return True


class BackgroundPlan(object):
    """The handle RunPlanInBackground returns (Caffe2's C.BackgroundPlan): is_done(),
    is_succeeded(), wait(), and error (the exception, if the plan failed). The plan runs on the
    process's current workspace, as its nets are looked up by name: do not switch workspaces
    (SwitchWorkspace, C.Workspace calls) until it is done."""

    def __init__(self, plan):
        self.error = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(plan,), daemon=True)
        self._thread.start()

    def _run(self, plan):
        try:
            RunPlanProto(plan)
        except Exception as e:  # reported through is_succeeded() / error
            self.error = e
        finally:
            self._done.set()

    def is_done(self):
        return self._done.is_set()

    def is_succeeded(self):
        if not self.is_done():
            raise RuntimeError("the plan has not finished yet")
        return self.error is None

    def wait(self, timeout=None):
        return self._done.wait(timeout)
