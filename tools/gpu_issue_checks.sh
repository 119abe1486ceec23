#!/usr/bin/env bash
# The GPU parts of the open issues, run as gpu_suite.sh's `extra` step (its environment, its build):
#   HETNET_GPU_EXTRA="bash tools/gpu_issue_checks.sh [CHECK...]" bash tools/gpu_suite.sh run gpu extra ctest
# CHECK (default: all, in this order): graph fp16 pytest vs_pytorch profile proof parallel allreduce
# bench_conv. Device time is scarce: name the checks a call needs, most wanted first.
#   graph      issue 16: CUDA graphs, eager against --cuda-graph on the same files
#   fp16       issue 16: float16 inference of the MLP and ResNet-50 against float32
#   pytest     issues 14/16/17: the Python tests that use a GPU
#   vs_pytorch issue 16: hetnet (eager and CUDA graph) against PyTorch eager
#   profile    issue 16: per-op-type times of ResNet-18/50 at batch 8 on the GPU
#   proof      issue 17: `hetnet calibrate`, then the auto-placement proof against that profile
#   parallel   issue 18: four [gpu] suites at once (the copy race under ctest -j8)
#   allreduce  issue 14: GLOO allreduce against a raw TCP stream on more cores than ranks
#   bench_conv issue 16: the measured engine choice
#   overlap    issue 17: does the host run ahead of the GPU? ResNet-18 traces at batch 8 and 64
#              (tools/trace_overlap.py: launches against device spans, ops issued onto an idle GPU)
#   gap        issue 17: where the small nets' unpredicted 15-45 us go (benchmarks/auto_placement_gap.py:
#              all-GPU MLP and LeNet, fetched or ending in an in-net copy; python, loop, profiled, predicted)
# Files land in $OUT (or build-gpu/out).
set -u
b=build-gpu
out=${OUT:-$b/out}
export PYTHONPATH="$PWD/$b/python"
rc=0

models() {  # the benchmark ONNX files and batch inputs in $out, once
  [ -s "$out/resnet18_x8.npy" ] && return 0
  timeout 90 python3 - "$out" <<'PY'
import sys
sys.path.insert(0, "benchmarks")
import numpy as np, onnx, onnx_models
for name in ("mlp", "resnet18", "resnet50"):
    model, shape = onnx_models.MODELS[name]()
    onnx.save(model, "%s/%s.onnx" % (sys.argv[1], name))
    for batch in (1, 8):
        x = np.random.RandomState(batch).rand(batch, *shape).astype(np.float32)
        np.save("%s/%s_x%d.npy" % (sys.argv[1], name, batch), x)
PY
}

check_graph() {
  models || return 1
  local m g r=0
  for m in mlp resnet50; do
    for g in "" --cuda-graph; do
      echo "## $m ${g:-eager}"
      timeout 120 "$b/bin/hetnet" run "$out/$m.onnx" --device cuda --input "data=$out/${m}_x1.npy" --iters 300 \
        --output "prob=$out/${m}_prob${g:+_graph}.npy" $g | tail -4 || r=1
    done
    python3 -c "import numpy as np, sys; a, b = (np.load(sys.argv[1] + s) for s in ('_prob.npy', '_prob_graph.npy')); \
print('max abs diff eager vs graph', float(np.abs(a - b).max()))" "$out/$m" || r=1
  done
  return $r
}

check_fp16() {  # float16 (FC and cuDNN Conv) against float32, batch 8, same files
  models || return 1
  local m p r=0 logits
  for m in mlp resnet50; do
    # The logits (Softmax's input): ResNet-50's random weights saturate its probabilities to an
    # exact one-hot vector, which float16 and float32 then share bit for bit.
    logits=$(python3 -c "import onnx, sys; g = onnx.load(sys.argv[1], load_external_data=False).graph; \
print([n.input[0] for n in g.node if n.op_type == 'Softmax'][0])" "$out/$m.onnx") || return 1
    for p in float32 fp16; do
      echo "## $m batch 8 $p"
      timeout 120 "$b/bin/hetnet" run "$out/$m.onnx" --device cuda --input "data=$out/${m}_x8.npy" --iters 200 \
        --precision $p --output "prob=$out/${m}_prob_$p.npy" --output "$logits=$out/${m}_logits_$p.npy" | tail -4 || r=1
    done
    python3 -c "import numpy as np, sys; \
a, b = (np.load(sys.argv[1] + '_logits' + s) for s in ('_float32.npy', '_fp16.npy')); \
p, q = (np.load(sys.argv[1] + '_prob' + s) for s in ('_float32.npy', '_fp16.npy')); \
print('logits: max abs diff float32 vs fp16 %.3g, relative to max |logit| %.3g; prob max abs diff %.3g' \
% (np.abs(a - b).max(), np.abs(a - b).max() / np.abs(a).max(), np.abs(p - q).max()))" "$out/$m" || r=1
  done
  echo "## resnet50 batch 8: memory report (the net a Predictor runs), float32 and fp16"
  for p in float32 fp16; do
    echo "# $p"
    timeout 120 "$b/bin/hetnet" inspect "$out/resnet50.onnx" --device cuda --memory --precision $p \
      --shape data=8,3,224,224 2>&1 | grep "^parameters on\|^Memory" || r=1
  done
  echo "## resnet50 batch 8 fp16, profiled"
  timeout 120 "$b/bin/hetnet" run "$out/resnet50.onnx" --device cuda --input "data=$out/resnet50_x8.npy" --iters 50 \
    --precision fp16 --profile 2>&1 | tail -22 || r=1
  return $r
}

