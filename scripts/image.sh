#!/usr/bin/env bash
# Builds the container image for real and runs it, offline of any registry:
#   1. a Debian 12 minbase root filesystem made from this machine's apt
#      mirror with mmdebstrap (debootstrap when mmdebstrap is missing: the
#      same minbase, but 5-6x slower here, 538 s against ~90 s), cached in
#      $PLRANK_IMAGE_CACHE (default build/image-cache), imported with
#      `podman import` as debian:12 and debian:12-slim;
#   2. `buildah bud --isolation chroot` of deploy/docker/Dockerfile (this
#      machine's cgroup setup refuses `podman run`; chroot isolation works).
#      With PLRANK_IMAGE_BINARIES=DIR the runtime stage takes DIR's
#      plrank-server, plrank-train, plrank-eval and plrank-client
#      (--build-arg PLRANK_BINARIES=prebuilt: scripts/test.sh passes the
#      binaries its Release build has just compiled); without it the
#      Dockerfile's build stage compiles them (PLRANK_BINARIES=build);
#   3. the image's own entrypoint, started from its root filesystem as the
#      image's user (chroot --userspec), against a model repository in the
#      image's /models: plrank-publish (in the image) trains and publishes a
#      version, then gRPC health must be SERVING, Rank scores (the image's
#      plrank-client) must equal the image's plrank-eval's byte for byte,
#      and /metrics must answer.
# Needs root (mmdebstrap, chroot, mounts). Called by scripts/test.sh.
# PLRANK_BUILD_JOBS (2) is the build stage's parallelism. Prints the time of
# each step.
set -euo pipefail
cd "$(dirname "$0")/.."
root_dir=$(pwd)
[ "$(id -u)" -eq 0 ] || { echo "image.sh: needs root (mmdebstrap, chroot, mounts)" >&2; exit 1; }
PLRANK_SETUP_IMAGE=1 ./scripts/setup.sh

cache=${PLRANK_IMAGE_CACHE:-$root_dir/build/image-cache}
tag=${PLRANK_IMAGE_TAG:-localhost/plrank:image-test}
mkdir -p "$cache"
step_start=$SECONDS
step() { echo "image.sh: $1 took $((SECONDS - step_start)) s"; step_start=$SECONDS; }

# The machine's Debian mirror: the first deb URI of its apt sources.
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
if [ -z "$mirror" ]; then
  mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
fi
[ -n "$mirror" ] || { echo "image.sh: no apt mirror configured" >&2; exit 1; }

