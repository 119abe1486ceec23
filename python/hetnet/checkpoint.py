"""Checkpoints: blobs of the current workspace to and from a minidb file through the Save and Load
operators (the file format of Caffe2's minidb; Caffe2 can read it with Load(db_type="minidb")).

    checkpoint.save("model.minidb", ["fc_w", "fc_b", "optimizer_iteration"])
    workspace.ResetWorkspace()
    checkpoint.load("model.minidb")          # every blob in the file, created as needed
"""
from hetnet import core, workspace


def save(path, blobs=None, strip_prefix=None, chunk_size=None):
    """Saves `blobs` (default: every tensor blob of the current workspace) to `path`."""
    names = [str(b) for b in (blobs if blobs is not None else _tensor_blobs())]
    if not names:
        raise ValueError("checkpoint.save: no blobs to save")
    stored = [n[len(strip_prefix):] if strip_prefix and n.startswith(strip_prefix) else n for n in names]
    op = core.CreateOperator("Save", names, [], db=str(path), db_type="minidb", absolute_path=1,
                             blob_name_overrides=stored, chunk_size=chunk_size)
    workspace.RunOperatorOnce(op)
    return stored


def load(path, blobs=None, add_prefix=None, keep_device=False):
    """Loads `blobs` (default: all in the file) into the current workspace; returns their names."""
    if blobs is None:
        before = set(workspace.Blobs())
        op = core.CreateOperator("Load", [], [], db=str(path), db_type="minidb", absolute_path=1, load_all=1,
                                 add_prefix=add_prefix, keep_device=int(bool(keep_device)))
        workspace.RunOperatorOnce(op)
        return sorted(set(workspace.Blobs()) - before | set(_names_in(path, add_prefix)))
    names = [str(b) for b in blobs]
    op = core.CreateOperator("Load", [], names, db=str(path), db_type="minidb", absolute_path=1,
                             add_prefix=add_prefix, keep_device=int(bool(keep_device)))
    workspace.RunOperatorOnce(op)
    return names


def _tensor_blobs():
    out = []
    for name in workspace.Blobs():
        try:
            if str(workspace.BlobInfo(name).get("type", "")).endswith("Tensor"):
                out.append(name)
        except Exception:  # noqa: BLE001  (empty or non-tensor blobs are skipped)
            pass
    return out


def _names_in(path, add_prefix=None):
    """Blob names stored in a minidb file (keys without their '#%<chunk>' suffix)."""
    import struct
    names = []
    with open(path, "rb") as f:
        while True:
            header = f.read(8)
            if len(header) < 8:
                break
            klen, vlen = struct.unpack("<ii", header)
            key = f.read(klen).decode("utf-8", "replace")
            f.seek(vlen, 1)
            base = key.rsplit("#%", 1)[0] if "#%" in key else key
            name = (add_prefix or "") + base
            if name not in names:
                names.append(name)
    return names
