#!/usr/bin/env bash
# Builds the `hetnet serve` image from deploy/Dockerfile and smoke-tests it: the container serves the
# example repository (make_example_repository.py) and answers health, metadata and an inference whose
# numbers are checked against the ones the script printed.
#
#   deploy/build_image.sh [TAG]            (from anywhere; needs a running Docker engine with BuildKit)
#
# Where no image registry is reachable but a Debian mirror is (the project's machines), the base
# images `debian:bookworm` and `debian:bookworm-slim` are made locally with debootstrap and
# `docker import` when they are missing (HETNET_LOCAL_BASE=1 forces that).
set -euo pipefail
TAG=${1:-hetnet-serve:0.1.0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DOCKER=${DOCKER:-docker}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

make_local_base() {
  command -v debootstrap >/dev/null || { echo "debootstrap is needed to make the base image" >&2; exit 1; }
  local rootfs; rootfs=$(mktemp -d /tmp/hetnet-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' RETURN
  echo "making debian:bookworm locally (debootstrap minbase from $MIRROR)" >&2
  debootstrap --variant=minbase bookworm "$rootfs" "$MIRROR" >/dev/null
  # The official image's apt sources (bookworm, -updates, -security), no cached lists.
  cat > "$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  rm -rf "$rootfs/etc/apt/sources.list" "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin
  tar -C "$rootfs" -c . | "$DOCKER" import -c 'CMD ["bash"]' - debian:bookworm >/dev/null
  "$DOCKER" tag debian:bookworm debian:bookworm-slim
}

if [ "${HETNET_LOCAL_BASE:-0}" = 1 ] || ! "$DOCKER" image inspect debian:bookworm debian:bookworm-slim >/dev/null 2>&1; then
  if [ "${HETNET_LOCAL_BASE:-0}" = 1 ] || ! "$DOCKER" pull -q debian:bookworm >/dev/null 2>&1 \
      || ! "$DOCKER" pull -q debian:bookworm-slim >/dev/null 2>&1; then
    make_local_base
  fi
fi

# --network host: the build's apt-get reaches the mirror without a Docker bridge network.
DOCKER_BUILDKIT=1 "$DOCKER" build --network host -f "$ROOT/deploy/Dockerfile" -t "$TAG" "$ROOT"

# ---- smoke test: serve the example repository from the image on free loopback ports ----
work=$(mktemp -d /tmp/hetnet-image-test.XXXXXX)
name="hetnet-image-test-$$"
cleanup() { "$DOCKER" rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
PYTHONPATH=${PYTHONPATH:-$ROOT/build/python} python3 "$ROOT/deploy/make_example_repository.py" "$work/models" \
  > "$work/expected.txt"
chmod -R a+rX "$work"
ports=$(python3 -c 'import socket
ss=[socket.socket() for _ in range(3)]
[s.bind(("127.0.0.1", 0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))')
read -r http grpc metrics <<<"$ports"
"$DOCKER" run -d --name "$name" --network host -v "$work/models:/mnt/models:ro" "$TAG" \
  --model-repository=/mnt/models --http-port="$http" --grpc-port="$grpc" --metrics-port="$metrics" >/dev/null
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$http/v2/health/ready" >/dev/null && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$http/v2/health/ready" >/dev/null \
  || { "$DOCKER" logs "$name" >&2; echo "the container did not become ready" >&2; exit 1; }
answer=$(curl -sf "http://127.0.0.1:$http/v2/models/mlp/infer" \
  -d '{"inputs":[{"name":"data","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}')
echo "infer: $answer"
python3 - "$answer" "$work/expected.txt" <<'EOF'
import json, re, sys
got = json.loads(sys.argv[1])["outputs"][0]["data"]
want = [float(x) for x in re.findall(r"[-+]?\d*\.\d+(?:[eE][-+]?\d+)?", open(sys.argv[2]).read())[-3:]]
assert len(want) == 3 and all(abs(a - b) < 1e-5 for a, b in zip(got, want)), (got, want)
print("image %s: serving, answer matches the example's expected output" % sys.argv[0])
EOF
curl -sf "http://127.0.0.1:$metrics/metrics" | grep -q '^nv_inference_request_success' \
  || { echo "no Triton metrics on the metrics port" >&2; exit 1; }
user=$("$DOCKER" exec "$name" id -u)
[ "$user" = 1000 ] || { echo "the server runs as uid $user, not 1000" >&2; exit 1; }
"$DOCKER" stop -t 30 "$name" >/dev/null
code=$("$DOCKER" inspect -f '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || { echo "SIGTERM: exit code $code, not 0" >&2; exit 1; }
echo "image $TAG: ready, infer, metrics, uid 1000, exit 0 on SIGTERM"
