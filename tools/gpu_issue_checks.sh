#!/usr/bin/env bash
# The GPU parts of the open issues, run as gpu_suite.sh's `extra` step (its environment, its build):
#   HETNET_GPU_EXTRA="bash tools/gpu_issue_checks.sh" bash tools/gpu_suite.sh run gpu extra ctest
# issue 17: `hetnet calibrate` on this machine, then the auto-placement proof against that profile;
# issues 14/16/17: the Python tests that use a GPU; issue 16: CUDA graphs, float16 inference, bench_conv. Files land in $OUT (or
# build-gpu/out).
set -u
b=build-gpu
out=${OUT:-$b/out}
export PYTHONPATH="$PWD/$b/python"
rc=0
echo "### hetnet calibrate"
timeout 120 "$b/bin/hetnet" calibrate --output "$out/calibrated_profile.json" || rc=1
profile="$out/calibrated_profile.json"
[ -s "$profile" ] || profile=profiles/h100_default.json
echo "### auto placement proof ($profile)"
timeout 240 python3 benchmarks/auto_placement_proof.py --profile "$profile" --batches 1,8,64 \
  --seconds 0.3 --json "$out/auto_placement_proof.json" || rc=1
echo "### Python tests that use the GPU"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/python/test_gpu.py \
  tests/python/test_spatial_bn_multi_batch.py tests/python/test_auto_placement.py \
  tests/python/test_cuda_graph_predictor.py || rc=1
echo "### copy race (issue 18): four [gpu] runs at once, as under ctest -j8 on 2026-11-26"
for i in 1 2 3 4; do
  (c=0; timeout 150 "$b/bin/hetnet_tests" --require-gpu "[gpu]" -r compact > "/tmp/par$i.log" 2>&1 || c=$?
   echo "$c" > "/tmp/par$i.rc"; echo "run $i rc=$c $(tail -2 "/tmp/par$i.log" | tr '\n' ' ')") &
done
wait
grep -h "FAILED" -A3 /tmp/par?.log | head -40
[ "$(cat /tmp/par?.rc | sort -u)" = 0 ] || rc=1
echo "### hetnet vs PyTorch eager on the GPU (issue 16 items 5-7)"
timeout 150 python3 benchmarks/peers/vs_pytorch.py --device cuda --batches 1,8 --rounds 3 --seconds 0.3 || rc=1
echo "### GLOO allreduce vs a raw TCP loopback stream (issue 14 item 7, on more cores than ranks)"
timeout 90 python3 benchmarks/allreduce_vs_tcp.py --rounds 7 || rc=1
echo "### CUDA graphs (issue 16 item 5): eager against --cuda-graph, batch 1, same files"
timeout 60 python3 - "$out" <<'PY' || rc=1
import sys
sys.path.insert(0, "benchmarks")
import numpy as np, onnx, onnx_models
for name in ("mlp", "resnet50"):
    model, shape = onnx_models.MODELS[name]()
    onnx.save(model, "%s/%s.onnx" % (sys.argv[1], name))
    np.save("%s/%s_x.npy" % (sys.argv[1], name), np.random.RandomState(0).rand(1, *shape).astype(np.float32))
PY
for m in mlp resnet50; do
  for g in "" --cuda-graph; do
    echo "## $m ${g:-eager}"
    timeout 120 "$b/bin/hetnet" run "$out/$m.onnx" --device cuda --input "data=$out/${m}_x.npy" --iters 300 \
      --output "prob=$out/${m}_prob${g:+_graph}.npy" $g | tail -4 || rc=1
  done
  python3 -c "import numpy as np, sys; a, b = (np.load(sys.argv[1] + s) for s in ('_prob.npy', '_prob_graph.npy')); \
print('max abs diff eager vs graph', float(np.abs(a - b).max()))" "$out/$m" || rc=1
done
echo "### float16 inference (issue 16 item 5; unverified until this runs): MLP on the GPU, fp32 vs fp16"
for p in float32 fp16; do
  timeout 120 "$b/bin/hetnet" run "$out/mlp.onnx" --device cuda --input "data=$out/mlp_x.npy" --iters 300 \
    --precision $p --output "prob=$out/mlp_prob_$p.npy" | tail -3 || rc=1
done
python3 -c "import numpy as np, sys; a, b = (np.load(sys.argv[1] + s) for s in ('_float32.npy', '_fp16.npy')); \
print('max abs diff float32 vs fp16', float(np.abs(a - b).max()))" "$out/mlp_prob" || rc=1
echo "### bench_conv (issue 16 item 5: the measured engine choice)"
timeout 120 "$b/bin/bench_conv" || rc=1
exit $rc
