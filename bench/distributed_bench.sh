#!/usr/bin/env bash
# Distributed training benchmark (bench/results/distributed.md):
#   bench/distributed_bench.sh WORK_DIR [BUILD_DIR] [QUERIES...]
# For each QUERIES (default: 4000, ~480K documents, and 17000, ~2M), generates
# an MSLR-shaped training set with plrank-datagen (136 features, every query
# in the training file; reused when present in WORK_DIR), then trains PLRank
# single-process and with mpirun -np 2 and 4 (each rank reading only its
# byte range of the file), each twice: reading the text (input "text", no
# cache) and reading the binary dataset cache written by a first run
# (input "cache"; rank r of N caches its own byte range),
# one thread per rank (PLRANK_BENCH_TREES trees, default 20, 31 leaves), and
# prints one markdown row per run: wall time of the whole job, rank 0's
# train_seconds and per iteration, rank 0's seconds inside reductions
# (waiting included), the user CPU seconds and peak RSS of every rank (GNU
# time; CPU seconds show the division of work even on a busy machine), and
# the bytes each rank sends per iteration (distributed_bytes_sent_per_
# iteration; MPI_Allgather of each reduced vector) and the 1-minute load
# average when the run started. A "cache" row where rank 0 did not read its
# cache fails the script (the cache directory is created here:
# plrank-train does not create it, and without it every "cache" run parsed
# the text). Speed is measured here, never asserted in tests.
set -euo pipefail
work=${1:?usage: $0 WORK_DIR [BUILD_DIR] [QUERIES...]}
build=${2:-$(cd "$(dirname "$0")/.." && pwd)/build/release}
shift 2 || shift $#
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(4000 17000)
trees=${PLRANK_BENCH_TREES:-20}
bin=$build/bin
mkdir -p "$work" "$work/cache"
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" -eq 0 ] && mpirun+=(--allow-run-as-root)
export OMP_NUM_THREADS=1 OMPI_MCA_btl_vader_single_copy_mechanism=none

echo "| set | train documents | input | ranks | wall s | load s | train s | s / iteration | rank 0 s in reductions | user CPU s per rank | peak RSS per rank MB | bytes sent per rank per iteration | load average |"
echo "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |"
for queries in "${sets[@]}"; do
  # All queries train (--out, not a 60/20/20 split).
  data=$work/gen$queries
  if [ ! -s "$data.train" ]; then
    "$bin/plrank-datagen" --queries="$queries" --out="$data.train" >&2
  fi
  documents=$(wc -l <"$data.train")
  flags=(--train="$data.train" --model_out="$work/model.pb" --trees="$trees"
         --leaves=31 --num_threads=1 --log_period=0 --seed=1)
  for ranks in ${PLRANK_BENCH_RANKS:-1 2 4}; do
  for input in text cache; do
    if [ "$input" = cache ]; then
      # Written (per rank's byte range) by a first run, read by the measured one.
      cache_flags=(--dataset_cache --dataset_cache_dir="$work/cache")
      if [ "$ranks" -eq 1 ]; then
        "$bin/plrank-train" "${flags[@]}" "${cache_flags[@]}" --trees=1 >/dev/null
      else
        "${mpirun[@]}" -np "$ranks" "$bin/plrank-train" "${flags[@]}" "${cache_flags[@]}" --trees=1 >/dev/null
      fi
    else
      cache_flags=()
    fi
    log=$work/run-$queries-$ranks-$input.log
    loadavg=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s.%N)
    # GNU time writes each rank's figures to its own file (lines written to
    # the shared log interleave), $log.time.RANK (Open MPI sets
    # OMPI_COMM_WORLD_RANK in each rank).
    rm -f "$log".time.*
    timed=(sh -c 'exec /usr/bin/time -o "$0.time.${OMPI_COMM_WORLD_RANK:-0}" \
             -f "rank_peak_rss_kb=%M rank_user_seconds=%U" "$@"' "$log"
           "$bin/plrank-train" "${flags[@]}" "${cache_flags[@]}")
    if [ "$ranks" -eq 1 ]; then
      "${timed[@]}" >"$log" 2>&1
    else
      "${mpirun[@]}" -np "$ranks" "${timed[@]}" >"$log" 2>&1
    fi
    end=$(date +%s.%N)
    # Only rank 0 logs; the other ranks' caches were written by the same run.
    if [ "$input" = cache ] && ! grep -q '^dataset cache: read ' "$log"; then
      echo "distributed_bench.sh: rank 0 did not read its cache, see $log" >&2
      exit 1
    fi
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    train=$(awk -F= '/^train_seconds=/ { print $2 }' "$log")
    per=$(awk -v t="$train" -v n="$trees" 'BEGIN { printf "%.3f", t / n }')
    # In rank order.
    times=()
    for ((r = 0; r < ranks; ++r)); do times+=("$log.time.$r"); done
    rss=$(cat "${times[@]}" | grep -o 'peak_rss_kb=[0-9]*' |
          awk -F= '{ printf "%s%d", sep, $2 / 1024; sep = ", " }')
    cpu=$(cat "${times[@]}" | grep -o 'user_seconds=[0-9.]*' |
          awk -F= '{ printf "%s%.0f", sep, $2; sep = ", " }')
    bytes=$(awk -F= '/^distributed_bytes_sent_per_iteration=/ { print $2 }' "$log")
    reduce=$(awk -F= '/^distributed_reduce_seconds=/ { print $2 }' "$log")
    load=$(awk -F= '/^load_seconds=/ { print $2 }' "$log")
    echo "| gen $queries queries | $documents | $input | $ranks | $wall | $load | $train | $per | ${reduce:--} | $cpu | $rss | ${bytes:-0} | $loadavg |"
  done
  done
done
