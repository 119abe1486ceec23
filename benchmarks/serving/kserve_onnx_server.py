"""The KServe Python model server (PyPI `kserve`) serving an ONNX file with onnxruntime, for the
comparison in bench_serving.py. Run it with the venv that has kserve (see run_all.sh):

    /tmp/hetnet-kserve-venv/bin/python kserve_onnx_server.py --onnx mlp.onnx --model_name mlp \
        --http_port 18080 --enable_grpc false --enable_latency_logging false

The model answers KServe v2 REST (/v2/models/<name>/infer), JSON or binary tensor data. The REST
server is bound to 127.0.0.1 (kserve itself binds 0.0.0.0; patched below). Threads:
--ort-threads (default 1) intra-op threads for onnxruntime.
"""
import argparse
import sys

import numpy as np
import onnxruntime as ort
import uvicorn

import kserve
from kserve import InferOutput, InferRequest, InferResponse, Model, ModelServer
from kserve import model_server as kserve_model_server
from kserve.utils.utils import generate_uuid

_orig_config = uvicorn.Config


def _loopback_config(*args, **kwargs):
    kwargs["host"] = "127.0.0.1"
    return _orig_config(*args, **kwargs)


uvicorn.Config = _loopback_config  # kserve.protocol.rest.server uses uvicorn.Config(host="0.0.0.0")


class OnnxModel(Model):
    def __init__(self, name, path, threads):
        super().__init__(name)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name
        self.output_name = self.session.get_outputs()[0].name
        self.ready = True

    def predict(self, payload: InferRequest, headers=None, response_headers=None) -> InferResponse:
        x = payload.inputs[0].as_numpy()
        if x.dtype != np.float32:
            x = x.astype(np.float32)
        y = self.session.run([self.output_name], {self.input_name: x})[0]
        out = InferOutput(name=self.output_name, shape=list(y.shape), datatype="FP32")
        out.set_data_from_numpy(y, binary_data=False)
        # Binary output when the request asks for it (binary_data_output, or binary_data on the
        # requested output: kserve's to_rest applies both), else JSON.
        return InferResponse(model_name=self.name, infer_outputs=[out],
                             response_id=payload.id if payload.id else generate_uuid(),
                             use_binary_outputs=payload.use_binary_outputs,
                             requested_outputs=payload.request_outputs)


def main():
    parser = argparse.ArgumentParser(parents=[kserve_model_server.parser])
    parser.add_argument("--onnx", required=True)
    parser.add_argument("--ort-threads", type=int, default=1)
    args, _ = parser.parse_known_args()
    model = OnnxModel(args.model_name, args.onnx, args.ort_threads)
    ModelServer().start([model])


if __name__ == "__main__":
    sys.exit(main())
