"""Triton's system shared memory extension against a real `hetnet serve` (--allow-client-shm), through
tritonclient's own shared memory module (tritonclient.utils.shared_memory) over HTTP and gRPC, as
Triton's simple_http_shm_client / simple_grpc_shm_client examples use it. Loopback only."""
import os
import threading
import uuid

import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

import serving_util as su

PROTOCOLS = ["http", "grpc"]


@pytest.fixture(scope="module")
def shm_server(model_repo):
    with su.ServerProcess(model_repo, ["--allow-client-shm"]) as s:
        yield s
        assert s.stop() == 0


def client_of(server, protocol):
    if protocol == "http":
        return httpclient, httpclient.InferenceServerClient(server.http_url)
    return grpcclient, grpcclient.InferenceServerClient(server.grpc_url)


class Region:
    """A POSIX shared memory object made by tritonclient's module; destroyed on exit."""

    def __init__(self, byte_size):
        self.key = "/hetnet_test_" + uuid.uuid4().hex
        self.name = "r_" + uuid.uuid4().hex[:8]
        self.byte_size = byte_size
        self.handle = shm.create_shared_memory_region(self.name, self.key, byte_size)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shm.destroy_shared_memory_region(self.handle)

    def truncate(self, size):
        fd = os.open("/dev/shm/" + self.key[1:], os.O_RDWR)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)


def inputs_ab():
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    return a, b


def status_of(client, protocol, name=""):
    s = client.get_system_shared_memory_status(name)
    if protocol == "http":
        return {r["name"]: (r["key"], int(r["offset"]), int(r["byte_size"])) for r in s}
    return {n: (r.key, r.offset, r.byte_size) for n, r in s.regions.items()}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_inputs_and_outputs_through_shared_memory(shm_server, protocol):
    mod, client = client_of(shm_server, protocol)
    a, b = inputs_ab()
    with Region(128) as ins, Region(128 + 64) as outs:
        shm.set_shared_memory_region(ins.handle, [a, b])
        client.register_system_shared_memory(ins.name, ins.key, 128)
        # The outputs' region starts 64 bytes into the object: offsets of the region and of the tensor add.
        client.register_system_shared_memory(outs.name, outs.key, 128, offset=64)
        try:
            check_round_trip(mod, client, protocol, ins, outs, a, b)
        finally:
            client.unregister_system_shared_memory()


