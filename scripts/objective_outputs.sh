#!/usr/bin/env bash
# Behaviour fingerprint of every objective and linear trainer, for refactors
# that must keep models and scores bit-identical:
#   scripts/objective_outputs.sh run DIR [BUILD_DIR]   # default build/test
#   scripts/objective_outputs.sh compare DIR1 DIR2     # exit 1 on a difference
# `run` trains a small model with each --objective (and a few variants:
# bagging, so out-of-bag queries are exercised; sampled PL tie-breaks; the
# paper's settings; one thread vs two) on MQ2008 folds from ../shared/data
# with fixed seeds and thread counts, then writes per run the model dump, the
# test-fold scores and the training history (losses and NDCG per iteration).
# `compare` diffs every file, ignoring only lines that name the run (creation
# time, output paths).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

usage() {
  echo "usage: $0 run DIR [BUILD_DIR] | compare DIR1 DIR2" >&2
  exit 2
}

# Lines that differ from run to run whatever the code: creation time, paths,
# timings.
normalize() {
  grep -v -E 'created|wrote |elapsed|seconds|"path"|model_out|history_out' "$1" || true
}

run() {
  local out=$1 build=${2:-$root/build/test}
  local data=$root/../shared/data/MQ2008
  [ -f "$data/S1.txt" ] || { echo "no MQ2008 data in $data" >&2; exit 1; }
  local train=$build/bin/plrank-train eval=$build/bin/plrank-eval
  [ -x "$train" ] && [ -x "$eval" ] || { echo "build plrank-train and plrank-eval in $build first" >&2; exit 1; }
  mkdir -p "$out"
  # shellcheck disable=SC2054  # --eval_at's value is a comma list
  local common=(--train="$data/S1.txt" --valid="$data/S2.txt" --trees=12
                --leaves=7 --min_data_in_leaf=10 --seed=7 --eval_at=1,5,10
                --log_period=1)
  # name|threads|extra flags
  local runs=(
    "plrank|2|--objective=plrank"
    "plrank_bag|2|--objective=plrank --bagging_fraction=0.6 --bagging_freq=1"
    "plrank_t1|1|--objective=plrank"
    "plrank_perm|2|--objective=plrank --pl_ties=permutation --pl_permutations=3 --pl_topk=5"
    "plrank_perm_bag|2|--objective=plrank --pl_ties=permutation --pl_permutations=2 --bagging_fraction=0.6 --bagging_freq=1"
    "plrank_paper|2|--objective=plrank --pl_paper"
    "plrank_breslow|2|--objective=plrank --pl_ties=breslow --pl_weighting=gain_position"
    "plrank_diag|2|--objective=plrank --pl_diagonal_leaf_step --pl_normalize_queries"
    "lambdamart|2|--objective=lambdamart"
    "lambdamart_bag|2|--objective=lambdamart --bagging_fraction=0.6 --bagging_freq=1"
    "lambdamart_all|1|--objective=lambdamart --lambdamart_truncation=0 --lambdamart_sigma=2"
    "mcrank|2|--objective=mcrank"
    "mcrank_bag|2|--objective=mcrank --bagging_fraction=0.6 --bagging_freq=1"
    "mart1|2|--objective=mart1"
    "mart2_bag|2|--objective=mart2 --bagging_fraction=0.6 --bagging_freq=1"
    "cmart1|2|--objective=cmart1"
    "cosmart|2|--objective=cosmart"
    "ccosmart_bag|2|--objective=ccosmart --bagging_fraction=0.6 --bagging_freq=1"
    "klmart|2|--objective=klmart"
    "cklmart_bag|2|--objective=cklmart --bagging_fraction=0.6 --bagging_freq=1"
    "xendcg|2|--objective=xendcg"
    "xendcg_bag|2|--objective=xendcg --bagging_fraction=0.6 --bagging_freq=1"
    "ca|2|--objective=ca --ca_restarts=2 --ca_max_rounds=3"
    "listmle|2|--objective=listmle --listmle_max_iterations=30"
  )
  local spec name threads flags
  for spec in "${runs[@]}"; do
    IFS='|' read -r name threads flags <<<"$spec"
    # shellcheck disable=SC2086
    "$train" "${common[@]}" --num_threads="$threads" $flags \
      --model_out="$out/$name.pb" --history_out="$out/$name.history.json" \
      >"$out/$name.train.log" 2>&1
    "$eval" --model="$out/$name.pb" --dump >"$out/$name.dump.txt" 2>&1
    "$eval" --model="$out/$name.pb" --data="$data/S3.txt" \
      --scores_out="$out/$name.scores.txt" >"$out/$name.eval.txt" 2>&1
    echo "$name: ok"
  done
}

compare() {
  local a=$1 b=$2 differing=0 total=0 file
  for file in "$a"/*; do
    local base=${file##*/}
    case $base in *.pb) continue ;; esac  # the dumps cover the artifacts
    total=$((total + 1))
    if [ ! -f "$b/$base" ]; then
      echo "missing in $b: $base"; differing=$((differing + 1)); continue
    fi
    if ! diff -q <(normalize "$file") <(normalize "$b/$base") >/dev/null; then
      echo "differs: $base"
      # diff exits 1 here (and may die of SIGPIPE): not the script's end.
      diff <(normalize "$file") <(normalize "$b/$base") | head -5 || true
      differing=$((differing + 1))
    fi
  done
  for file in "$b"/*; do
    [ -e "$a/${file##*/}" ] || { echo "missing in $a: ${file##*/}"; differing=$((differing + 1)); }
  done
  echo "$differing differing files of $total compared"
  [ "$differing" -eq 0 ]
}

case ${1:-} in
  run) [ $# -ge 2 ] || usage; run "$2" "${3:-}" ;;
  compare) [ $# -eq 3 ] || usage; compare "$2" "$3" ;;
  *) usage ;;
esac
