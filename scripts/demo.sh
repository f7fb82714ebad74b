#!/usr/bin/env bash
# Command (1) of the README: install what is missing, build in Release,
# generate an MSLR-shaped dataset, train PLRank, evaluate it on held-out
# queries and print the metrics table.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build=build/release
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target plrank-datagen plrank-train plrank-eval
bin=$build/bin
out=${PLRANK_DEMO_DIR:-out/demo}
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
