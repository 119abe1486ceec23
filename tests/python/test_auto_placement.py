"""Cost-based automatic placement: workspace.AutoPlace, placement="auto" nets (run here, CPU-only
or not) and `hetnet inspect --placement --auto --profile-file` with a synthetic profile."""
import json
import os
import subprocess

import numpy as np
import pytest

import hetnet
from hetnet import core
from hetnet.proto import caffe2_pb2


def _profile(gpu_memory=0):
    """A 50 GFLOPS CPU and a 20 TFLOPS GPU over a 10 GB/s, 10 us link (the C++ tests' profile)."""
    cpu = {"name": "cpu", "gemm_gflops": {"small": 5, "medium": 50, "large": 50},
           "conv_gflops": {"small": 5, "medium": 50, "large": 50},
           "mem_bandwidth_gbs": 20, "dispatch_us": 1, "memory_bytes": 0}
    gpu = {"name": "cuda:0", "gemm_gflops": {"small": 50, "medium": 5000, "large": 20000},
           "conv_gflops": {"small": 50, "medium": 5000, "large": 20000},
           "mem_bandwidth_gbs": 1000, "dispatch_us": 8, "memory_bytes": gpu_memory}
    links = [{"from": "cpu", "to": "cuda:0", "pinned": True, "bandwidth_gbs": 10, "latency_us": 10},
             {"from": "cuda:0", "to": "cpu", "pinned": True, "bandwidth_gbs": 10, "latency_us": 10}]
    return {"machine": "synthetic test machine", "source": "written by the test", "devices": [cpu, gpu],
            "links": links, "corrections": {}}


def _mlp(width, name="mlp"):
    net = core.Net(name)
    net.FC(["data", "w1", "b1"], "h")
    net.Relu("h", "r")
    net.FC(["r", "w2", "b2"], "y")
    net.Proto().external_output.append("y")
    return net


def _shapes(batch, width):
    return {"data": [batch, width], "w1": [width, width], "b1": [width], "w2": [width, width], "b2": [width]}


def _devices(placed):
    return ["cpu" if op.device_option.device_type == caffe2_pb2.CPU else
            "cuda:{}".format(op.device_option.device_id) for op in placed.op]


def _feed(ws, batch, width):
    rng = np.random.RandomState(0)
    for name, shape in _shapes(batch, width).items():
        ws.FeedBlob(name, rng.uniform(-0.1, 0.1, size=shape).astype(np.float32))


def test_big_gemms_go_to_the_gpu_small_ones_stay_by_their_cpu_data(ws):
    placed, report = ws.AutoPlace(_mlp(2048), input_shapes=_shapes(64, 2048), profile=_profile())
    assert _devices(placed) == ["cuda:0"] * 3
    assert report["predicted_us"] < report["baselines_us"]["all cpu"]
    assert report["exact"] and report["objective"] == "latency"
    assert set(report["ops"][0]["predicted_us"]) == {"cpu", "cuda:0"}
    assert " vs cpu " in report["ops"][0]["why"]
    assert "auto placement of net 'mlp" in report["text"]

    placed, report = ws.AutoPlace(_mlp(32), input_shapes=_shapes(1, 32), profile=json.dumps(_profile()))
    assert _devices(placed) == ["cpu"] * 3
    assert report["predicted_us"] <= report["baselines_us"]["all cuda:0"]


