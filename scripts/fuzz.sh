#!/usr/bin/env bash
# libFuzzer targets (fuzz/): builds them with clang-14 (ASan + UBSan +
# libFuzzer, a separate build directory) and runs each for SECONDS seconds
# from its committed seed corpus fuzz/corpus/<target>/.
#
#   scripts/fuzz.sh SECONDS [TARGET...]    # TARGET: letor_reader model_parser
#                                          # xgboost_import lightgbm_import
#                                          # server_config rank_request
#                                          # evaluate_request
#
# Inputs the fuzzer finds interesting go to a scratch corpus under the build
# directory (never into the committed seeds). A crash, sanitizer report,
# leak, timeout (> 10 s per input) or out-of-memory (> 2 GB) stops that
# target, leaves the reproducer in build/fuzz/findings/<target>/ and makes
# the script exit 1 after the other targets ran. Reproduce one with
#   build/fuzz/bin/fuzz_<target> build/fuzz/findings/<target>/crash-...
# then add it as fuzz/corpus/<target>/regression-<what> once fixed.
#
# Environment: PLRANK_FUZZ_BUILD_DIR (default build/fuzz), PLRANK_FUZZ_JOBS
# (build jobs, 2), PLRANK_FUZZ_PARALLEL (targets run at a time, the number
# of cores), PLRANK_TIMING_FILE (appends "phase|seconds" lines for the
# breakdown scripts/test.sh prints), PLRANK_FUZZ_SMOKE=1 (skip with a message, exit 0, when
# clang-14 or its fuzzer runtime is missing: the CI smoke in scripts/test.sh),
# PLRANK_FUZZ_BUILD_ONLY=1 (build the targets, run nothing).
# Packages: clang-14, libclang-rt-14-dev, libfuzzer-14-dev, libomp-14-dev
# (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
all_targets=(letor_reader model_parser xgboost_import lightgbm_import
  server_config rank_request evaluate_request)
if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh SECONDS [TARGET...] (targets: ${all_targets[*]})" >&2
  exit 2
fi
seconds=$1
shift
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || { echo "fuzz.sh: unknown target '$t'" >&2; exit 2; }
done

fuzzer_runtime=$(ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a 2>/dev/null | head -n 1 || true)
if ! command -v clang++-14 >/dev/null || [[ -z $fuzzer_runtime ]]; then
  if [[ ${PLRANK_FUZZ_SMOKE:-0} == 1 ]]; then
    echo "fuzz.sh: clang-14 / libFuzzer runtime not installed; fuzz smoke skipped"
    exit 0
  fi
  echo "fuzz.sh: needs clang-14 and libclang-rt-14-dev (scripts/setup.sh installs them)" >&2
  exit 1
fi

build=${PLRANK_FUZZ_BUILD_DIR:-build/fuzz}
build_start=$SECONDS
source scripts/cmake_env.sh
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPLRANK_FUZZ=ON -DPLRANK_BUILD_TESTS=OFF -DPLRANK_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"${PLRANK_FUZZ_JOBS:-2}" --target "${targets[@]/#/fuzz_}"
build_seconds=$((SECONDS - build_start))
if [[ ${PLRANK_FUZZ_BUILD_ONLY:-0} == 1 ]]; then
  # scripts/test.sh builds the targets beside ctest, then runs them.
  echo "fuzz.sh: built ${targets[*]/#/fuzz_} in ${build_seconds} s (PLRANK_FUZZ_BUILD_ONLY=1: not run)"
  [[ -n ${PLRANK_TIMING_FILE:-} ]] &&
    echo "fuzz build (clang-14, ASan+UBSan, fuzz targets only; beside ctest)|${build_seconds}" >>"$PLRANK_TIMING_FILE"
  exit 0
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One libFuzzer process per target, PLRANK_FUZZ_PARALLEL (default: the
# number of cores) at a time: each is single-threaded, so on 2 cores two
# targets run for SECONDS side by side instead of one after the other.
parallel=${PLRANK_FUZZ_PARALLEL:-$(nproc)}
[[ $parallel -ge 1 ]] || parallel=1
run_target() {  # run_target TARGET: exit status of the fuzzer in $build/findings/TARGET.status
  local t=$1 work=$build/corpus/$1 findings=$build/findings/$1
  mkdir -p "$work" "$findings"
  local log=$build/findings/$t.log status=0
  # Seeds are read, new inputs are written to $work only (the first
  # directory); -max_total_time bounds the run.
  "$build/bin/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$findings/" \
    "$work" "fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  echo "$status" >"$build/findings/$t.status"
}
runs_start=$SECONDS
running=0
for t in "${targets[@]}"; do
  mkdir -p "$build/findings"
  echo "== fuzz_$t for ${seconds}s (log $build/findings/$t.log)"
  run_target "$t" &
  running=$((running + 1))
  if [[ $running -ge $parallel ]]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true
failed=()
summary=()
for t in "${targets[@]}"; do
  log=$build/findings/$t.log
  findings=$build/findings/$t
  status=$(cat "$build/findings/$t.status" 2>/dev/null || echo 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  if [[ $status -ne 0 ]]; then
    failed+=("$t")
    summary+=("fuzz_$t: FAILED after ${runs:-?} runs, see $log and $findings/")
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*invariant failed|.*runtime error)' "$log" | head -n 5 >&2 || true
  else
    summary+=("fuzz_$t: ${runs:-?} runs in ${seconds}s, coverage ${cov:-?}, 0 crashes")
  fi
done
printf '%s\n' "${summary[@]}"
echo "fuzz.sh: build ${build_seconds} s, runs $((SECONDS - runs_start)) s (${#targets[@]} targets, ${parallel} at a time)"
if [[ -n ${PLRANK_TIMING_FILE:-} ]]; then
  echo "fuzz build (clang-14, ASan+UBSan, fuzz targets only)|${build_seconds}" >>"$PLRANK_TIMING_FILE"
  echo "fuzz runs (${#targets[@]} targets x ${seconds} s, ${parallel} at a time)|$((SECONDS - runs_start))" >>"$PLRANK_TIMING_FILE"
fi
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
