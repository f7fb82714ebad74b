#!/usr/bin/env bash
# Peak memory and load time of plrank-train against training-file size
# (issue 11 item 7): for each size, a generated MSLR-shaped set (136
# features, plrank-datagen --regime=mslr) is trained with --trees trees, 31
# leaves, 2 threads, three ways: parsing the text, writing the binary dataset
# cache (first --dataset_cache run) and reading it (second run). Peak RSS is
# /usr/bin/time's maximum resident set size; load seconds are plrank-train's
# own load_seconds. Writes a markdown table to OUT.
#
#   bench/memory_bench.sh BIN_DIR WORK_DIR OUT [QUERIES...]
#
# QUERIES default to 2800 9200 20300 (training files of about 0.3, 1 and
# 2.2 GB). Data files already in WORK_DIR are reused.
set -euo pipefail
bin=$1
work=$2
out=$3
shift 3
queries=("$@")
[[ ${#queries[@]} -eq 0 ]] && queries=(2800 9200 20300)
trees=${TREES:-10}
mkdir -p "$work"

# run NAME ARGS...: prints "<peak RSS MB> <load seconds> <wall seconds>".
run() {
  local log=$work/$1.log
  shift
  /usr/bin/time -f 'maxrss_kb=%M wall=%e' "$bin/plrank-train" "$@" \
    --trees="$trees" --leaves=31 --num_threads=2 >"$log" 2>&1 || {
    echo "memory_bench.sh: plrank-train failed, see $log" >&2
    exit 1
  }
  local rss load wall
  rss=$(sed -n 's/.*maxrss_kb=\([0-9]*\).*/\1/p' "$log")
  wall=$(sed -n 's/.*wall=\([0-9.]*\).*/\1/p' "$log")
  load=$(sed -n 's/^load_seconds=//p' "$log")
  echo "$((rss / 1024)) $load $wall"
}

{
  echo "# plrank-train peak memory and load time vs training-file size"
  echo
  echo "- command: \`bench/memory_bench.sh BIN_DIR WORK_DIR OUT ${queries[*]}\` (TREES=$trees)"
  echo "- commit: $(git -C "$(dirname "$0")/.." rev-parse --short HEAD); date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- machine: $(nproc) CPUs, $(free -g | awk '/Mem:/{print $2}') GiB; load average $(cut -d' ' -f1 /proc/loadavg) at start"
  echo "- data: plrank-datagen --regime=mslr --seed=1 (136 features, ~118 documents per query); the .train file of each size"
  echo "- runs: --trees=$trees --leaves=31 --num_threads=2; peak RSS = maximum resident set size of the whole run (/usr/bin/time)"
  echo
  echo "| training file | documents | parse: peak RSS MB | parse: load s | write cache: peak RSS MB | write cache: load s | read cache: peak RSS MB | read cache: load s | cache file MB |"
  echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} >"$out"

for q in "${queries[@]}"; do
  prefix=$work/g$q
  if [[ ! -s $prefix.train ]]; then
    "$bin/plrank-datagen" --regime=mslr --queries="$q" --seed=1 \
      --out_prefix="$prefix" >/dev/null
  fi
  size_mb=$(( $(stat -c %s "$prefix.train") / 1048576 ))
  docs=$(wc -l <"$prefix.train")
  rm -f "$prefix.train.plrank.bin"
  read -r p_rss p_load _ < <(run "parse$q" --train="$prefix.train" \
    --model_out="$work/m$q.pb")
  read -r w_rss w_load _ < <(run "write$q" --train="$prefix.train" \
    --dataset_cache --model_out="$work/m$q.pb")
  read -r r_rss r_load _ < <(run "read$q" --train="$prefix.train" \
    --dataset_cache --model_out="$work/m$q.pb")
  grep -q "dataset cache: read" "$work/read$q.log" || {
    echo "memory_bench.sh: the second run did not read the cache" >&2
    exit 1
  }
  cache_mb=$(( $(stat -c %s "$prefix.train.plrank.bin") / 1048576 ))
  echo "| $size_mb MB | $docs | $p_rss | $p_load | $w_rss | $w_load | $r_rss | $r_load | $cache_mb |" >>"$out"
  rm -f "$prefix.train.plrank.bin"
done
cat "$out"
