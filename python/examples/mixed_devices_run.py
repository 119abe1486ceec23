"""Runs the seed's mixed-device net: FC on CPU, Sigmoid and SoftmaxWithLoss on a GPU.

With a GPU, FC runs on CPU and the rest on GPU 0 (the runtime inserts the copies). Without one,
the net asks for soft placement (net argument soft_placement=1), so the GPU ops run on CPU and
the placement report says which ops moved.
"""
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, model_helper, workspace

num_gpus = workspace.NumCudaDevices()
gpu_device_id = 0
cpu_device_id = -1

m = model_helper.ModelHelper(name="mixed devices run")
data = np.random.rand(16, 100).astype(np.float32)
label = np.random.randint(0, 10, size=(16,)).astype(np.int32)
with core.DeviceScope(core.DeviceOption(workspace.GpuDeviceType, gpu_device_id)):
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, cpu_device_id)):
        workspace.FeedBlob("data", data)
        workspace.FeedBlob("label", label)
        m.param_init_net.XavierFill([], "fc_w", shape=[10, 100])
        m.param_init_net.ConstantFill([], "fc_b", shape=[10, ])
        fc_1 = m.net.FC(["data", "fc_w", "fc_b"], "fc1")
    pred = m.net.Sigmoid(fc_1, "pred")
    softmax, loss = m.net.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])

if num_gpus == 0:
    m.net.Proto().arg.add(name="soft_placement", i=1)
    print("no GPU: running with soft placement")
else:
    print("running on {} GPU(s); GPU ops on cuda:{}".format(num_gpus, gpu_device_id))

workspace.RunNetOnce(m.param_init_net)
report = workspace.PlacementReport(m.net)
print(workspace.FormatPlacementReport(report))
moved = [op["type"] for op in report["ops"] if "soft placement" in op["reason"]]
if moved:
    print("moved to CPU by soft placement: " + ", ".join(moved))
workspace.CreateNet(m.net)
workspace.RunNet(m.net.Name())
print("loss: {:.6f}".format(float(workspace.FetchBlob("loss"))))
print("softmax shape: {}".format(workspace.FetchBlob("softmax").shape))
