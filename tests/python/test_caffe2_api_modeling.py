"""modeling.parameter_info, cnn.CNNModelHelper, predictor.mobile_exporter (the MNIST tutorial's
deploy step, run through workspace.Predictor) and predictor_exporter."""
import unittest

import numpy as np
from hypothesis import given, settings
import hypothesis.strategies as st

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, cnn, core, model_helper, workspace, test_util
from caffe2.python.modeling import parameter_info
from caffe2.python.modeling.parameter_info import ParameterInfo, ParameterTags
from caffe2.python.predictor import mobile_exporter, predictor_exporter
import caffe2.python.hypothesis_test_util as hu


def _mlp(model):
    fc1 = brew.fc(model, "data", "fc1", dim_in=4, dim_out=5)
    relu = brew.relu(model, fc1, "relu1")
    fc2 = brew.fc(model, relu, "fc2", dim_in=5, dim_out=3)
    return brew.softmax(model, fc2, "softmax")


class TestParameterInfo(test_util.TestCase):
    def test_model_records_parameter_info(self):
        self.assertIs(model_helper.ParameterTags, ParameterTags)
        model = model_helper.ModelHelper(name="pinfo")
        _mlp(model)
        self.assertEqual([str(p) for p in model.GetParams()], ["fc1_w", "fc1_b", "fc2_w", "fc2_b"])
        info = model.get_param_info("fc1_w")
        self.assertIsInstance(info, parameter_info.ParameterInfo)
        self.assertEqual(info.shape, [5, 4])
        self.assertEqual(info.size, 20)
        self.assertEqual(str(info), "fc1_w")
        self.assertEqual(info.parameter, info.blob)
        info.optimizer = "sgd"
        with self.assertRaises(AssertionError):
            info.optimizer = "adam"
        self.assertEqual([str(w) for w in model.weights], ["fc1_w", "fc2_w"])

    def test_caffe2_style_initializer_returning_parameter_info(self):
        class MyInit(object):
            def create_param(self, param_name, init_net, shape):
                blob = init_net.ConstantFill([], param_name, shape=shape, value=2.0)
                return ParameterInfo(param_id=None, param=blob, shape=shape)
        model = model_helper.ModelHelper(name="myinit")
        p = model.create_param("p", [2], MyInit(), tags=ParameterTags.WEIGHT)
        self.assertEqual(str(p), "p")
        self.assertEqual(model.get_param_info("p").param_id, 0)
        workspace.RunNetOnce(model.param_init_net)
        np.testing.assert_array_equal(workspace.FetchBlob("p"), [2.0, 2.0])


class TestCNNModelHelper(test_util.TestCase):
    def test_old_style_helper_builds_the_same_net_as_brew(self):
        m = cnn.CNNModelHelper(order="NCHW", name="cnn", use_cudnn=False)
        self.assertEqual(m.order, "NCHW")
        fc = m.FC("data", "fc", dim_in=4, dim_out=3)
        m.Relu(fc, "relu")
        m.Softmax("relu", "softmax")
        self.assertEqual([op.type for op in m.net.Proto().op], ["FC", "Relu", "Softmax"])
        self.assertEqual([str(p) for p in m.params], ["fc_w", "fc_b"])
        self.assertEqual(m.XavierInit, ("XavierFill", {}))
        self.assertEqual(m.ConstantInit(0.5), ("ConstantFill", {"value": 0.5}))
        self.assertEqual(m.CPU.device_type, caffe2_pb2.CPU)
        self.assertEqual(m.GPU.device_type, workspace.GpuDeviceType)
        workspace.RunNetOnce(m.param_init_net)
        workspace.FeedBlob("data", np.ones((2, 4), np.float32))
        workspace.RunNetOnce(m.net)
        np.testing.assert_allclose(workspace.FetchBlob("softmax").sum(axis=1), [1, 1], rtol=1e-5)
        with self.assertRaises(ValueError):
            cnn.CNNModelHelper(order="NWHC")

    def test_conv_uses_the_helper_order_and_cudnn_setting(self):
        m = cnn.CNNModelHelper(order="NHWC", use_cudnn=True)
        m.Conv("data", "conv", dim_in=3, dim_out=8, kernel=3)
        op = m.net.Proto().op[0]
        self.assertEqual(op.engine, "CUDNN")
        self.assertIn(("order", b"NHWC"), [(a.name, a.s) for a in op.arg])
        self.assertEqual(m.get_param_info("conv_w").shape, [8, 3, 3, 3])


