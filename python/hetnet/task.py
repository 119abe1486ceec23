"""caffe2.python.task's names, for scripts that import them: hetnet has no task / net_builder
framework (Caffe2's distributed Job/Task/TaskGroup execution), so Node, Task, TaskGroup and Job
raise NotImplementedError when used. Build plans with core.Plan and core.ExecutionStep instead
(workspace.RunPlan runs them; see hetnet/_plan.py)."""


def _missing(name):
    class Missing(object):
        def __init__(self, *args, **kwargs):
            raise NotImplementedError(
                "caffe2.python.task.{} is not provided by hetnet (no task/net_builder framework); "
                "use core.Plan and core.ExecutionStep with workspace.RunPlan".format(name))
    Missing.__name__ = Missing.__qualname__ = name
    return Missing


Node = _missing("Node")
Task = _missing("Task")
TaskGroup = _missing("TaskGroup")
Job = _missing("Job")