def check_round_trip(mod, client, protocol, ins, outs, a, b):
    """Status, then an infer whose inputs and outputs all go through the two regions, then unregistering."""
    assert status_of(client, protocol) == {ins.name: (ins.key, 0, 128), outs.name: (outs.key, 64, 128)}
    assert status_of(client, protocol, outs.name) == {outs.name: (outs.key, 64, 128)}

    inputs = [mod.InferInput("INPUT0", [1, 16], "INT32"), mod.InferInput("INPUT1", [1, 16], "INT32")]
    inputs[0].set_shared_memory(ins.name, 64)
    inputs[1].set_shared_memory(ins.name, 64, offset=64)
    outputs = [mod.InferRequestedOutput("OUTPUT0"), mod.InferRequestedOutput("OUTPUT1")]
    outputs[0].set_shared_memory(outs.name, 64)
    outputs[1].set_shared_memory(outs.name, 64, offset=64)
    result = client.infer("simple", inputs, outputs=outputs)
    for name, want, offset in (("OUTPUT0", a + b, 64), ("OUTPUT1", a - b, 128)):
        out = result.get_output(name)
        shape = list(out["shape"]) if protocol == "http" else list(out.shape)
        assert shape == [1, 16]
        got = shm.get_contents_as_numpy(outs.handle, np.int32, [1, 16], offset=offset)
        np.testing.assert_array_equal(got, want)
        if protocol == "http":  # no data came back
            assert "data" not in out and "binary_data_size" not in out.get("parameters", {})
            assert out["parameters"]["shared_memory_region"] == outs.name
        else:
            index = [o.name for o in result.get_response().outputs].index(name)
            assert result.get_response().raw_output_contents[index] == b""

    client.unregister_system_shared_memory(ins.name)
    assert status_of(client, protocol) == {outs.name: (outs.key, 64, 128)}
    client.unregister_system_shared_memory()
    assert status_of(client, protocol) == {}
    # Unregistered: the region's name is unknown again.
    with pytest.raises(InferenceServerException, match="Unable to find shared memory region: '%s'" % ins.name):
        client.infer("simple", inputs)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_mixed_shared_memory_and_inline_tensors(shm_server, protocol):
    """INPUT0 from shared memory, INPUT1 in the message (gRPC's raw_input_contents then has one entry);
    OUTPUT0 to shared memory, OUTPUT1 back in the response."""
    mod, client = client_of(shm_server, protocol)
    a, b = inputs_ab()
    with Region(64) as ins, Region(64) as outs:
        shm.set_shared_memory_region(ins.handle, [a])
        client.register_system_shared_memory(ins.name, ins.key, 64)
        client.register_system_shared_memory(outs.name, outs.key, 64)
        try:
            inputs = [mod.InferInput("INPUT0", [1, 16], "INT32"), mod.InferInput("INPUT1", [1, 16], "INT32")]
            inputs[0].set_shared_memory(ins.name, 64)
            inputs[1].set_data_from_numpy(b)
            outputs = [mod.InferRequestedOutput("OUTPUT0"), mod.InferRequestedOutput("OUTPUT1")]
            outputs[0].set_shared_memory(outs.name, 64)
            result = client.infer("simple", inputs, outputs=outputs)
            np.testing.assert_array_equal(shm.get_contents_as_numpy(outs.handle, np.int32, [1, 16]), a + b)
            np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
        finally:
            client.unregister_system_shared_memory()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_bad_regions_and_references_are_refused(shm_server, protocol):
    mod, client = client_of(shm_server, protocol)
    a, b = inputs_ab()
    with Region(128) as region:
        shm.set_shared_memory_region(region.handle, [a, b])
        with pytest.raises(InferenceServerException, match="exceeds the 128 bytes"):
            client.register_system_shared_memory("too_big", region.key, 256)
        with pytest.raises(InferenceServerException, match="Unable to open shared memory region"):
            client.register_system_shared_memory("missing", "/hetnet_no_such_" + uuid.uuid4().hex, 8)
        with pytest.raises(InferenceServerException, match="not a POSIX shared memory name"):
            client.register_system_shared_memory("escape", "/../etc/passwd", 8)
        client.register_system_shared_memory(region.name, region.key, 128)
        try:
            with pytest.raises(InferenceServerException, match="already in manager"):
                client.register_system_shared_memory(region.name, region.key, 128)
            with pytest.raises(InferenceServerException, match="Unable to find system shared memory region"):
                client.get_system_shared_memory_status("nope")

            def infer(in_size=64, in_offset=0, out_size=64, region_name=region.name):
                inputs = [mod.InferInput("INPUT0", [1, 16], "INT32"), mod.InferInput("INPUT1", [1, 16], "INT32")]
                inputs[0].set_shared_memory(region_name, in_size, offset=in_offset)
                inputs[1].set_data_from_numpy(b)
                out = mod.InferRequestedOutput("OUTPUT0")
                out.set_shared_memory(region.name, out_size, offset=64)
                return client.infer("simple", inputs, outputs=[out])

            with pytest.raises(InferenceServerException, match="Invalid offset \\+ byte size"):
                infer(in_offset=100)
            with pytest.raises(InferenceServerException, match="has 32 bytes of data"):
                infer(in_size=32)
            with pytest.raises(InferenceServerException, match="should be at least 64 bytes"):
                infer(out_size=32)
            with pytest.raises(InferenceServerException, match="Unable to find shared memory region: 'other'"):
                infer(region_name="other")
            infer()  # and the server still answers
        finally:
            client.unregister_system_shared_memory()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_region_shrunk_after_registering_is_an_error_not_a_crash(shm_server, protocol):
    """A mapping of the object would have died of SIGBUS reading past its new end."""
    mod, client = client_of(shm_server, protocol)
    a, b = inputs_ab()
    with Region(128) as region:
        shm.set_shared_memory_region(region.handle, [a, b])
        client.register_system_shared_memory(region.name, region.key, 128)
        try:
            region.truncate(16)
            inputs = [mod.InferInput("INPUT0", [1, 16], "INT32"), mod.InferInput("INPUT1", [1, 16], "INT32")]
            inputs[0].set_shared_memory(region.name, 64)
            inputs[1].set_shared_memory(region.name, 64, offset=64)
            with pytest.raises(InferenceServerException, match="now ends before byte 64"):
                client.infer("simple", inputs)
            inputs = [mod.InferInput("INPUT0", [1, 16], "INT32"), mod.InferInput("INPUT1", [1, 16], "INT32")]
            inputs[0].set_data_from_numpy(a)
            inputs[1].set_data_from_numpy(b)
            out = mod.InferRequestedOutput("OUTPUT0")
            out.set_shared_memory(region.name, 64, offset=64)
            with pytest.raises(InferenceServerException, match="now ends before byte 128"):
                client.infer("simple", inputs, outputs=[out])
            assert os.fstat(os.open("/dev/shm/" + region.key[1:], os.O_RDONLY)).st_size == 16  # not grown
            assert client.is_server_live()
            np.testing.assert_array_equal(client.infer("simple", inputs).as_numpy("OUTPUT0"), a + b)
        finally:
            client.unregister_system_shared_memory()