# 1. The base image.
base="$cache/debian12-$(echo "$mirror" | md5sum | cut -c1-8).tar"
if [ ! -s "$base" ]; then
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  bootstrap=debootstrap
  command -v mmdebstrap >/dev/null && bootstrap=mmdebstrap
  "$bootstrap" --variant=minbase bookworm "$rootfs" "$mirror" >"$cache/bootstrap.log" 2>&1 ||
    { tail -20 "$cache/bootstrap.log" >&2; rm -rf "$rootfs"; exit 1; }
  # The image's apt uses the same mirror (updates and security too).
  cp /etc/apt/sources.list.d/*.sources "$rootfs/etc/apt/sources.list.d/" 2>/dev/null || true
  [ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$rootfs/etc/apt/sources.list"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -cf "$base.tmp" . && mv "$base.tmp" "$base"
  rm -rf "$rootfs"
fi
podman import -q "$base" localhost/debian:12 >/dev/null
podman tag localhost/debian:12 localhost/debian:12-slim
step "base image (minbase from $mirror, podman import)"

# 2. The image, exactly as deploy/docker/Dockerfile says.
binaries_from=build
prebuilt=$root_dir/build/image-prebuilt
rm -rf "$prebuilt"
if [ -n "${PLRANK_IMAGE_BINARIES:-}" ]; then
  mkdir -p "$prebuilt"
  for program in plrank-server plrank-train plrank-eval plrank-client; do
    cp "$PLRANK_IMAGE_BINARIES/$program" "$prebuilt/" ||
      { echo "image.sh: no $program in PLRANK_IMAGE_BINARIES=$PLRANK_IMAGE_BINARIES" >&2; exit 1; }
  done
  binaries_from=prebuilt
fi
buildah bud --isolation chroot --pull-never --layers=false \
  --build-arg PLRANK_BINARIES="$binaries_from" \
  --build-arg PLRANK_BUILD_JOBS="${PLRANK_BUILD_JOBS:-2}" \
  -f deploy/docker/Dockerfile -t "$tag" . >"$cache/bud.log" 2>&1 ||
  { tail -40 "$cache/bud.log" >&2; echo "image.sh: buildah bud failed (log: $cache/bud.log)" >&2; exit 1; }
rm -rf "$prebuilt"
step "buildah bud --isolation chroot (binaries: $binaries_from)"

# 3. Run it from its root filesystem.
config=$(podman image inspect "$tag" --format '{{json .Config}}')
read -r user entrypoint < <(python3 -c '
import json, sys, shlex
c = json.loads(sys.argv[1])
print(c.get("User", ""), shlex.join(c["Entrypoint"]))' "$config")
[ -n "$user" ] && [ "${user%%:*}" != 0 ] && [ "${user%%:*}" != root ] ||
  { echo "image.sh: the image runs as '$user', not a non-root user" >&2; exit 1; }
container=$(buildah from --pull-never "$tag")
rootfs=$(buildah mount "$container")
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; }
  umount "$rootfs/proc" 2>/dev/null || true
  umount "$rootfs/dev" 2>/dev/null || true
  buildah umount "$container" >/dev/null 2>&1 || true
  buildah rm "$container" >/dev/null 2>&1 || true
}
trap cleanup EXIT
mount -t proc proc "$rootfs/proc"
mount --bind /dev "$rootfs/dev"
in_image() { chroot --userspec="$user" "$rootfs" "$@"; }

# A small LETOR file in the image, readable by its user.
mkdir -p "$rootfs/tmp/data"
python3 - "$rootfs/tmp/data/data.txt" <<'PY'
import random, sys
rng = random.Random(11)
with open(sys.argv[1], "w") as out:
    for q in range(1, 16):
        for _ in range(8):
            x = [rng.random() for _ in range(6)]
            label = min(4, int(3 * x[0] + 2 * x[3] * rng.random()))
            feats = " ".join(f"{i + 1}:{v:.4f}" for i, v in enumerate(x))
            out.write(f"{label} qid:{q} {feats}\n")
PY
chmod -R a+rX "$rootfs/tmp/data"

# The entrypoint as the image states it, on loopback ports of our choosing
# (a repeated flag's last value wins) and polling the repository.
# shellcheck disable=SC2086
in_image $entrypoint --host=127.0.0.1 --port=0 --metrics_host=127.0.0.1 \
  --metrics_port=0 --poll_interval_seconds=0.5 >"$cache/server.out" 2>"$cache/server.err" &
server_pid=$!
for _ in $(seq 300); do
  grep -q "^metrics on" "$cache/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$cache/server.err" >&2; exit 1; }
  sleep 0.1
done
port=$(sed -n 's/^listening on .*://p' "$cache/server.out")
metrics_port=$(sed -n 's/^metrics on .*://p' "$cache/server.out")
[ -n "$port" ] && [ -n "$metrics_port" ] || { echo "image.sh: the server printed no ports" >&2; exit 1; }

in_image /usr/local/bin/plrank-publish --base_path=/models --model=web --version=1 \
  -- --train=/tmp/data/data.txt --trees=10 --leaves=4 --min_data_in_leaf=3 --quiet \
  >"$cache/publish.log" 2>&1 || { cat "$cache/publish.log" >&2; exit 1; }

health() {  # grpc.health.v1.Health/Check(""): 1 = SERVING (Debian's python3-grpcio)
  /usr/bin/python3 - "127.0.0.1:$port" <<'PY'
import sys, grpc
channel = grpc.insecure_channel(sys.argv[1])
check = channel.unary_unary("/grpc.health.v1.Health/Check")
try:
    answer = check(b"", timeout=5)
except grpc.RpcError:
    sys.exit(1)
sys.exit(0 if answer[:2] == b"\x08\x01" else 1)
PY
}
for _ in $(seq 200); do health && break; sleep 0.1; done
health || { echo "image.sh: health is not SERVING" >&2; cat "$cache/server.err" >&2; exit 1; }

in_image /usr/local/bin/plrank-eval --model=/models/web/1/model.pb \
  --data=/tmp/data/data.txt --scores_out=/tmp/eval.scores >/dev/null
in_image /usr/local/bin/plrank-client --target="127.0.0.1:$port" --model=web rank \
  --data=/tmp/data/data.txt --scores_out=/tmp/rank.scores >/dev/null
cmp "$rootfs/tmp/eval.scores" "$rootfs/tmp/rank.scores" ||
  { echo "image.sh: served scores differ from plrank-eval's" >&2; exit 1; }
grep -q '^plrank_build_info' <<<"$(curl -sf "http://127.0.0.1:$metrics_port/metrics")" ||
  { echo "image.sh: /metrics does not answer" >&2; exit 1; }
step "run: entrypoint as $user, plrank-publish, health, Rank = plrank-eval, /metrics"
echo "image.sh: OK ($tag)"