def test_pins_caps_and_refusals(ws):
    net = _mlp(2048)
    net.Proto().op[1].device_option.CopyFrom(core.DeviceOption(caffe2_pb2.CPU, 0))
    placed, report = ws.AutoPlace(net, input_shapes=_shapes(64, 2048), profile=_profile())
    assert _devices(placed)[1] == "cpu" and report["ops"][1]["pinned"]
    assert report["ops"][1]["why"] == "pinned by the user"
    placed, _ = ws.AutoPlace(net, input_shapes=_shapes(64, 2048), profile=_profile(), override_pinned=True)
    assert _devices(placed)[1] == "cuda:0"

    # Room on the GPU for one layer's 16 MiB of weights, not two.
    placed, report = ws.AutoPlace(_mlp(2048), input_shapes=_shapes(64, 2048), profile=_profile(),
                                  memory_caps={"cuda:0": 24 << 20})
    assert _devices(placed).count("cuda:0") >= 1 and report["peak_bytes"]["cuda:0"] <= 24 << 20
    assert report["caps"] == {"cuda:0": 24 << 20}
    with pytest.raises(hetnet.InvalidArgumentError, match=r"fits the memory caps.*cap is 1000 bytes"):
        ws.AutoPlace(_mlp(2048), input_shapes=_shapes(64, 2048), profile=_profile(),
                     memory_caps={"cpu": 1000, "cuda:0": 1000})
    with pytest.raises(ValueError, match="objective"):
        ws.AutoPlace(_mlp(8), objective="fast", profile=_profile())
    with pytest.raises(hetnet.NotFoundError, match="not in the device profile"):
        ws.AutoPlace(_mlp(8), devices="cpu,cuda:1", profile=_profile())
    _, report = ws.AutoPlace(_mlp(2048), objective="throughput", input_shapes=_shapes(64, 2048),
                             profile=_profile(), devices=["cpu", "cuda:0"])
    assert report["objective"] == "throughput" and report["objective_us"] > 0


def test_without_a_profile_this_machine_is_described_by_rough_constants(ws, monkeypatch):
    monkeypatch.delenv("HETNET_DEVICE_PROFILE", raising=False)
    placed, report = ws.AutoPlace(_mlp(64), input_shapes=_shapes(8, 64))
    assert "rough" in report["profile_source"]
    if ws.NumCudaDevices() == 0:
        assert _devices(placed) == ["cpu"] * 3
        assert report["ops"][0]["why"] == "cpu is the only candidate device"


def test_placement_auto_nets_run_here_and_match_a_manual_run(ws, monkeypatch):
    monkeypatch.delenv("HETNET_DEVICE_PROFILE", raising=False)
    _feed(ws, 4, 64)
    manual = _mlp(64, "manual")
    ws.RunNetOnce(manual)
    want = ws.FetchBlob("y").copy()
    net = _mlp(64, "automatic")
    net.Proto().arg.add(name="placement", s=b"auto")
    net.Proto().arg.add(name="placement_objective", s=b"throughput")
    ws.FeedBlob("y", np.zeros_like(want))
    ws.CreateNet(net)
    ws.RunNet("automatic")
    np.testing.assert_allclose(ws.FetchBlob("y"), want, rtol=1e-6)
    report = ws.PlacementReport(net)
    ran = [op for op in report["ops"] if op["reason"] != "inserted copy"]
    assert len(ran) == 3 and all(op["reason"].startswith("auto: ") for op in ran)
    if ws.NumCudaDevices() == 0:  # the built-in profile has only the CPU here: everything lands there
        assert all(tuple(op["device"]) == (caffe2_pb2.CPU, 0) for op in report["ops"])

    bad = _mlp(64, "bad")
    bad.Proto().arg.add(name="placement", s=b"magic")
    with pytest.raises(hetnet.InvalidArgumentError, match='expected "auto"'):
        ws.CreateNet(bad)


def test_placement_auto_reads_the_profile_named_by_the_environment(ws, monkeypatch, tmp_path):
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(_profile()))
    monkeypatch.setenv("HETNET_DEVICE_PROFILE", str(path))
    _, report = ws.AutoPlace(_mlp(64), input_shapes=_shapes(8, 64))
    assert report["profile_source"].startswith("synthetic test machine")
    path.write_text("{not json")
    _feed(ws, 4, 64)
    net = _mlp(64, "broken_profile")
    net.Proto().arg.add(name="placement", s=b"auto")
    with pytest.raises(hetnet.HetnetError, match="HETNET_DEVICE_PROFILE"):
        ws.CreateNet(net)


