#!/usr/bin/env bash
# Sanitizer runs (docs/reliability.md):
#
#   scripts/sanitize.sh [asan] [tsan] [tsan-unit]   # default: asan tsan
#
# asan: builds everything with -DPLRANK_SANITIZE=address,undefined into
#       build/asan and runs the whole ctest suite (unit, end-to-end,
#       integration, Python client, deploy checks) under ASan + UBSan +
#       LeakSanitizer; the CLIs and servers the tests start are instrumented
#       too.
# tsan: builds the server's tests (ctest label `server`: tests/unit/server,
#       tests/unit/serving_lifecycle and tests/integration) with -DPLRANK_SANITIZE=thread into build/tsan
#       and runs them under TSan; plrank-server, plrank-client and
#       plrank-loadgen started by the tests are instrumented too.
# tsan-unit: the in-process part of tsan only (tests/unit/server and
#       tests/unit/serving_lifecycle: version manager, scan scheduler,
#       concurrent requests and swaps, ranking, evaluation), a
#       small build; scripts/test.sh (CI) runs it.
#
# Every sanitizer report of every process (tests and the programs they
# start, whose stderr tests often capture) goes to a file under
# <build>/sanitizer-logs/; the run fails when ctest fails or any report was
# written, and prints the reports.
#
# Not instrumented: the Debian libraries (gRPC, protobuf, absl, libgomp).
# Suppressions, for third-party frames only: scripts/lsan.supp (leaks),
# scripts/tsan.supp (races). TSan runs with OMP_THREAD_LIMIT=1 because
# libgomp's synchronization is invisible to TSan; the server's concurrency
# is its own threads and gRPC's. TSan builds compile with
# -U__SANITIZE_THREAD__ so that those libraries' headers keep the class
# layouts of the uninstrumented builds (see CMakeLists.txt).
#
# Environment: PLRANK_TIMING_FILE (tsan runs append "phase|seconds" lines
# for the breakdown scripts/test.sh prints), PLRANK_SANITIZE_CTEST_ARGS (extra ctest arguments for the
# asan run, e.g. "-L server" for a subset), PLRANK_BUILD_JOBS (2),
# PLRANK_SANITIZE_BUILD_ONLY=1 (tsan runs: build, run nothing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
what=("$@")
[[ ${#what[@]} -eq 0 ]] && what=(asan tsan)
jobs=${PLRANK_BUILD_JOBS:-2}
./scripts/setup.sh
source scripts/cmake_env.sh

# Tests that cannot pass in an instrumented build, by construction:
#  deploy_dockerfile checks that every shared library of the binaries is in
#  the runtime image's package list; libasan/libubsan are not, on purpose.
#  Two tests cap a process's address space (ulimit -v / RLIMIT_AS) to prove
#  that huge declared sizes fail with a message instead of std::bad_alloc;
#  ASan reserves terabytes of shadow address space at start-up, so an
#  instrumented process cannot even start under such a cap. One test checks
#  that resident memory falls back after large requests; ASan holds freed
#  memory in its quarantine on purpose. All three run in every ordinary
#  ctest run (scripts/test.sh, CI).
asan_excluded='^(deploy_dockerfile|CliTest\.ModelsDeclaringHugeFeatureCountsGiveOneClearError|ServerUntrustedModelsTest\.HugeDeclaredSizesFailOrLoadWithoutCrashing|ServerReliabilityTest\.MemoryStatusAndMetricsStayBounded|VersionManagerReliabilityTest\.LoadBudgetRefusesAVersionThatDoesNotFit)$'

# The same kind for TSan: its allocator aborts on a huge allocation
# ("allocator is out of memory") instead of throwing std::bad_alloc, which is
# what the untrusted-models test proves the server survives; and it keeps
# freed memory and shadow pages resident, so resident memory does not fall
# back after large requests. Both run in every ordinary ctest run.
# Under both sanitizers, a loaded version's memory_bytes (glibc's mallinfo2
# before and after the load) reads 0: their allocators replace glibc's
# malloc, whose counters then never move, so the load budget test cannot see
# a version's size. It runs in every ordinary ctest run.
tsan_excluded='^(ServerUntrustedModelsTest\.HugeDeclaredSizesFailOrLoadWithoutCrashing|ServerReliabilityTest\.MemoryStatusAndMetricsStayBounded|VersionManagerReliabilityTest\.LoadBudgetRefusesAVersionThatDoesNotFit)$'

check_reports() {  # check_reports LOG_DIR NAME
  local reports
  reports=$(find "$1" -type f -size +0 2>/dev/null | sort)
  if [[ -n $reports ]]; then
    echo "sanitize.sh: $2 reports in $1:" >&2
    for f in $reports; do
      echo "---- $f" >&2
      head -n 60 "$f" >&2
    done
    return 1
  fi
  echo "sanitize.sh: $2: no sanitizer report"
}

run_asan() {
  local build=build/asan logs=$root/build/asan/sanitizer-logs
  export ASAN_OPTIONS="log_path=$logs/asan:detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1"
  export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1"
  mkdir -p "$logs"
  rm -f "$logs"/*
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPLRANK_SANITIZE=address,undefined >/dev/null || return 1
  # (errexit is off inside a function called from `||`: check by hand)
  cmake --build "$build" -j"$jobs" || return 1
  local status=0 mpi='^distributed_'
  # shellcheck disable=SC2086
  (cd "$build" && ctest --output-on-failure -j2 --timeout 1800 \
    -E "$asan_excluded|$mpi" ${PLRANK_SANITIZE_CTEST_ARGS:-}) || status=$?
  # The distributed tests' mpirun ranks: Open MPI leaves its own allocations
  # to the process exit. Its plugins stay loaded and malloc stacks are
  # unwound in full (slower, so only here), so scripts/lsan.supp can name
  # Open MPI's frames; leaks with a frame of ours are still reported.
  # shellcheck disable=SC2086
  (cd "$build" &&
    ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=0" \
    OMPI_MCA_mca_base_component_disable_dlclose=1 \
    PMIX_MCA_mca_base_component_disable_dlclose=1 \
    ctest --output-on-failure -j2 --timeout 1800 -R "$mpi" \
    ${PLRANK_SANITIZE_CTEST_ARGS:-}) || status=$?
  check_reports "$logs" "ASan/UBSan/LSan" || status=1
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  return $status
}

run_tsan() {  # run_tsan [unit]
  local build=build/tsan logs=$root/build/tsan/sanitizer-logs
  export TSAN_OPTIONS="log_path=$logs/tsan:suppressions=$root/scripts/tsan.supp:second_deadlock_stack=1:halt_on_error=0"
  # libgomp is not instrumented: one OpenMP thread, whatever a program asks
  # (plrank-train uses every core by default).
  export OMP_NUM_THREADS=1 OMP_THREAD_LIMIT=1
  mkdir -p "$logs"
  rm -f "$logs"/*
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPLRANK_SANITIZE=thread -DPLRANK_BUILD_BENCH=OFF >/dev/null || return 1
  # Only the server-labelled tests (and what they start) are built: the
  # executables of tests/unit/server, tests/unit/serving_lifecycle and
  # tests/integration (tests/CMakeLists.txt: one per folder).
  local targets=(unit_server_tests unit_serving_lifecycle_tests) labels=(-L server)
  if [[ ${1:-} == unit ]]; then
    labels+=(-LE integration)
  else
    targets+=(integration_tests)
  fi
  local build_start=$SECONDS
  cmake --build "$build" -j"$jobs" --target "${targets[@]}" || return 1
  local build_seconds=$((SECONDS - build_start)) runs_start=$SECONDS
  if [[ ${PLRANK_SANITIZE_BUILD_ONLY:-0} == 1 ]]; then
    # scripts/test.sh builds beside ctest, then runs.
    echo "sanitize.sh: built ${targets[*]} in ${build_seconds} s (PLRANK_SANITIZE_BUILD_ONLY=1: not run)"
    [[ -n ${PLRANK_TIMING_FILE:-} ]] &&
      echo "TSan build (${targets[*]}; beside ctest)|${build_seconds}" >>"$PLRANK_TIMING_FILE"
    return 0
  fi
  local status=0
  (cd "$build" && ctest --output-on-failure -j2 --timeout 1800 "${labels[@]}" \
    -E "$tsan_excluded") || status=$?
  if [[ -n ${PLRANK_TIMING_FILE:-} ]]; then
    echo "TSan build (${targets[*]})|${build_seconds}" >>"$PLRANK_TIMING_FILE"
    echo "TSan ctest (${labels[*]})|$((SECONDS - runs_start))" >>"$PLRANK_TIMING_FILE"
  fi
  check_reports "$logs" "TSan" || status=1
  unset TSAN_OPTIONS OMP_NUM_THREADS OMP_THREAD_LIMIT
  return $status
}

failed=()
for item in "${what[@]}"; do
  case $item in
    asan) run_asan || failed+=(asan) ;;
    tsan) run_tsan || failed+=(tsan) ;;
    tsan-unit) run_tsan unit || failed+=(tsan-unit) ;;
    *) echo "sanitize.sh: unknown run '$item' (asan, tsan, tsan-unit)" >&2; exit 2 ;;
  esac
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "sanitize.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "sanitize.sh: ${what[*]}: all passed"
