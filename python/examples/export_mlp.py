"""Builds a small MLP classifier with brew, runs it in Python, and exports it for C++ users.

Writes OUT_DIR/init_net.pb, OUT_DIR/predict_net.pb (binary NetDefs, loadable by Caffe2 too),
OUT_DIR/data.npy (a batch of inputs) and OUT_DIR/expected_softmax.npy (Python's predictions), so
`hetnet run --init ... --predict ... --input data=... --output softmax=...` can be compared.
"""
import os
import sys

import numpy as np

from caffe2.python import brew, model_helper, workspace

out_dir = sys.argv[1] if len(sys.argv) > 1 else "example_out"
os.makedirs(out_dir, exist_ok=True)

np.random.seed(0)
model = model_helper.ModelHelper(name="mlp")
hidden = brew.fc(model, "data", "hidden", dim_in=64, dim_out=32)
hidden = brew.relu(model, hidden, hidden)
logits = brew.fc(model, hidden, "logits", dim_in=32, dim_out=10)
brew.softmax(model, logits, "softmax")
model.net.AddExternalOutput("softmax")

data = np.random.rand(8, 64).astype(np.float32)
workspace.FeedBlob("data", data)
workspace.RunNetOnce(model.param_init_net)
workspace.CreateNet(model.net)
workspace.RunNet(model.net.Name())
softmax = workspace.FetchBlob("softmax")

# The init net for deployment: the trained (here: initialised) weights as GivenTensorFill ops.
init = model.param_init_net.Proto().__class__()
init.name = "mlp_init"
for name in model.GetParams():
    value = workspace.FetchBlob(str(name))
    op = init.op.add()
    op.type = "GivenTensorFill"
    op.output.append(str(name))
    op.arg.add(name="shape", ints=list(value.shape))
    op.arg.add(name="values", floats=value.ravel().tolist())
with open(os.path.join(out_dir, "init_net.pb"), "wb") as f:
    f.write(init.SerializeToString())
with open(os.path.join(out_dir, "predict_net.pb"), "wb") as f:
    f.write(model.net.Proto().SerializeToString())
np.save(os.path.join(out_dir, "data.npy"), data)
np.save(os.path.join(out_dir, "expected_softmax.npy"), softmax)
print("exported {} ops + {} params to {}; python argmax: {}".format(
    len(model.net.Proto().op), len(init.op), out_dir, softmax.argmax(axis=1).tolist()))
