#!/usr/bin/env bash
# Server benchmark (issue 4): plrank-loadgen against plrank-server serving a
# 1000-tree × 31-leaf model, and against plrank-echo-server (the same gRPC
# service built the same way, answering without a model: the transport's own
# floor). 100 documents × 136 features per request, loopback only.
# Prints p50 latencies at concurrency 1, the server's own mean scoring time
# (from its /metrics histogram), the ratio
#   Rank p50 / (echo p50 + scoring time)   (target <= 1.2)
# and peak QPS at concurrency 8. Writes bench/results/server.md.
#
#   scripts/server_bench.sh            as above
#   scripts/server_bench.sh --shadow   the same with shadow scoring on at
#       fraction 1.0 (version 2, a copy of the model, shadows version 1:
#       every answered request is also scored off the request path); writes
#       bench/results/server-shadow.md with the shadow copies scored/dropped.
#
# BUILD_DIR (default build/bench) may name an existing build tree (e.g. one
# with tests): it is configured only when it has no CMakeCache.txt yet.
# PLRANK_BENCH_MODEL=FILE uses that model.pb instead of training one (for
# repeated runs: train it once with the two commands below).
set -euo pipefail
shadow=0
case "${1:-}" in
  "") ;;
  --shadow) shadow=1 ;;
  *) echo "usage: $0 [--shadow]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build/bench}
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPLRANK_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j2 --target plrank-server plrank-echo-server \
  plrank-loadgen plrank-train plrank-datagen
bin=$build/bin
work=$(mktemp -d)
# start() runs in a command substitution (a subshell), so servers record their
# PIDs in files that cleanup reads.
cleanup() {
  for f in "$work"/*.pid; do
    [ -e "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${PLRANK_BENCH_MODEL:-}" ]; then
  # A model this script trained before (for repeated runs).
  echo "== using $PLRANK_BENCH_MODEL"
  mkdir -p "$work/models/bench/1"
  cp "$PLRANK_BENCH_MODEL" "$work/models/bench/1/model.pb"
else
  echo "== training a 1000-tree x 31-leaf model (136 features)"
  "$bin/plrank-datagen" --queries=300 --mean_docs=60 --features=136 --seed=11 --out="$work/train.txt" >/dev/null
  "$bin/plrank-train" --train="$work/train.txt" --trees=1000 --leaves=31 --min_data_in_leaf=5 \
    --quiet --model_out="$work/models/bench/1/model.pb" >/dev/null
fi

start() {  # start NAME args...: runs a server, waits for its port, echoes it
  local name=$1; shift
  "$@" >"$work/$name.out" 2>"$work/$name.err" &
  echo $! >"$work/$name.pid"
  for _ in $(seq 200); do
    grep -q "^listening on" "$work/$name.out" 2>/dev/null && break
    sleep 0.05
  done
  sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/$name.out"
}
server_flags=()
results=server.md
if [ "$shadow" = 1 ]; then
  # Version 2 (the same model, so the shadow costs what serving costs)
  # shadows version 1, which keeps answering.
  mkdir -p "$work/models/bench/2"
  cp "$work/models/bench/1/model.pb" "$work/models/bench/2/model.pb"
  cat >"$work/models.config" <<'CONFIG'
models {
  name: "bench"
  version_policy { specific { versions: 1 } }
  shadow_version: 2
  shadow_fraction: 1.0
}
CONFIG
  server_flags=(--model_config_file="$work/models.config")
  results=server-shadow.md
fi
port=$(start server "$bin/plrank-server" --model_base_path="$work/models" --host=127.0.0.1 --port=0 --metrics_port=0 "${server_flags[@]}")
echo_port=$(start echo "$bin/plrank-echo-server" --port=0)
metrics_port=$(sed -n 's/^metrics on .*:\([0-9]*\)$/\1/p' "$work/server.out")
sleep 1

load() {  # load PORT CONCURRENCY OUT
  "$bin/plrank-loadgen" --target="127.0.0.1:$1" --model=bench --synthetic_docs=100 \
    --features=136 --concurrency="$2" --requests=4000 --duration_seconds=20 \
    --warmup_requests=200 --json_out="$3" >/dev/null
}
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

load "$echo_port" 1 "$work/echo1.json"
load "$port" 1 "$work/rank1.json"
# Scoring time of the concurrency-1 run only (scraped before the c=8 runs).
curl -s "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics.txt"
load "$echo_port" 8 "$work/echo8.json"
load "$port" 8 "$work/rank8.json"
# Only version 1 answers; the shadow's scoring is not in this histogram.
scoring_ms=$(awk '/^plrank_scoring_duration_seconds_sum/{s+=$2} /^plrank_scoring_duration_seconds_count/{c+=$2} END{printf "%.4f", 1000*s/c}' "$work/metrics.txt")
shadow_count() {  # shadow_count RESULT: copies with that result at the c=1 scrape
  awk -v r="result=\"$1\"" 'index($0, "plrank_shadow_requests_total{") == 1 && index($0, r) {s+=$2} END{printf "%d", s}' "$work/metrics.txt"
}

echo_p50=$(field "$work/echo1.json" 'd["latency_ms"]["p50"]')
rank_p50=$(field "$work/rank1.json" 'd["latency_ms"]["p50"]')
ratio=$(python3 -c "print(f'{$rank_p50/($echo_p50+$scoring_ms):.2f}')")
verdict=$(python3 -c "print('met' if $rank_p50/($echo_p50+$scoring_ms) <= 1.2 else 'NOT met')")
mkdir -p "$root/bench/results"
{
  if [ "$shadow" = 1 ]; then
    echo "### Server with shadow scoring at fraction 1.0: 100 documents x 136 features per request, 1000 trees x 31 leaves, loopback"
    echo
    echo "Version 2 (a copy of the model) shadows version 1 (--shadow_queue_capacity 16). Shadow copies during the concurrency-1 runs (warm-up included): $(shadow_count scored) scored, $(shadow_count dropped) dropped, $(shadow_count failed) failed."
  else
    echo "### Server: 100 documents x 136 features per request, 1000 trees x 31 leaves, loopback"
  fi
  echo
  echo "Load average at start: $(cut -d' ' -f1 /proc/loadavg) on $(nproc) CPUs."
  echo
  echo "| target | concurrency | p50 ms | p99 ms | QPS | errors |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  for f in echo1 rank1 echo8 rank8; do
    case $f in echo*) name=plrank-echo-server;; *) name=plrank-server;; esac
    echo "| $name | $(field "$work/$f.json" 'd["concurrency"]') | $(field "$work/$f.json" 'round(d["latency_ms"]["p50"],3)') | $(field "$work/$f.json" 'round(d["latency_ms"]["p99"],3)') | $(field "$work/$f.json" 'round(d["ok_qps"])') | $(field "$work/$f.json" 'd["errors"]') |"
  done
  echo
  echo "Server-side scoring time per request at concurrency 1 (mean of plrank_scoring_duration_seconds): $scoring_ms ms."
  echo
  echo "Rank p50 / (echo p50 + scoring) = $rank_p50 / ($echo_p50 + $scoring_ms) = $ratio (target <= 1.2: $verdict)."
} | tee "$root/bench/results/$results"