check_pytest() {
  timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/python/test_gpu.py \
    tests/python/test_spatial_bn_multi_batch.py tests/python/test_auto_placement.py \
    tests/python/test_cuda_graph_predictor.py tests/python/test_reduced_precision.py
}

check_vs_pytorch() {
  local r=0
  timeout 150 python3 benchmarks/peers/vs_pytorch.py --device cuda --batches 1,8 --rounds 3 --seconds 0.3 \
    --models mlp,lenet,resnet18,resnet50 --cuda-graph || r=1
  return $r
}

check_profile() {
  models || return 1
  local m r=0
  for m in resnet18 resnet50; do
    echo "## $m batch 8"
    timeout 120 "$b/bin/hetnet" run "$out/$m.onnx" --device cuda --input "data=$out/${m}_x8.npy" --iters 50 \
      --profile --output "prob=$out/${m}_prob8.npy" 2>&1 | tail -40 || r=1
  done
  return $r
}

check_proof() {
  local r=0 profile="$out/calibrated_profile.json"
  if [ -n "${HETNET_PROOF_PROFILE:-}" ]; then  # a profile calibrated on this kind of machine before
    profile=$HETNET_PROOF_PROFILE
  else
    timeout 120 "$b/bin/hetnet" calibrate --output "$profile" || r=1
  fi
  [ -s "$profile" ] || profile=profiles/h100_default.json
  echo "## auto placement proof ($profile)"
  timeout 240 python3 benchmarks/auto_placement_proof.py --profile "$profile" --batches 1,8,64 \
    --seconds 0.3 --json "$out/auto_placement_proof.json" || r=1
  return $r
}

check_parallel() {  # the copy race (issue 18): four [gpu] runs at once, as under ctest -j8 on 2026-11-26
  local i
  for i in 1 2 3 4; do
    (c=0; timeout 150 "$b/bin/hetnet_tests" --require-gpu "[gpu]" -r compact > "/tmp/par$i.log" 2>&1 || c=$?
     echo "$c" > "/tmp/par$i.rc"; echo "run $i rc=$c $(tail -2 "/tmp/par$i.log" | tr '\n' ' ')") &
  done
  wait
  grep -h "FAILED" -A3 /tmp/par?.log | head -40
  [ "$(cat /tmp/par?.rc | sort -u)" = 0 ]
}

check_overlap() {
  models || return 1
  [ -s "$out/resnet18_x64.npy" ] || python3 -c "import numpy as np, sys; \
np.save(sys.argv[1], np.random.RandomState(64).rand(64, 3, 224, 224).astype(np.float32))" "$out/resnet18_x64.npy"
  local n r=0
  for n in 8 64; do
    echo "## resnet18 batch $n, 5 traced runs"
    timeout 120 "$b/bin/hetnet" run "$out/resnet18.onnx" --device cuda --input "data=$out/resnet18_x$n.npy" --iters 5 \
      --trace "$out/r18_b$n.trace.json" | tail -1 || r=1
    python3 tools/trace_overlap.py "$out/r18_b$n.trace.json" || r=1
  done
  return $r
}

check_gap() {
  local profile=${HETNET_PROOF_PROFILE:-$out/calibrated_profile.json}
  [ -s "$profile" ] || profile=profiles/h200_measured.json
  timeout 150 python3 benchmarks/auto_placement_gap.py --profile "$profile" --runs 300 --json "$out/auto_placement_gap.json"
}

check_allreduce() { timeout 90 python3 benchmarks/allreduce_vs_tcp.py --rounds 7; }
check_bench_conv() { timeout 120 "$b/bin/bench_conv"; }

checks=("$@")
[ ${#checks[@]} -eq 0 ] && checks=(graph fp16 pytest vs_pytorch profile proof parallel allreduce bench_conv)
for c in "${checks[@]}"; do
  declare -F "check_$c" >/dev/null || { echo "unknown check $c" >&2; rc=2; continue; }
  echo "### $c ($(date -u +%H:%M:%S))"
  t0=$SECONDS
  "check_$c" || { rc=1; echo "### $c FAILED"; }
  echo "### $c: $((SECONDS - t0)) s"
done
exit $rc
