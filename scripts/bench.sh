#!/usr/bin/env bash
# Builds Release with the benchmarks and runs them, writing markdown reports
# to bench/results/: parse.md (LETOR parsing speed), mq2008.md (5-fold mean),
# generated.md (~480K documents x 136 features) and quality.md (+ quality.json:
# ranking quality of PLRank vs LambdaMART and XGBoost over MQ2008, the
# LightGBM example and four generated regimes, 3 seeds each; about 20 minutes
# on 2 idle cores, so it is part of the default run).
#
#   scripts/bench.sh [parse] [mq2008] [generated] [quality] [memory] [clicks] [-- QUALITY_FLAGS]
#
# `clicks` (bench/clicks_bench.py, on request): position-debiased training on
# clicks simulated from MQ2008, the LightGBM example and generated sets, and
# the long-list exploration case; writes clicks.md. Flags after `--` go to
# bench/clicks_bench.py when `clicks` is the only item (e.g. -- --trees=50).
#
# With no item, the first four run. `memory` (bench/memory_bench.sh: peak RSS
# and load time of plrank-train against training files of 0.3, 1 and 2.2 GB,
# parsing and through the dataset cache; needs ~8 GB of scratch disk) is run
# on request: scripts/bench.sh memory. Flags after `--` go to plrank-bench-quality,
# e.g. to compare PLRank variants:
#   scripts/bench.sh quality -- --plrank_variants='default=;K 10=--pl_topk=10'
#
# Environment: BUILD_DIR (default build-bench), SHARED_DATA (default
# ../shared/data), THREADS (default 2). Run on an otherwise idle machine:
# with 2 cores, any other load inflates the timings of OpenMP programs.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-bench}
shared=${SHARED_DATA:-$root/../shared/data}
threads=${THREADS:-2}
results=$root/bench/results
what=()
quality_flags=()
while [[ $# -gt 0 ]]; do
  if [[ $1 == -- ]]; then
    shift
    quality_flags=("$@")
    break
  fi
  what+=("$1")
  shift
done
[[ ${#what[@]} -eq 0 ]] && what=(parse mq2008 generated quality)

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DPLRANK_BUILD_BENCH=ON -DPLRANK_BUILD_TESTS=OFF >/dev/null
targets=(plrank-train plrank-eval plrank-datagen plrank-bench-train plrank-bench-parse
  plrank-bench-quality)
# Not `| grep -q`: grep would stop reading at the first match, cmake would
# die of SIGPIPE, and pipefail would report XGBoost missing.
if cmake --build "$build" --target help | grep 'plrank-xgb-peer' >/dev/null; then
  targets+=(plrank-xgb-peer)
else
  echo "bench.sh: XGBoost not found, the XGBoost systems are skipped" >&2
fi
cmake --build "$build" -j2 --target "${targets[@]}"
bin=$build/bin
mkdir -p "$results"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

for item in "${what[@]}"; do
  case $item in
    parse)
      "$bin/plrank-bench-parse" --size_mb=150 --work_dir="$scratch" \
        --out="$results/parse.md"
      ;;
    mq2008)
      bash "$shared/make-folds.sh" "$scratch/mq2008" >/dev/null
      "$bin/plrank-bench-train" --folds_dir="$scratch/mq2008" \
        --title="MQ2008, 5-fold mean" --trees=100 --leaves=31 --repeats=3 \
        --learning_rate=0.1 --num_threads="$threads" --max_bin=255 \
        --work_dir="$scratch" --out="$results/mq2008.md"
      ;;
    generated)
      "$bin/plrank-bench-train" --generated --gen_queries=4000 \
        --gen_mean_docs=120 --gen_features=136 --trees=300 --leaves=31 \
        --learning_rate=0.1 --num_threads="$threads" --max_bin=255 \
        --work_dir="$scratch" --out="$results/generated.md"
      ;;
    quality)
      # Settings are plrank-bench-quality's defaults (see its --help).
      "$bin/plrank-bench-quality" --shared_data="$shared" \
        --num_threads="$threads" --work_dir="$scratch" \
        --out="$results/quality.md" ${quality_flags[@]+"${quality_flags[@]}"}
      ;;
    memory)
      "$root/bench/memory_bench.sh" "$bin" "$scratch/memory" \
        "$results/memory.md"
      ;;
    clicks)
      mkdir -p "$scratch/clicks"
      python3 "$root/bench/clicks_bench.py" --bin="$bin" --data="$shared" \
        --threads="$threads" --scratch="$scratch/clicks" \
        --out="$results/clicks.md" ${quality_flags[@]+"${quality_flags[@]}"}
      ;;
    *)
      echo "bench.sh: unknown benchmark '$item' (parse, mq2008, generated, quality, memory, clicks)" >&2
      exit 2
      ;;
  esac
done
echo "reports in $results"
