"""Checkpoints: 20 training iterations straight through vs 10 + save + fresh workspace + load + 10
more give the same loss curve and parameters, bit for bit (seeded init, fixed batches)."""
import os
import struct

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, checkpoint, core, model_helper, optimizer, workspace


def _model(opt):
    model = model_helper.ModelHelper(name="ckpt_" + opt)
    h = brew.fc(model, "data", "fc1", dim_in=8, dim_out=16)
    brew.relu(model, h, h)
    pred = brew.fc(model, h, "pred", dim_in=16, dim_out=4)
    model.net.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])
    model.AddGradientOperators(["loss"])
    if opt == "sgd":
        optimizer.build_sgd(model, 0.1, momentum=0.9, policy="step", stepsize=7, gamma=0.5, weight_decay=1e-3)
    else:
        optimizer.build_adam(model, 0.01)
    for i, op in enumerate(model.param_init_net.Proto().op):
        op.device_option.random_seed = 100 + i
    return model


def _batches(n):
    r = np.random.RandomState(7)
    proj = r.randn(8, 4)
    out = []
    for _ in range(n):
        x = r.randn(6, 8).astype(np.float32)
        out.append((x, (x @ proj).argmax(axis=1).astype(np.int32)))  # learnable labels
    return out


def _run(model, batches):
    losses = []
    for x, y in batches:
        workspace.FeedBlob("data", x)
        workspace.FeedBlob("label", y)
        workspace.RunNet(model.net.Proto().name)
        losses.append(workspace.FetchBlob("loss").copy())
    return losses


def _start(model, batches):
    workspace.ResetWorkspace()
    workspace.RunNetOnce(model.param_init_net)
    workspace.FeedBlob("data", batches[0][0])
    workspace.FeedBlob("label", batches[0][1])
    workspace.CreateNet(model.net, overwrite=True)


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_resume_from_checkpoint_is_bit_exact(ws, tmp_path, opt):
    model = _model(opt)
    batches = _batches(20)
    _start(model, batches)
    straight = _run(model, batches)
    final = {str(p): workspace.FetchBlob(p) for p in model.params}

    _start(model, batches)
    first = _run(model, batches[:10])
    path = str(tmp_path / "ckpt.minidb")
    saved = checkpoint.save(path)
    assert "optimizer_iteration" in saved and "fc1_w" in saved
    workspace.ResetWorkspace()
    assert not workspace.HasBlob("fc1_w")
    loaded = checkpoint.load(path)
    assert set(saved) <= set(loaded)
    assert int(workspace.FetchBlob("optimizer_iteration")[0]) == 10
    assert workspace.FetchBlob("optimizer_iteration").dtype == np.int64
    workspace.CreateNet(model.net, overwrite=True)
    second = _run(model, batches[10:])

    resumed = first + second
    assert all(np.array_equal(a, b) for a, b in zip(straight, resumed)), (straight, resumed)
    for p, v in final.items():
        assert np.array_equal(workspace.FetchBlob(p), v), p
    assert np.mean(straight[-5:]) < np.mean(straight[:5])


def test_minidb_file_format_and_chunks(ws, tmp_path):
    big = np.arange(25, dtype=np.float32).reshape(5, 5)
    workspace.FeedBlob("big", big)
    workspace.FeedBlob("ints", np.array([1, 2, 3], dtype=np.int64))
    path = str(tmp_path / "c.minidb")
    workspace.RunOperatorOnce(core.CreateOperator("Save", ["big", "ints"], [], db=path, db_type="minidb",
                                                  chunk_size=10))
    keys = []
    with open(path, "rb") as f:
        while True:
            h = f.read(8)
            if not h:
                break
            klen, vlen = struct.unpack("<ii", h)
            key = f.read(klen).decode()
            proto = caffe2_pb2.BlobProto()
            proto.ParseFromString(f.read(vlen))
            assert proto.type == "Tensor" and proto.name == key.split("#%")[0]
            keys.append(key)
    assert keys == ["big#%0", "big#%1", "big#%2", "ints#%0"]
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator("Load", [], ["big", "ints"], db=path, db_type="minidb"))
    assert np.array_equal(workspace.FetchBlob("big"), big)
    assert np.array_equal(workspace.FetchBlob("ints"), [1, 2, 3])
    # load_all + add_prefix, strip_prefix, source_blob_names
    workspace.RunOperatorOnce(core.CreateOperator("Load", [], [], db=path, load_all=1, add_prefix="p/"))
    assert np.array_equal(workspace.FetchBlob("p/big"), big)
    workspace.RunOperatorOnce(core.CreateOperator("Load", [], ["renamed"], db=path, source_blob_names=["ints"]))
    assert np.array_equal(workspace.FetchBlob("renamed"), [1, 2, 3])


def test_save_load_errors(ws, tmp_path):
    with pytest.raises(Exception, match="missing.minidb"):
        workspace.RunOperatorOnce(core.CreateOperator("Load", [], ["x"], db=str(tmp_path / "missing.minidb")))
    workspace.FeedBlob("x", np.ones(3, np.float32))
    path = str(tmp_path / "x.minidb")
    workspace.RunOperatorOnce(core.CreateOperator("Save", ["x"], [], db=path))
    with pytest.raises(Exception, match="'nope' .*is not in db"):
        workspace.RunOperatorOnce(core.CreateOperator("Load", [], ["nope"], db=path))
    with pytest.raises(Exception, match="db_type 'leveldb' is not supported"):
        workspace.RunOperatorOnce(core.CreateOperator("Save", ["x"], [], db=path, db_type="leveldb"))
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) - 3)
    with pytest.raises(Exception, match="truncated"):
        workspace.RunOperatorOnce(core.CreateOperator("Load", [], ["x"], db=path))