def test_without_the_flag_shared_memory_is_refused(server):
    """conftest's server runs without --allow-client-shm (Triton's default): nothing registers, and
    the extension is not listed."""
    http = httpclient.InferenceServerClient(server.http_url)
    grpc_client = grpcclient.InferenceServerClient(server.grpc_url)
    assert "system_shared_memory" not in http.get_server_metadata()["extensions"]
    with Region(64) as region:
        for client in (http, grpc_client):
            with pytest.raises(InferenceServerException, match="--allow-client-shm"):
                client.register_system_shared_memory(region.name, region.key, 64)
            status = client.get_system_shared_memory_status()
            assert len(status if client is http else status.regions) == 0


def test_extension_listed_and_cuda_shared_memory_unsupported(shm_server):
    http = httpclient.InferenceServerClient(shm_server.http_url)
    assert "system_shared_memory" in http.get_server_metadata()["extensions"]
    assert "cuda_shared_memory" not in http.get_server_metadata()["extensions"]
    with pytest.raises(InferenceServerException, match="CUDA shared memory is not supported"):
        http.get_cuda_shared_memory_status()
    grpc_client = grpcclient.InferenceServerClient(shm_server.grpc_url)
    with pytest.raises(InferenceServerException, match="CudaSharedMemoryStatus is not supported"):
        grpc_client.get_cuda_shared_memory_status()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_batched_requests_from_shared_memory_of_many_clients(shm_server, protocol):
    """Eight clients, each with its own regions, send MLP requests at once: the dynamic batcher puts
    their shared-memory inputs in one batch, and each output lands in its own client's region."""
    weights = su.mlp_weights()
    errors = []

    def client_loop(k):
        try:
            mod, client = client_of(shm_server, protocol)
            x = np.random.RandomState(k).rand(2, 784).astype(np.float32)
            with Region(x.nbytes) as ins, Region(2 * 10 * 4) as outs:
                shm.set_shared_memory_region(ins.handle, [x])
                client.register_system_shared_memory(ins.name, ins.key, x.nbytes)
                client.register_system_shared_memory(outs.name, outs.key, 80)
                try:
                    for _ in range(10):
                        inp = mod.InferInput("data", [2, 784], "FP32")
                        inp.set_shared_memory(ins.name, x.nbytes)
                        out = mod.InferRequestedOutput("prob")
                        out.set_shared_memory(outs.name, 80)
                        client.infer("mlp", [inp], outputs=[out])
                        got = shm.get_contents_as_numpy(outs.handle, np.float32, [2, 10])
                        np.testing.assert_allclose(got, su.mlp_reference(x, weights), rtol=1e-4, atol=1e-6)
                finally:
                    client.unregister_system_shared_memory(ins.name)
                    client.unregister_system_shared_memory(outs.name)
        except Exception as e:  # reported below, with the client's number
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=client_loop, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    stats = httpclient.InferenceServerClient(shm_server.http_url).get_inference_statistics("mlp")
    assert stats["model_stats"][0]["execution_count"] < stats["model_stats"][0]["inference_count"]  # batched
