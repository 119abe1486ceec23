"""caffe2.python.hip_test_util: operator tests ask whether they run on a ROCm (HIP) device to skip
cases MIOpen lacked.  hetnet has no HIP devices, so this is False unless a HIP DeviceOption is passed."""
from hetnet.proto import caffe2_pb2


def run_in_hip(gc, dc):
    """True when the gradient-check option `gc` or any device-check option in `dc` is HIP."""
    return gc.device_type == caffe2_pb2.HIP or any(d.device_type == caffe2_pb2.HIP for d in dc)