class TestMobileExporter(hu.HypothesisTestCase):
    @given(batch=st.integers(1, 4), seed=st.integers(0, 1000), **hu.gcs_cpu_only)
    @settings(max_examples=4, deadline=None)
    def test_export_runs_in_predictor_like_the_training_net(self, batch, seed, gc, dc):
        np.random.seed(seed)
        workspace.ResetWorkspace()
        train = model_helper.ModelHelper(name="train")
        softmax = _mlp(train)
        workspace.RunNetOnce(train.param_init_net)
        x = np.random.randn(batch, 4).astype(np.float32)
        workspace.FeedBlob("data", x)
        workspace.RunNetOnce(train.net)
        expected = workspace.FetchBlob(str(softmax))

        init_net, predict_net = mobile_exporter.Export(workspace, train.net, train.params)
        self.assertEqual(list(predict_net.external_input)[0], "data")
        self.assertEqual(list(predict_net.external_output), ["softmax"])
        self.assertEqual([op.type for op in init_net.op], ["GivenTensorFill"] * 5)
        self.assertEqual(init_net.op[-1].output[0], "data")  # a placeholder, as Caffe2's

        # the tutorial's two ways: workspace calls, and a Predictor over the serialized bytes
        workspace.ResetWorkspace()
        workspace.RunNetOnce(init_net)
        workspace.CreateNet(predict_net, overwrite=True)
        workspace.FeedBlob("data", x)
        workspace.RunNet(predict_net.name)
        np.testing.assert_allclose(workspace.FetchBlob("softmax"), expected, rtol=1e-6, atol=1e-7)
        p = workspace.Predictor(init_net.SerializeToString(), predict_net.SerializeToString())
        np.testing.assert_allclose(p.run([x])[0], expected, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(p.run({"data": x})[0], expected, rtol=1e-6, atol=1e-7)

    def test_add_tensor_dtypes(self):
        net = caffe2_pb2.NetDef()
        values = {"f": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([1, -2], np.int32),
                  "l": np.array([2 ** 40], np.int64), "b": np.array([True, False]),
                  "s": np.array([b"ab", b"c"], dtype=object)}
        for name, v in values.items():
            mobile_exporter.add_tensor(net, name, v)
        workspace.RunNetOnce(net)
        for name, v in values.items():
            got = workspace.FetchBlob(name)
            self.assertEqual(got.dtype, v.dtype, name)
            np.testing.assert_array_equal(got, v)
        with self.assertRaises(TypeError):
            mobile_exporter.add_tensor(net, "u", np.zeros(2, np.uint8))


class TestPredictorExporter(test_util.TestCase):
    def test_meta_and_db_functions(self):
        net = core.Net("pe")
        net.FC(["data", "w", "b"], "y")
        meta = predictor_exporter.PredictorExportMeta(predict_net=net, parameters=["w", "b"],
                                                      inputs=["data"], outputs=["y"])
        self.assertEqual(meta.inputs, ["data"])
        self.assertIsInstance(meta.predict_net, caffe2_pb2.NetDef)
        with self.assertRaises(AssertionError):
            predictor_exporter.PredictorExportMeta(net, ["w"], ["w"], ["y"])
        with self.assertRaises(NotImplementedError) as e:
            predictor_exporter.save_to_db("minidb", "/tmp/x.minidb", meta)
        self.assertIn("MetaNetDef", str(e.exception))
        with self.assertRaises(NotImplementedError):
            predictor_exporter.load_from_db("/tmp/x.minidb", "minidb")


if __name__ == "__main__":
    unittest.main()
