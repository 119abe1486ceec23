#!/usr/bin/env python3
"""Writes the seed corpora fuzz/corpus/<target>/ (small files, a few per target) from the shapes of
inputs the tests use: NetDefs (binary and text), TensorProto/BlobProto of each dtype, minidb files,
HTTP infer bodies and gRPC ModelInferRequests for the serving fixture's models (fuzz/serving_fixture.h).
Needs protoc and Python protobuf (tools/setup_deps.sh installs both). Run: python3 fuzz/make_seeds.py"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")

gen = tempfile.mkdtemp(prefix="hetnet_seeds_")
subprocess.check_call(["protoc", "--python_out=" + gen, "-I", ROOT, "proto/caffe2.proto",
                       "serving/proto/model_config.proto", "serving/proto/grpc_service.proto"], cwd=ROOT)
sys.path.insert(0, gen)
from proto import caffe2_pb2  # noqa: E402
from serving.proto import grpc_service_pb2  # noqa: E402
from google.protobuf import text_format  # noqa: E402

seeds = {}


def add(target, name, data):
    if isinstance(data, str):
        data = data.encode()
    seeds.setdefault(target, []).append((name, data))


# ---- NetDefs ----
def op(type_, inputs, outputs, device=None, **args):
    o = caffe2_pb2.OperatorDef(type=type_, input=inputs, output=outputs)
    if device is not None:
        o.device_option.device_type = device[0]
        o.device_option.device_id = device[1]
    for k, v in args.items():
        a = o.arg.add(name=k)
        if isinstance(v, (list, tuple)):
            if all(isinstance(x, int) for x in v):
                a.ints.extend(v)
            else:
                a.floats.extend(float(x) for x in v)
        elif isinstance(v, int):
            a.i = v
        elif isinstance(v, float):
            a.f = v
        else:
            a.s = v.encode()
    return o


def net(name, ops, inputs, outputs, type_="", **kw):
    n = caffe2_pb2.NetDef(name=name, type=type_, external_input=inputs, external_output=outputs)
    n.op.extend(ops)
    for k, v in kw.items():
        if isinstance(v, caffe2_pb2.DeviceOption):
            n.device_option.CopyFrom(v)
        elif isinstance(v, list):
            getattr(n, k).extend(v)
        else:
            setattr(n, k, v)
    return n


CUDA = (1, 0)
CPU = (0, -1)
# Input names the run target feeds: a name of length L gets 1 + L % 4 dims of [2, 3, 4, 4].
nets = {
    "activations": net("act", [op("Relu", ["x"], ["r"]), op("Sigmoid", ["r"], ["s"]),
                               op("Tanh", ["s"], ["t"]), op("Softmax", ["t"], ["y"])], ["x"], ["y"]),
    "fc": net("fc", [op("ConstantFill", [], ["W"], shape=[4, 3], value=0.5),
                     op("ConstantFill", [], ["b"], shape=[4], value=0.1),
                     op("FC", ["x", "W", "b"], ["h"]), op("Softmax", ["h"], ["y"])], ["x"], ["y"]),
    "cnn": net("cnn", [op("XavierFill", [], ["w"], shape=[5, 3, 3, 3]),
                       op("ConstantFill", [], ["cb"], shape=[5], value=0.0),
                       op("Conv", ["img", "w", "cb"], ["c"], kernel=3, pad=1, stride=1),
                       op("MaxPool", ["c"], ["p"], kernel=2, stride=2),
                       op("LRN", ["p"], ["l"], size=3, alpha=0.0001, beta=0.75),
                       op("AveragePool", ["l"], ["a"], global_pooling=1),
                       op("Relu", ["a"], ["y"])], ["img"], ["y"]),
    "bn": net("bn", [op("ConstantFill", [], [n], shape=[3], value=v) for n, v in
                     (("s", 1.0), ("bb", 0.0), ("m", 0.0), ("v", 1.0))] +
              [op("SpatialBN", ["img", "s", "bb", "m", "v"], ["y"], is_test=1, epsilon=1e-5)],
              ["img"], ["y"]),
    "shape": net("shape", [op("Transpose", ["x"], ["t"], axes=[1, 0]),
                           op("Reshape", ["t"], ["r", "old"], shape=[2, 3]),
                           op("Concat", ["r", "x"], ["c", "split"], axis=0),
                           op("ReduceSum", ["c"], ["y"], axes=[1], keepdims=0),
                           op("ExpandDims", ["y"], ["e"], dims=[0]), op("Squeeze", ["e"], ["z"], dims=[0])],
                 ["x"], ["z"]),
    "dag": net("dag", [op("Relu", ["x"], ["a"]), op("Sigmoid", ["x"], ["b"]),
                       op("Sum", ["a", "b"], ["y"]), op("Scale", ["y"], ["z"], scale=2.0)],
               ["x"], ["z"], type_="dag", num_workers=2),
    "elementwise": net("ew", [op("Clip", ["x"], ["c"], min=-0.5, max=0.5), op("LeakyRelu", ["c"], ["l"], alpha=0.1),
                              op("Sqrt", ["x"], ["q"]), op("Sign", ["x"], ["g"]),
                              op("Cast", ["g"], ["i"], to=2), op("Cast", ["i"], ["f"], to=1),
                              op("Add", ["l", "f"], ["y"]), op("Mul", ["y", "q"], ["z"])], ["x"], ["z"]),
    "fills": net("fills", [op("UniformFill", [], ["u"], shape=[3, 4], min=-1.0, max=1.0),
                           op("GaussianFill", [], ["g"], shape=[3, 4], mean=0.0, std=1.0),
                           op("MatMul", ["u", "g"], ["m"], trans_b=1),
                           op("Split", ["m"], ["s1", "s2"], axis=0, split=[1, 2]),
                           op("Flatten", ["s2"], ["y"])], [], ["y"]),
    "loss": net("loss", [op("ConstantFill", [], ["label"], shape=[2], value=1, dtype=2),
                         op("Softmax", ["x"], ["p"]), op("LabelCrossEntropy", ["p", "label"], ["xent"]),
                         op("AveragedLoss", ["xent"], ["loss"]),
                         op("Accuracy", ["p", "label"], ["acc"])], ["x"], ["loss", "acc"]),
    "placement": net("placed", [op("FC", ["x", "W", "b"], ["h"], device=CUDA),
                                op("Relu", ["h"], ["r"], device=CPU),
                                op("Softmax", ["r"], ["y"], device=CUDA)],
                     ["x", "W", "b"], ["y"], arg=[caffe2_pb2.Argument(name="soft_placement", i=1)]),
    "placement_net_device": net("placed2", [op("Relu", ["x"], ["r"]), op("Copy", ["r"], ["c"], device=(1, 1)),
                                            op("LRN", ["c"], ["y"], size=3)],
                                ["x"], ["y"], device_option=caffe2_pb2.DeviceOption(device_type=1, device_id=0)),
}
for name, n in nets.items():
    for t in ("fuzz_netdef", "fuzz_create_net", "fuzz_run_net"):
        add(t, name + ".pb", n.SerializeToString())
    add("fuzz_text_format", name + ".pbtxt", text_format.MessageToString(n))
add("fuzz_netdef", "fc.pbtxt", text_format.MessageToString(nets["fc"]))

# ---- tensors ----
T = caffe2_pb2.TensorProto
tensors = {
    "float": T(dims=[2, 3], data_type=T.FLOAT, float_data=[1, 2, 3, 4, 5, 6], name="f"),
    "int32": T(dims=[4], data_type=T.INT32, int32_data=[1, -2, 3, 4]),
    "int64": T(dims=[2, 2], data_type=T.INT64, int64_data=[1, 2, 3, 1 << 40]),
    "double": T(dims=[3], data_type=T.DOUBLE, double_data=[0.5, -1, 1e300]),
    "bool": T(dims=[3], data_type=T.BOOL, int32_data=[1, 0, 1]),
    "uint8": T(dims=[4], data_type=T.UINT8, int32_data=[0, 1, 255, 7]),
    "byte": T(dims=[5], data_type=T.BYTE, byte_data=b"hello"),
    "string": T(dims=[2], data_type=T.STRING, string_data=[b"ab", b"cde"]),
    "fp16": T(dims=[2], data_type=T.FLOAT16, int32_data=[0x3c00, 0xc000]),
    "raw": T(dims=[2], data_type=T.FLOAT, raw_data=struct.pack("<2f", 1.5, -2.5)),
    "segment": T(dims=[4, 4], data_type=T.FLOAT, float_data=[1, 2, 3, 4], segment=T.Segment(begin=4, end=8)),
    "empty": T(dims=[0, 3], data_type=T.FLOAT),
    "scalar": T(data_type=T.INT32, int32_data=[7]),
}
for name, t in tensors.items():
    add("fuzz_tensor_proto", name + ".pb", t.SerializeToString())
    add("fuzz_text_format", "tensor_" + name + ".pbtxt", text_format.MessageToString(t))
add("fuzz_tensor_proto", "protos.pb",
    caffe2_pb2.TensorProtos(protos=[tensors["float"], tensors["string"], tensors["int64"]]).SerializeToString())


def blob(name, t, chunks=None, chunk_id=None):
    b = caffe2_pb2.BlobProto(name=name, type="Tensor", tensor=t)
    if chunks is not None:
        b.content_num_chunks = chunks
        b.content_chunk_id = chunk_id
    return b


blobs = {
    "float": blob("w", tensors["float"]),
    "string": blob("s", tensors["string"]),
    "chunk": blob("c", T(dims=[4], data_type=T.FLOAT, float_data=[1, 2], segment=T.Segment(begin=0, end=2)), 2, 0),
    "int64": blob("i", tensors["int64"]),
}
for name, b in blobs.items():
    add("fuzz_blob_proto", name + ".pb", b.SerializeToString())
    add("fuzz_text_format", "blob_" + name + ".pbtxt", text_format.MessageToString(b))


def minidb(records):
    out = b""
    for k, v in records:
        out += struct.pack("<ii", len(k), len(v)) + k + v
    return out


chunk1 = blob("c", T(dims=[4], data_type=T.FLOAT, float_data=[3, 4], segment=T.Segment(begin=2, end=4)), 2, 1)
add("fuzz_minidb_load", "one.minidb", minidb([(b"w", blobs["float"].SerializeToString())]))
add("fuzz_minidb_load", "chunks.minidb", minidb([(b"c#%0", blobs["chunk"].SerializeToString()),
                                                 (b"c#%1", chunk1.SerializeToString()),
                                                 (b"s", blobs["string"].SerializeToString())]))
add("fuzz_minidb_load", "empty.minidb", b"")

# ---- serving: HTTP bodies (byte 0: model 0 simple / 1 dyn / 2 strs, bit 2 = header sent) ----
def http(model, body, header=None):
    flags = model | (4 if header is not None else 0)
    return bytes([flags]) + ((header.encode() + b"\n") if header is not None else b"") + body


rng = list(range(16))
j_simple = ('{"id":"1","inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"data":%s},'
            '{"name":"INPUT1","datatype":"INT32","shape":[1,16],"data":%s}],'
            '"outputs":[{"name":"OUTPUT0"},{"name":"OUTPUT1","parameters":{"binary_data":true}}]}') % (rng, [1] * 16)
add("fuzz_http_infer", "simple_json", http(0, j_simple.encode()))
j_bin = ('{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},'
         '{"name":"INPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}],'
         '"parameters":{"binary_data_output":true}}').encode()
add("fuzz_http_infer", "simple_binary", http(0, j_bin + struct.pack("<32i", *(rng + rng)), str(len(j_bin))))
add("fuzz_http_infer", "dyn_json",
    http(1, b'{"inputs":[{"name":"x","datatype":"FP32","shape":[2,3],"data":[[1,2,3],[4,5,6]]}],'
            b'"parameters":{"priority":1,"timeout":1000}}'))
add("fuzz_http_infer", "dyn_raw", http(1, struct.pack("<4f", 1, -2, 3, -4), "0"))
# A ~530-digit number with e-444: crashed RapidJSON 1.1.0's full-precision conversion (fuzz_device_profile).
LONG_NUMBER = ("10999999999999998." + "99999999999999919999999900000000000020" + "9" * 450
               + "909999999999999999990444442e-444")
add("fuzz_http_infer", "dyn_long_number",
    http(1, ('{"inputs":[{"name":"x","datatype":"FP32","shape":[1,2],"data":[%s,1e400]}]}' % LONG_NUMBER).encode()))
add("fuzz_http_infer", "strs_json",
    http(2, b'{"inputs":[{"name":"TEXT","datatype":"BYTES","shape":[1,2],"data":["abc","de"]}]}'))
bytes_body = struct.pack("<I", 3) + b"abc" + struct.pack("<I", 0)
j_strs = ('{"inputs":[{"name":"TEXT","datatype":"BYTES","shape":[1,2],"parameters":{"binary_data_size":%d}}]}'
          % len(bytes_body)).encode()
add("fuzz_http_infer", "strs_binary", http(2, j_strs + bytes_body, str(len(j_strs))))

# ---- serving: gRPC ModelInferRequest ----
G = grpc_service_pb2.ModelInferRequest


def grpc_input(name, dt, shape):
    return G.InferInputTensor(name=name, datatype=dt, shape=shape)


g = G(model_name="simple", id="7", inputs=[grpc_input("INPUT0", "INT32", [1, 16]), grpc_input("INPUT1", "INT32", [1, 16])])
g.raw_input_contents.extend([struct.pack("<16i", *rng), struct.pack("<16i", *([2] * 16))])
g.outputs.add(name="OUTPUT0")
add("fuzz_grpc_infer", "simple_raw.pb", g.SerializeToString())
g = G(model_name="simple", inputs=[grpc_input("INPUT0", "INT32", [1, 16]), grpc_input("INPUT1", "INT32", [1, 16])])
g.inputs[0].contents.int_contents.extend(rng)
g.inputs[1].contents.int_contents.extend(rng)
g.parameters["priority"].uint64_param = 1
add("fuzz_grpc_infer", "simple_contents.pb", g.SerializeToString())
g = G(model_name="dyn", inputs=[grpc_input("x", "FP32", [2, 2])])
g.inputs[0].contents.fp32_contents.extend([1, 2, 3, 4])
add("fuzz_grpc_infer", "dyn_contents.pb", g.SerializeToString())
g = G(model_name="strs", inputs=[grpc_input("TEXT", "BYTES", [1, 2])])
g.inputs[0].contents.bytes_contents.extend([b"abc", b""])
add("fuzz_grpc_infer", "strs_contents.pb", g.SerializeToString())
g = G(model_name="strs", inputs=[grpc_input("TEXT", "BYTES", [1, 1])])
g.raw_input_contents.append(struct.pack("<I", 2) + b"hi")
add("fuzz_grpc_infer", "strs_raw.pb", g.SerializeToString())


# ---- serving: load requests with model files (the config JSON, a NUL byte, the model file) ----
def load_request(config, model_file):
    return json.dumps(config).encode() + b"\0" + model_file


def io(names, dt, dims):
    return [{"name": n, "data_type": dt, "dims": dims} for n in names]


simple_cfg = {"name": "m", "platform": "caffe2_netdef", "max_batch_size": 8,
              "input": io(["INPUT0", "INPUT1"], "TYPE_INT32", [16]), "output": io(["OUTPUT0", "OUTPUT1"], "TYPE_INT32", [16])}
simple_net = net("m", [op("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]), op("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"])],
                 ["INPUT0", "INPUT1"], ["OUTPUT0", "OUTPUT1"])
add("fuzz_model_load", "simple_netdef", load_request(simple_cfg, simple_net.SerializeToString()))
add("fuzz_model_load", "simple_pbtxt", load_request(dict(simple_cfg, default_model_filename="model.pbtxt"),
                                                    text_format.MessageToString(simple_net).encode()))
add("fuzz_model_load", "batching_instances", load_request(
    dict(simple_cfg, dynamic_batching={"preferred_batch_size": [4], "max_queue_delay_microseconds": 100},
         instance_group=[{"kind": "KIND_CPU", "count": 2}],
         version_policy={"latest": {"num_versions": 1}}), simple_net.SerializeToString()))
dyn_net = net("m", [op("Relu", ["x"], ["y"])], ["x"], ["y"])
add("fuzz_model_load", "dyn_reshape", load_request(
    {"name": "m", "platform": "caffe2_netdef", "max_batch_size": 0,
     "input": [{"name": "x", "data_type": "TYPE_FP32", "dims": [2, 3], "reshape": {"shape": [6]}}],
     "output": io(["y"], "TYPE_FP32", [-1])}, dyn_net.SerializeToString()))


# ---- ONNX models (PyPI onnx; small weights so that seeds stay small) ----
def onnx_seeds():
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    def model(nodes, inputs, outputs, inits=(), opset=17):
        g = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        m.ir_version = 8
        return m.SerializeToString()

    f32 = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4) / 10, "w")
    b = numpy_helper.from_array(np.ones(3, np.float32), "b")
    gemm = model([helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1), helper.make_node("Relu", ["h"], ["r"]),
                  helper.make_node("Softmax", ["r"], ["y"], axis=-1)],
                 [vi("x", f32, ["N", 4])], [vi("y", f32, ["N", 3])], [w, b])
    add("fuzz_onnx_import", "gemm_relu_softmax.onnx", gemm)
    add("fuzz_model_load", "onnx_gemm", load_request(
        {"name": "m", "platform": "onnxruntime_onnx", "max_batch_size": 4,
         "input": io(["x"], "TYPE_FP32", [4]), "output": io(["y"], "TYPE_FP32", [3])}, gemm))
    k = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "k")
    add("fuzz_onnx_import", "conv_pool_flatten.onnx", model(
        [helper.make_node("Conv", ["x", "k"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
         helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("Flatten", ["p"], ["y"], axis=1)], [vi("x", f32, [1, 1, 4, 4])], [vi("y", f32, [1, 8])], [k]))
    shape = numpy_helper.from_array(np.array([0, -1], np.int64), "shape")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    add("fuzz_onnx_import", "reshape_unsqueeze_concat.onnx", model(
        [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("Unsqueeze", ["r", "axes"], ["u"]),
         helper.make_node("Concat", ["u", "u"], ["y"], axis=1)], [vi("x", f32, [2, 3, 2])], [vi("y", f32, [2, 2, 6])],
        [shape, axes], opset=13))
    add("fuzz_onnx_import", "add_broadcast_opset11.onnx", model(
        [helper.make_node("Add", ["x", "b"], ["s"]), helper.make_node("Clip", ["s"], ["y"])],
        [vi("x", f32, [2, 3])], [vi("y", f32, [2, 3])], [b], opset=11))
    raw = numpy_helper.from_array(np.ones((2, 2), np.float32), "c")
    add("fuzz_onnx_import", "constant_matmul_transpose.onnx", model(
        [helper.make_node("Constant", [], ["c2"], value=raw), helper.make_node("MatMul", ["x", "c2"], ["m"]),
         helper.make_node("Transpose", ["m"], ["y"], perm=[1, 0])], [vi("x", f32, [3, 2])], [vi("y", f32, [2, 3])]))

    # Control flow (If, Loop, Scan): subgraphs that read outer values.
    cond = numpy_helper.from_array(np.array(True), "cond")
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [], [vi("t", f32, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", f32, [2])])
    add("fuzz_onnx_import", "if_outer_value.onnx", model(
        [helper.make_node("Greater", ["x", "x"], ["c"]), helper.make_node("ReduceMax", ["c"], ["cm"], keepdims=0),
         helper.make_node("Cast", ["cond"], ["cb"], to=TensorProto.BOOL),
         helper.make_node("If", ["cb"], ["y"], then_branch=then_g, else_branch=else_g)],
        [vi("x", f32, [2])], [vi("y", f32, [2])], [cond], opset=13))
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["acc", "x"], ["acc_out"])],
        "body", [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []), vi("acc", f32, [2])],
        [vi("cond_out", TensorProto.BOOL, []), vi("acc_out", f32, [2])])
    trip = numpy_helper.from_array(np.array(3, np.int64), "trip")
    keep = numpy_helper.from_array(np.array(True), "keep")
    add("fuzz_onnx_import", "loop_accumulate.onnx", model(
        [helper.make_node("Loop", ["trip", "keep", "x"], ["y"], body=body)],
        [vi("x", f32, [2])], [vi("y", f32, [2])], [trip, keep], opset=13))
    sbody = helper.make_graph(
        [helper.make_node("Add", ["s", "xi"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["scan_out"])],
        "scan_body", [vi("s", f32, [2]), vi("xi", f32, [2])], [vi("s_out", f32, [2]), vi("scan_out", f32, [2])])
    init = numpy_helper.from_array(np.zeros(2, np.float32), "s0")
    add("fuzz_onnx_import", "scan_cumsum.onnx", model(
        [helper.make_node("Scan", ["s0", "x"], ["y", "ys"], body=sbody, num_scan_inputs=1)],
        [vi("x", f32, [3, 2])], [vi("y", f32, [2]), vi("ys", f32, [3, 2])], [init], opset=11))

    # Sequences (made from the tensor input, as the harness feeds tensors): split, insert, erase,
    # concatenate; SequenceMap over the parts.
    i64 = TensorProto.INT64
    pos = numpy_helper.from_array(np.array(-1, np.int64), "pos")
    add("fuzz_onnx_import", "sequence_split_insert_concat.onnx", model(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=1, keepdims=1),
         helper.make_node("SequenceInsert", ["s", "x", "pos"], ["s2"]), helper.make_node("SequenceErase", ["s2"], ["s3"]),
         helper.make_node("SequenceLength", ["s3"], ["n"]),
         helper.make_node("ConcatFromSequence", ["s3"], ["y"], axis=1)],
        [vi("x", f32, [2, 3])], [vi("y", f32, [2, 5]), vi("n", i64, [])], [pos], opset=18))
    mbody = helper.make_graph([helper.make_node("Mul", ["e", "e"], ["sq"])], "map_body", [vi("e", f32, None)],
                              [vi("sq", f32, None)])
    add("fuzz_onnx_import", "sequence_map_square.onnx", model(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
         helper.make_node("SequenceMap", ["s"], ["sq"], body=mbody),
         helper.make_node("ConcatFromSequence", ["sq"], ["y"], axis=0, new_axis=1)],
        [vi("x", f32, [3, 2])], [vi("y", f32, [3, 2])], opset=18))

    # Narrow types (core/narrow_types.h): packed int4 and float8 initializers, dequantized and cast.
    q4 = helper.make_tensor("q4", TensorProto.INT4, [5], [-8, -1, 0, 3, 7])
    f8 = helper.make_tensor("f8", TensorProto.FLOAT8E4M3FN, [2], [0.5, -448.0])
    s4 = numpy_helper.from_array(np.array(0.25, np.float32), "s4")
    add("fuzz_onnx_import", "narrow_int4_float8.onnx", model(
        [helper.make_node("DequantizeLinear", ["q4", "s4"], ["dq"]), helper.make_node("Cast", ["f8"], ["f"], to=f32),
         helper.make_node("Cast", ["x"], ["x8"], to=TensorProto.FLOAT8E5M2, saturate=0),
         helper.make_node("Cast", ["x8"], ["y"], to=f32)],
        [vi("x", f32, [2])], [vi("y", f32, [2]), vi("dq", f32, [5]), vi("f", f32, [2])], [q4, f8, s4], opset=21))


try:
    onnx_seeds()
except ImportError:
    print("onnx not installed: no seeds for fuzz_onnx_import (pip install onnx)")

shutil.rmtree(gen)
for target, files in seeds.items():
    d = os.path.join(OUT, target)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in files:
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
total = sum(len(d) for files in seeds.values() for _, d in files)
print("wrote %d seeds (%d bytes) under %s" % (sum(len(f) for f in seeds.values()), total, OUT))
