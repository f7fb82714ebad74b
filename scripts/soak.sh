#!/usr/bin/env bash
# Soak test of plrank-server under version churn (docs/reliability.md):
#
#   scripts/soak.sh MINUTES        # e.g. 10; decimals work (0.5)
#
# Starts the real plrank-server (Release build) on a temporary model
# repository and keeps plrank-loadgen's closed loop at concurrency 8 on
# Rank (default version, 50 documents x 20 features) for MINUTES, while:
#  - every 2 s a new version appears, alternately published atomically
#    (copied into a hidden directory, then renamed into place) and as a slow
#    non-atomic copy (the version directory first, then model.pb written in
#    four chunks 0.3 s apart);
#  - every 20 s the new version is instead a corrupt or crafted one, in
#    turn: truncated, garbage, unsupported format version, leaves adding up
#    to +inf, num_features = 50,000,000, and a valid model with 7 features
#    (incompatible with the 20-feature requests) (scripts/craft_model.py);
#  - ReloadModels is called every second (plrank-client reload), racing the
#    1 s poll;
#  - versions older than the newest 12 are deleted;
#  - hostile clients (issue 39) run beside it: 64 raw TCP connections that
#    send the HTTP/2 preface and never read, held for the whole run, and
#    every 5 s an Evaluate with 10,000 ndcg_at cut-offs and per_query (must
#    be refused with RESOURCE_EXHAUSTED at once, not amplified).
# Intended behaviour: every Rank request succeeds, served by the last good
# compatible version, and every ReloadModels call succeeds.
#
# Prints Rank requests ok / failed by gRPC status code, ReloadModels ok /
# failed, the versions published, the server's load events, its RSS at the
# start, the end and the maximum (sampled every 5 s), and exits 1 on any
# failed request, a server that died, or a server that did not stop cleanly
# on SIGTERM. The server runs under `ulimit -v` (PLRANK_SOAK_MAX_VMEM_KB,
# default 8 GiB) so that a hostile version cannot exhaust a shared machine.
# PLRANK_SOAK_KEEP=1 keeps the work directory (logs, loadgen JSON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if [[ $# -ne 1 ]] || ! awk -v m="$1" 'BEGIN { exit !(m ~ /^[0-9]+(\.[0-9]+)?$/ && m > 0) }'; then
  echo "usage: scripts/soak.sh MINUTES" >&2
  exit 2
fi
duration=$(awk -v m="$1" 'BEGIN { printf "%d", m * 60 + 0.5 }')
(( duration >= 10 )) || duration=10
build=${PLRANK_SOAK_BUILD_DIR:-build/release}
features=20
./scripts/build.sh "$build" -- plrank-server plrank-loadgen plrank-client \
  plrank-train plrank-datagen >/dev/null