def _cli():
    from hetnet import _C
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(_C.__file__))))
    cli = os.path.join(build, "bin", "hetnet")
    assert os.path.exists(cli), "hetnet CLI not built at " + cli
    return cli


def test_cli_plans_for_a_gpu_machine_from_this_one(ws, tmp_path):
    profile, net_file = tmp_path / "h100.json", tmp_path / "mlp.pb"
    profile.write_text(json.dumps(_profile()))
    net_file.write_bytes(_mlp(2048).Proto().SerializeToString())
    shape_flags = []
    for name, shape in _shapes(64, 2048).items():
        shape_flags += ["--shape", "{}={}".format(name, ",".join(map(str, shape)))]
    out = subprocess.run([_cli(), "inspect", "--placement", "--auto", "--devices", "cpu,cuda:0",
                          "--profile-file", str(profile), str(net_file)] + shape_flags,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "auto placement of net 'mlp" in out.stdout  # core.Net makes names unique
    assert "#0 FC -> cuda:0" in out.stdout
    assert "profile: synthetic test machine" in out.stdout
    assert "auto: cuda:0" in out.stdout  # the placement report's reasons
    _, report = ws.AutoPlace(_mlp(2048), input_shapes=_shapes(64, 2048), profile=str(profile))
    for op in report["ops"]:
        assert "#{} {} -> {}".format(op["op"], op["type"], op["chosen"]) in out.stdout

    # A net that asks for placement="auto", planned for another machine, is planned auto too.
    auto_net = _mlp(2048)
    auto_net.Proto().arg.add(name="placement", s=b"auto")
    net_file.write_bytes(auto_net.Proto().SerializeToString())
    out = subprocess.run([_cli(), "inspect", "--devices", "cpu,cuda:0", str(net_file)] + shape_flags,
                         capture_output=True, text=True, timeout=60, env=dict(os.environ, HETNET_DEVICE_PROFILE=""))
    assert out.returncode == 0, out.stderr
    assert "rough constants" in out.stdout and "auto: " in out.stdout

    out = subprocess.run([_cli(), "inspect", "--profile-file", str(profile), str(net_file)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and "--profile-file is for --auto" in out.stderr


def test_measured_op_costs_replace_the_estimates_and_decide(ws):
    _feed(ws, 64, 256)
    net = _mlp(256, name="measured_mlp")
    ws.CreateNet(net)
    profile = ws.MeasureOpCosts(net, profile=_profile(), runs=5, warmup=1)
    measured = profile["measured_ops"]
    # The two FCs have one signature (64x256 by 256x256): their times pool under one entry.
    assert len(measured) == 2 and all(k.startswith("cpu|") and v >= 0 for k, v in measured.items())
    # The synthetic GPU wins 64x256 FCs by its estimate; its measured times (1000x the CPU's) decide.
    estimate, _ = ws.AutoPlace(net, devices=["cpu", "cuda:0"], profile=_profile())
    assert _devices(estimate).count("cuda:0") >= 2
    for key, us in list(measured.items()):
        measured["cuda:0|" + key.split("|", 1)[1]] = 1000 * us + 100
    placed, report = ws.AutoPlace(net, devices=["cpu", "cuda:0"], profile=profile)
    assert _devices(placed) == ["cpu"] * 3
    by_op = [o["predicted_us"]["cpu"] for o in report["ops"]]
    fc, relu = (measured[k] for k in sorted(measured) if k.startswith("cpu|"))
    assert by_op == pytest.approx([fc, relu, fc], rel=1e-12)
    with pytest.raises(hetnet.NotFoundError, match="no_such_net"):
        ws.MeasureOpCosts("no_such_net")
    with pytest.raises(hetnet.InvalidArgumentError, match="runs must be > 0"):
        ws.MeasureOpCosts(net, runs=0)


def test_measured_times_are_fitted_to_the_nets_own_run_time(ws):
    _feed(ws, 64, 256)
    net = _mlp(256, name="fitted_mlp")
    ws.CreateNet(net)
    fit = {}
    profile = ws.MeasureOpCosts(net, profile=_profile(), runs=20, warmup=3, calibration=fit)
    assert fit["device"] == "cpu" and fit["entries"] == 2 and fit["measured_us"] > 0, fit
    assert profile["run_time_scales"] == {"cpu|fitted_mlp": fit["scale"]}
    if not fit["note"]:  # within the 1/5..5 bounds: the model now predicts the measured run
        assert fit["calibrated_us"] == pytest.approx(fit["measured_us"], rel=1e-3)
    placed, report = ws.AutoPlace(net, devices=["cpu"], profile=profile)
    assert report["predicted_us"] == pytest.approx(fit["calibrated_us"], rel=1e-9)
    # Given only its name, the net's own placement is unknown: the times are recorded as before.
    by_name = {}
    plain = ws.MeasureOpCosts("fitted_mlp", profile=_profile(), runs=3, warmup=1, calibration=by_name)
    assert by_name["device"] == "" and "run_time_scales" not in plain
    assert len(plain["measured_ops"]) == 2


def test_compare_prediction_runs_the_plan_here_and_lists_each_op(ws):
    _feed(ws, 8, 64)
    net = _mlp(64, name="compared")
    cmp = ws.ComparePrediction(net, devices=["cpu"], runs=3)
    assert [o["type"] for o in cmp["ops"]] == ["FC", "Relu", "FC"]
    assert all(o["device"] == "cpu" and o["predicted_us"] > 0 and o["measured_us"] >= 0 for o in cmp["ops"])
    assert cmp["measured_wall_us"] > 0 and cmp["predicted_total_us"] > 0
    assert "total: predicted" in cmp["text"]
    assert cmp["report"]["predicted_us"] == cmp["predicted_total_us"]
    assert "compared_compare_prediction" not in ws.Nets()
    np.testing.assert_allclose(ws.FetchBlob("y"), np.maximum(ws.FetchBlob("data") @ ws.FetchBlob("w1").T
                                                              + ws.FetchBlob("b1"), 0) @ ws.FetchBlob("w2").T
                               + ws.FetchBlob("b2"), rtol=1e-4, atol=1e-5)
    with pytest.raises(hetnet.InvalidArgumentError, match="runs must be > 0"):
        ws.ComparePrediction(net, devices=["cpu"], runs=0)


def test_placement_report_for_a_gpu_machine_plans_auto_nets_auto(ws, monkeypatch, tmp_path):
    path = tmp_path / "synthetic.json"
    path.write_text(json.dumps(_profile()))
    monkeypatch.setenv("HETNET_DEVICE_PROFILE", str(path))
    _feed(ws, 64, 2048)
    net = _mlp(2048, name="auto_report")
    net.Proto().arg.add(name="placement", s=b"auto")
    report = ws.PlacementReport(net, devices=["cpu", "cuda:0"])
    ops = [o for o in report["ops"] if not o["type"].startswith("Copy")]
    cuda, cpu = (caffe2_pb2.CUDA, 0), (caffe2_pb2.CPU, 0)  # (device type, id)
    assert [tuple(o["device"]) for o in ops] == [cuda] * 3
    assert all(o["reason"].startswith("auto: ") for o in ops)
    assert len(report["copies"]) == 1 and "CopyCPUToGPU" in report["text"]
    # Without placement="auto" the same net stays where its (absent) device options say: the CPU.
    plain = ws.PlacementReport(_mlp(2048, name="plain_report"), devices=["cpu", "cuda:0"])
    assert {tuple(o["device"]) for o in plain["ops"]} == {cpu}
