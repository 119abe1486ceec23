"""Caffe2's process-level workspace API (GlobalInit, workspace.C, GPU flags), tested as Caffe2's
own unit tests were written (test_util.TestCase, hypothesis device strategies)."""
import unittest

import numpy as np
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace, test_util
import caffe2.python.hypothesis_test_util as hu
import hetnet


class TestGlobalInit(test_util.TestCase):
    def test_caffe2_flag_lists_are_accepted(self):
        self.assertTrue(workspace.GlobalInit(["caffe2", "--caffe2_log_level=0"]))
        self.assertTrue(workspace.GlobalInit(test_util.get_default_test_flags()))
        # unknown flags, both value forms and bare switches: no error, recorded
        self.assertTrue(workspace.GlobalInit(["python", "--not_a_flag=3", "--other", "x", "--switch"]))
        self.assertEqual(workspace.GlobalInitArgs(),
                         {"not_a_flag": "3", "other": "x", "switch": "true"})
        self.assertTrue(workspace.C.global_init(["caffe2"]))

    def test_a_string_is_refused(self):
        with self.assertRaises(TypeError):
            workspace.GlobalInit("--caffe2_log_level=0")


class TestGpuFlags(test_util.TestCase):
    def test_flags_tell_the_truth(self):
        devices = hetnet._C.num_cuda_devices()
        expected = bool(hetnet._C.has_cuda_support()) and devices > 0
        self.assertIs(workspace.has_gpu_support, expected)
        self.assertIs(workspace.has_cuda_support, expected)
        self.assertIs(workspace.has_hip_support, False)
        self.assertEqual(workspace.NumCudaDevices(), devices if expected else 0)
        self.assertEqual(workspace.NumGpuDevices(), workspace.NumCudaDevices())
        self.assertEqual(workspace.GpuDeviceType, caffe2_pb2.CUDA)
        self.assertIs(workspace.C.has_gpu_support, workspace.has_gpu_support)
        self.assertIs(workspace.C.has_cuda_support, workspace.has_cuda_support)
        self.assertEqual(workspace.C.num_cuda_devices(), workspace.NumCudaDevices())
        if not expected:  # Caffe2's values without GPU support
            self.assertEqual(workspace.GetCUDAVersion(), 0)
            self.assertIsNone(workspace.GetDeviceProperties(0))
            self.assertEqual(workspace.GetGpuPeerAccessPattern().size, 0)
            self.assertEqual(hu._gpu_do_list, [])
            self.assertEqual(hu.device_options, [hu.cpu_do])
            self.assertEqual(hu.expanded_device_options, [hu.cpu_do])


class TestWorkspaceC(test_util.TestCase):
    def test_module_functions_act_on_the_current_workspace(self):
        C = workspace.C
        self.assertIn("FC", C.registered_operators())
        C.feed_blob("x", np.arange(3, dtype=np.float32))
        self.assertTrue(C.has_blob("x"))
        self.assertIn("x", C.blobs())
        np.testing.assert_array_equal(C.fetch_blob("x"), [0, 1, 2])
        net = core.Net("c_net")
        net.Relu("x", "y")
        C.create_net(net.Proto().SerializeToString(), True)
        self.assertIn(net.Name(), C.nets())
        C.run_net(net.Name(), 2, False)
        np.testing.assert_array_equal(workspace.FetchBlob("y"), [0, 1, 2])
        C.switch_workspace("c_other", True)
        self.assertEqual(C.current_workspace(), "c_other")
        self.assertFalse(C.has_blob("x"))
        C.switch_workspace("default")
        self.assertTrue(C.has_blob("x"))

    def test_gradient_defs_and_device_inference_through_c(self):
        op = core.CreateOperator("Relu", ["x"], ["y"])
        ops, g_input = workspace.C.get_gradient_defs(op.SerializeToString(), ["y_grad"])
        grad = caffe2_pb2.OperatorDef()
        grad.ParseFromString(ops[0])
        self.assertEqual(grad.type, "ReluGradient")
        self.assertEqual(list(g_input), ["x_grad"])
        op = core.CreateOperator("CopyGPUToCPU", ["a"], ["b"],
                                 device_option=core.DeviceOption(workspace.GpuDeviceType, 1))
        ins, outs = workspace.C.infer_op_input_output_device(op.SerializeToString())
        out = caffe2_pb2.DeviceOption()
        out.ParseFromString(outs[0])
        self.assertEqual(out.device_type, caffe2_pb2.CPU)


class TestTestUtil(test_util.TestCase):
    def test_setup_reset_the_workspace(self):
        self.assertEqual(workspace.Blobs(), [])
        workspace.FeedBlob("leftover", np.zeros(1, np.float32))

    def test_setup_reset_the_workspace_again(self):
        self.assertEqual(workspace.Blobs(), [])
        workspace.FeedBlob("leftover", np.zeros(1, np.float32))

    def test_rand_array_and_really_equal(self):
        a = test_util.rand_array(2, 3)
        self.assertEqual(a.dtype, np.float32)
        self.assertEqual(a.shape, (2, 3))
        self.assertTrue(np.all(np.abs(a) <= 0.5))
        self.assertEqual(test_util.rand_array().shape, ())
        self.assertReallyEqual(core.BlobReference("a"), core.BlobReference("a"))
        self.assertReallyEqual(core.BlobReference("a"), "a")
        with self.assertRaises(AssertionError):
            self.assertReallyEqual(core.BlobReference("a"), "b")


class TestDeviceStrategies(hu.HypothesisTestCase):
    @given(**hu.gcs)
    @settings(max_examples=3, deadline=None)
    def test_gcs_has_cpu_and_only_real_gpus(self, gc, dc):
        self.assertIn(gc, dc)
        self.assertEqual(dc[0], hu.cpu_do)
        self.assertEqual(len(dc), 1 + (1 if workspace.has_gpu_support else 0))

    @unittest.skipIf(not workspace.has_gpu_support, "No gpu support")
    @given(**hu.gcs_gpu_only)
    @settings(max_examples=2, deadline=None)
    def test_gpu_only_skips_without_gpu(self, gc, dc):  # as Caffe2's GPU tests were written
        self.assertEqual(gc.device_type, workspace.GpuDeviceType)

    @given(**hu.gcs_gpu_only)
    @settings(max_examples=2, deadline=None)
    def test_gpu_only_without_skipif_also_skips(self, gc, dc):
        self.assertEqual(gc.device_type, workspace.GpuDeviceType)

    @given(X=hu.tensor(min_dim=2, max_dim=3, max_value=4), xs=hu.tensors(n=2, min_dim=1, max_dim=2),
           d=hu.dims(2, 3), a=hu.arrays([2, 3], dtype=np.int32), **hu.gcs_cpu_only)
    @settings(max_examples=5, deadline=None)
    def test_tensor_strategies(self, X, xs, d, a, gc, dc):
        self.assertEqual(X.dtype, np.float32)
        self.assertTrue(2 <= X.ndim <= 3 and all(1 <= s <= 4 for s in X.shape))
        self.assertEqual(len(xs), 2)
        self.assertEqual(xs[0].shape, xs[1].shape)
        self.assertTrue(2 <= d <= 3)
        self.assertEqual((a.shape, a.dtype), ((2, 3), np.int32))
        self.assertEqual(dc, [hu.cpu_do])

    @given(gc=hu.expected_device_options(hu.cpu_do, hu.gpu_do))
    @settings(max_examples=2, deadline=None)
    def test_expected_device_options(self, gc):
        if not workspace.has_gpu_support:
            self.assertEqual(gc, hu.cpu_do)


if __name__ == "__main__":
    unittest.main()