bin=$root/$build
[[ $build == /* ]] && bin=$build
bin=$bin/bin

work=$(mktemp -d /tmp/plrank-soak-XXXXXX)
models=$work/models/soak
mkdir -p "$models" "$work/crafted"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ ${PLRANK_SOAK_KEEP:-0} == 1 ]]; then
    echo "soak: work directory kept: $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

echo "== soak: training two compatible models ($features features)"
"$bin/plrank-datagen" --queries=200 --mean_docs=20 --features=$features --seed=3 \
  --out="$work/train.txt" >/dev/null
"$bin/plrank-train" --train="$work/train.txt" --num_features=$features --trees=60 \
  --quiet --model_out="$work/a.pb" >/dev/null
"$bin/plrank-train" --train="$work/train.txt" --num_features=$features --trees=80 \
  --learning_rate=0.05 --seed=2 --quiet --model_out="$work/b.pb" >/dev/null
crafted=(truncated garbage bad_version inf_sum wide features:7)
for kind in "${crafted[@]}"; do
  ./scripts/craft_model.py "$kind" "$work/crafted/${kind/:/_}.pb" "$work/a.pb"
done
mkdir -p "$models/1"
cp "$work/a.pb" "$models/1/model.pb"

echo "== soak: starting plrank-server"
(
  ulimit -v "${PLRANK_SOAK_MAX_VMEM_KB:-8388608}"
  exec "$bin/plrank-server" --model_base_path="$work/models" --host=127.0.0.1 \
    --port=0 --metrics_port=0 --poll_interval_seconds=1
) >"$work/server.out" 2>"$work/server.log" &
server=$!
pids+=("$server")
for _ in $(seq 200); do
  grep -q "^metrics on" "$work/server.out" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$work/server.out")
[[ -n $port ]] || { echo "soak: the server did not start" >&2; cat "$work/server.log" >&2; exit 1; }
target=127.0.0.1:$port
client=("$bin/plrank-client" --target="$target" --model=soak --deadline_seconds=10)
for _ in $(seq 100); do
  # grep reads all (-q could SIGPIPE the client: a failure under pipefail).
  "${client[@]}" status 2>/dev/null | grep AVAILABLE >/dev/null && break
  sleep 0.2
done
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$server/status" 2>/dev/null || echo 0; }
rss_start=$(rss_kb)
echo "server on $target (pid $server), RSS $((rss_start / 1024)) MiB; soaking for ${duration}s"

slow_copy() {  # slow_copy SRC DST: model.pb appears at once, filled in 4 chunks
  local size chunk
  size=$(stat -c %s "$1")
  chunk=$(( (size + 3) / 4 ))
  : >"$2"
  for i in 0 1 2 3; do
    dd if="$1" bs="$chunk" skip="$i" count=1 status=none >>"$2"
    sleep 0.3
  done
}

publisher() {
  local start version=1 tick=0 kind_index=0 now next
  start=$(date +%s.%N)
  while :; do
    tick=$((tick + 1))
    next=$(awk -v s="$start" -v t="$tick" 'BEGIN { printf "%.3f", s + 2 * t }')
    now=$(date +%s.%N)
    if awk -v a="$next" -v b="$now" 'BEGIN { exit !(a > b) }'; then
      sleep "$(awk -v a="$next" -v b="$now" 'BEGIN { printf "%.3f", a - b }')"
    fi
    version=$((version + 1))
    if (( tick % 10 == 0 )); then
      local kind=${crafted[$((kind_index % ${#crafted[@]}))]}
      kind_index=$((kind_index + 1))
      mkdir -p "$models/.stage-$version"
      cp "$work/crafted/${kind/:/_}.pb" "$models/.stage-$version/model.pb"
      mv "$models/.stage-$version" "$models/$version"
      echo "$version crafted $kind"
    elif (( tick % 2 == 0 )); then
      mkdir -p "$models/.stage-$version"
      cp "$work/$([[ $((tick % 4)) == 0 ]] && echo a || echo b).pb" \
        "$models/.stage-$version/model.pb"
      mv "$models/.stage-$version" "$models/$version"
      echo "$version atomic"
    else
      mkdir -p "$models/$version"
      slow_copy "$work/$([[ $((tick % 4)) == 1 ]] && echo a || echo b).pb" \
        "$models/$version/model.pb"
      echo "$version slow_copy"
    fi
    for dir in "$models"/*; do
      local name=${dir##*/}
      if [[ $name =~ ^[0-9]+$ ]] && (( name <= version - 12 )); then
        rm -rf "$dir"
      fi
    done
  done
}

reloader() {
  while :; do
    if "${client[@]}" reload >/dev/null 2>>"$work/reload.err"; then
      echo ok
    else
      echo failed
    fi
    sleep 1
  done
}

never_reading() {  # holds N raw HTTP/2 connections that never read
  /usr/bin/python3 - "$port" 64 <<'PY'
import socket, sys, time
port, count = int(sys.argv[1]), int(sys.argv[2])
held = []
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    # Client preface and an empty SETTINGS frame; nothing is ever read.
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    held.append(s)
print(len(held), flush=True)
while True:
    time.sleep(3600)
PY
}

amplifier() {  # Evaluate with 10,000 cut-offs and per_query, every 5 s
  local cutoffs
  cutoffs=$(seq -s, 1 10000)
  while :; do
    local start end
    start=$(date +%s.%N)
    if "${client[@]}" evaluate --data="$work/train.txt" --eval_at="$cutoffs" \
        --per_query >/dev/null 2>>"$work/amplifier.err"; then
      echo "answered"
    else
      end=$(date +%s.%N)
      echo "refused $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')"
    fi
    sleep 5
  done
}

sampler() {
  while :; do
    rss_kb
    sleep 5
  done
}

publisher >"$work/published.txt" 2>"$work/publisher.err" &
pids+=($!)
publisher_pid=$!
reloader >"$work/reloads.txt" &
pids+=($!)
reloader_pid=$!
sampler >"$work/rss.txt" &
pids+=($!)
sampler_pid=$!
never_reading >"$work/never_reading.txt" 2>"$work/never_reading.err" &
pids+=($!)
never_reading_pid=$!
amplifier >"$work/amplifier.txt" &
pids+=($!)
amplifier_pid=$!

load_status=0
"$bin/plrank-loadgen" --target="$target" --model=soak --synthetic_docs=50 \
  --features=$features --concurrency=8 --requests=1000000000000 \
  --duration_seconds="$duration" --deadline_ms=5000 \
  --json_out="$work/load.json" >"$work/load.txt" 2>&1 || load_status=$?
