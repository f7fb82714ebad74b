#!/usr/bin/env bash
# Command (1) of the README: install what is missing, build in Release,
# generate an MSLR-shaped dataset, train PLRank, evaluate it on held-out
# queries, then serve the model with plrank-server and rank, evaluate and
# scrape metrics through the real gRPC API before stopping the server.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/release
./scripts/build.sh "$build" -- plrank-datagen plrank-train plrank-eval \
  plrank-server plrank-client
bin=$build/bin
out=${PLRANK_DEMO_DIR:-out/demo}
rm -rf "$out"
mkdir -p "$out"

echo "== 1. generate data"
"$bin/plrank-datagen" --queries=1000 --mean_docs=60 --features=136 --seed=7 \
  --out_prefix="$out/data"

echo "== 2. train PLRank"
model="$out/models/demo/1/model.pb"
mkdir -p "$(dirname "$model")"
"$bin/plrank-train" --train="$out/data.train" --valid="$out/data.vali" \
  --objective=plrank --trees=300 --leaves=31 --learning_rate=0.1 \
  --early_stopping_rounds=50 --log_period=25 --model_out="$model"

echo "== 3. evaluate on the test queries"
"$bin/plrank-eval" --model="$model" --data="$out/data.test" \
  --scores_out="$out/test.scores"

echo "== 4. serve it: plrank-server on loopback"
"$bin/plrank-server" --model_base_path="$out/models" --host=127.0.0.1 \
  --port=0 --metrics_port=0 --poll_interval_seconds=2 \
  >"$out/server.out" 2>"$out/server.log" &
server=$!
trap 'kill -TERM $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  grep -q "^metrics on" "$out/server.out" 2>/dev/null && break
  sleep 0.1
done
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$out/server.out")
metrics_port=$(sed -n 's/^metrics on .*:\([0-9]*\)$/\1/p' "$out/server.out")
[ -n "$port" ] && [ -n "$metrics_port" ] || { cat "$out/server.log"; exit 1; }
target=127.0.0.1:$port
echo "server on $target, metrics on 127.0.0.1:$metrics_port"
client=("$bin/plrank-client" --target="$target" --model=demo)
for _ in $(seq 100); do
  # grep reads all (-q could SIGPIPE the client: a failure under pipefail).
  "${client[@]}" status 2>/dev/null | grep AVAILABLE >/dev/null && break
  sleep 0.2
done
"${client[@]}" status

echo "== 5. rank the test queries through Rank (first 3 queries shown)"
"${client[@]}" rank --data="$out/data.test" --top=3 \
  --scores_out="$out/test.grpc.scores" >"$out/rank.txt"
head -n 16 "$out/rank.txt"
cmp "$out/test.scores" "$out/test.grpc.scores" &&
  echo "served scores are identical to plrank-eval's"

echo "== 6. evaluate through Evaluate"
"${client[@]}" evaluate --data="$out/data.test"

echo "== 7. metrics scrape (plrank_*)"
curl -s "http://127.0.0.1:$metrics_port/metrics" >"$out/metrics.txt"
grep -m 12 -E "^plrank_(requests_total|model_versions_loaded|build_info)" "$out/metrics.txt"

echo "== 8. stop the server (SIGTERM, graceful drain)"
kill -TERM $server
wait $server && echo "server stopped cleanly"
trap - EXIT