for pid in "$publisher_pid" "$reloader_pid" "$sampler_pid" \
    "$never_reading_pid" "$amplifier_pid"; do
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
done
rss_end=$(rss_kb)
rss_max=$(sort -n "$work/rss.txt" | tail -n 1)
if (( ${rss_end:-0} > ${rss_max:-0} )); then rss_max=$rss_end; fi
server_alive=1
kill -0 "$server" 2>/dev/null || server_alive=0
server_exit=dead
if (( server_alive )); then
  kill -TERM "$server"
  server_exit=0
  wait "$server" || server_exit=$?
fi

field() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
sent=0 ok=0 errors=0 by_code="{}"
if [[ -f $work/load.json ]]; then
  sent=$(field "$work/load.json" 'd["sent"]')
  ok=$(field "$work/load.json" 'd["ok"]')
  errors=$(field "$work/load.json" 'd["errors"]')
  by_code=$(field "$work/load.json" 'd["errors_by_code"]')
fi
reload_ok=$(grep -c '^ok$' "$work/reloads.txt" || true)
reload_failed=$(grep -c '^failed$' "$work/reloads.txt" || true)
count() { grep -c "event=$1\b" "$work/server.log" || true; }

echo "== soak result ($duration s, $(nproc) CPUs, load average at end $(cut -d' ' -f1-3 /proc/loadavg))"
echo "versions published: $(wc -l <"$work/published.txt") ($(grep -c ' atomic$' "$work/published.txt" || true) atomic renames, $(grep -c ' slow_copy$' "$work/published.txt" || true) slow copies, $(grep -c ' crafted ' "$work/published.txt" || true) corrupt/crafted: $(awk '$2 == "crafted" { printf "%s%s", sep, $3; sep = ", " }' "$work/published.txt"))"
echo "Rank requests: sent $sent, ok $ok, failed $errors, failed by code: $by_code"
echo "ReloadModels: ok $reload_ok, failed $reload_failed"
echo "server events: version_loaded $(count version_loaded), version_load_failed $(count version_load_failed), default_version_changed $(count default_version_changed), version_unloaded $(count version_unloaded)"
# Crafted versions the server loaded anyway (the validator refuses all but
# the incompatible one, which only the version manager can hold back), and
# those that became the default (none should: requests would fail).
crafted_loaded=""
crafted_promoted=""
while read -r v kind; do
  if grep -q "event=version_loaded model=soak version=$v " "$work/server.log"; then
    crafted_loaded+="$v:$kind "
  fi
  if grep -q "event=default_version_changed model=soak from=[0-9]* to=$v\$" "$work/server.log"; then
    crafted_promoted+="$v:$kind "
  fi
done < <(awk '$2 == "crafted" { print $1, $3 }' "$work/published.txt")
echo "corrupt/crafted versions that loaded: ${crafted_loaded:-none}"
echo "corrupt/crafted versions promoted to default: ${crafted_promoted:-none}"
echo "promotions refused: $(count promotion_refused)"
amplified_refused=$(grep -c '^refused' "$work/amplifier.txt" || true)
amplified_answered=$(grep -c '^answered' "$work/amplifier.txt" || true)
amplified_slowest=$(awk '$1 == "refused" && $2 > m { m = $2 } END { printf "%.3f", m }' "$work/amplifier.txt")
echo "hostile clients: $(cat "$work/never_reading.txt" 2>/dev/null || echo 0) never-reading connections held; Evaluate with 10,000 cut-offs refused $amplified_refused (slowest ${amplified_slowest} s), answered $amplified_answered"
echo "server RSS: start $((rss_start / 1024)) MiB, end $((${rss_end:-0} / 1024)) MiB, max $((${rss_max:-0} / 1024)) MiB"
echo "server exit after SIGTERM: $server_exit"
verdict=PASS
reasons=()
(( errors == 0 )) || reasons+=("$errors Rank requests failed")
(( ok > 0 )) || reasons+=("no Rank request succeeded (loadgen exit $load_status)")
(( amplified_answered == 0 )) || reasons+=("$amplified_answered amplified Evaluate calls were answered")
(( reload_failed == 0 )) || reasons+=("$reload_failed ReloadModels calls failed: $(sort "$work/reload.err" | uniq -c | sort -rn | awk 'NR <= 3' | tr '\n' ';')")
[[ $server_exit == 0 ]] || reasons+=("server exit: $server_exit")
if [[ ${#reasons[@]} -gt 0 ]]; then
  verdict=FAIL
  if [[ $server_exit != 0 ]]; then
    echo "-- the server's last log lines:"
    tail -n 10 "$work/server.log"
  fi
fi
echo "soak: $verdict${reasons[*]:+: ${reasons[*]}}"
[[ $verdict == PASS ]]
