#!/usr/bin/env bash
# Command (2) of the README: install what is missing, build everything, run
# every test with ctest, then the reliability smoke (README "Reliability
# tooling"): every fuzz target for PLRANK_FUZZ_SMOKE_SECONDS (20) from its
# committed corpus (skipped with a message when clang-14 / libFuzzer are not
# installed), and the server's in-process tests under ThreadSanitizer.
# `.ci/run` calls exactly this. PLRANK_TEST_SMOKE=0 skips the smoke.
#
# At the end it prints where the time went: each phase's seconds and the
# slowest ctest tests (from ctest's own per-test timings), also when a phase
# failed. New build trees use Ninja and ccache when installed
# (scripts/cmake_env.sh; CCACHE_DISABLE=1 turns ccache off); the build needs
# neither.
# The smoke's fuzz and TSan builds start beside ctest too (low priority).
# The container image check (scripts/image.sh: a Debian base from the apt
# mirror, buildah bud of deploy/docker/Dockerfile with the binaries this
# build has just compiled, the image's entrypoint run from its root
# filesystem) runs beside ctest: it waits mostly on the mirror and disk, the
# tests mostly on the CPU. It needs root; as another user it is skipped with
# a message (CI=true makes that a failure). PLRANK_TEST_IMAGE=0 skips it.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PLRANK_TEST_BUILD_DIR:-build/test}
timing=$(mktemp)
export PLRANK_TIMING_FILE=$timing
# ctest -j2 runs two multi-threaded tests at once on 2 cores, beside the
# smoke's builds: libgomp's default spin-waiting then burns the core a
# descheduled partner thread needs (MQ2008, 1,000 trees on 2 threads under
# load: 41 s spinning, 5 s passive; bench/results/training-profile.md). The
# caller's setting wins; no result depends on it.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
total_start=$SECONDS

phase() {  # phase NAME COMMAND...: runs COMMAND, records its wall and CPU seconds
  local name=$1 start=$SECONDS status=0 times user sys
  shift
  times=$(mktemp)
  # bash's `time` reports the command's and its children's CPU seconds to
  # the group's stderr (the file); the command's own stderr stays stderr.
  { TIMEFORMAT='%U %S'; time "$@" 2>&4 || status=$?; } 4>&2 2>"$times"
  read -r user sys <"$times" || true
  rm -f "$times"
  echo "$name|$((SECONDS - start))|$(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN {printf "%d", u + s + 0.5}')" >>"$timing"
  return $status
}

report() {
  local status=$?
  # A failed phase ends the run early: let the image check finish (it
  # unmounts what it mounted) and record its time.
  local pid
  for pid in ${image_pid:-} ${smoke_builds_pid:-}; do
    wait "$pid" 2>/dev/null || true
  done
  echo
  echo "test.sh: where the time went (wall seconds; CPU seconds of the phase's processes where measured)"
  local name seconds cpu
  while IFS='|' read -r name seconds cpu; do
    printf '  %6s s  %7s  %s\n' "$seconds" "${cpu:+$cpu cpu}" "$name"
  done <"$timing"
  printf '  %6s s  total\n' "$((SECONDS - total_start))"
  if [[ -f $build/ctest-output.txt ]]; then
    echo "test.sh: slowest ctest tests (s)"
    # "N/M Test #k: NAME ....   Passed   12.34 sec" lines of ctest's log.
    sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2 \1/p' \
      "$build/ctest-output.txt" | sort -rn |
      awk 'NR <= 12 {printf "  %8.1f  %s\n", $1, $2}'
    # (awk reads to the end: `head` would close the pipe early, sort would die
    # of SIGPIPE and, under pipefail, turn the run's status into 141.)
  fi
  rm -f "$timing"
  exit $status
}
trap report EXIT

image_check=0
if [[ ${PLRANK_TEST_IMAGE:-1} != 0 && $(id -u) -eq 0 ]]; then
  image_check=1
fi
# The image check's packages too, now: it runs beside ctest, and two apt
# runs at once would fight over dpkg's lock.
phase "setup (packages)" env PLRANK_SETUP_IMAGE=$image_check ./scripts/setup.sh
source scripts/cmake_env.sh
phase "configure" cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
phase "build (Release, everything the tests run)" \
  cmake --build "$build" -j"${PLRANK_BUILD_JOBS:-2}"
image_pid=""
image_log=$build/image-check.log
if [[ ${PLRANK_TEST_IMAGE:-1} != 0 ]]; then
  if [[ $image_check == 1 ]]; then
    phase "container image (build and run; beside ctest)" \
      env PLRANK_IMAGE_BINARIES="$build/bin" ./scripts/image.sh >"$image_log" 2>&1 &
    image_pid=$!
  elif [[ ${CI:-} == true ]]; then
    echo "test.sh: the container image check needs root (CI=true: failing)" >&2
    exit 1
  else
    echo "test.sh: container image check skipped: it needs root (PLRANK_TEST_IMAGE=0 silences this)"
  fi
fi
background_wait() {  # background_wait PID LOG WHAT: PID's status, LOG's tail on failure
  local status=0
  wait "$1" || status=$?
  if [[ $status -ne 0 ]]; then
    echo "test.sh: $3 FAILED (log $2):" >&2
    tail -n 40 "$2" >&2
  fi
  return $status
}
# The smoke's two instrumented builds (fuzz targets, TSan tests) also run
# beside ctest, at low priority: the tests leave a core idle much of the
# time (servers starting, subprocesses, waits). The smoke runs themselves
# come after ctest, when their builds are up to date.
smoke_builds_pid=""
smoke_builds_log=$build/smoke-builds.log
if [[ ${PLRANK_TEST_SMOKE:-1} != 0 ]]; then
  phase "smoke builds (fuzz targets, then TSan tests; nice 10, beside ctest)" \
    nice -n 10 bash -c 'PLRANK_FUZZ_SMOKE=1 PLRANK_FUZZ_BUILD_ONLY=1 ./scripts/fuzz.sh 1 &&
      PLRANK_SANITIZE_BUILD_ONLY=1 ./scripts/sanitize.sh tsan-unit' >"$smoke_builds_log" 2>&1 &
  smoke_builds_pid=$!
fi
ctest_run() {
  (cd "$build" && ctest --output-on-failure -j2 --timeout 900) |
    tee "$build/ctest-output.txt"
  return "${PIPESTATUS[0]}"
}
phase "ctest ($(cd "$build" && ctest -N | sed -n 's/^Total Tests: //p') tests, -j2)" ctest_run
if [[ -n $smoke_builds_pid ]]; then
  background_wait "$smoke_builds_pid" "$smoke_builds_log" "the smoke's builds"
  smoke_builds_pid=""
fi
if [[ ${PLRANK_TEST_SMOKE:-1} != 0 ]]; then
  # fuzz.sh and sanitize.sh record their build and run phases themselves.
  PLRANK_FUZZ_SMOKE=1 ./scripts/fuzz.sh "${PLRANK_FUZZ_SMOKE_SECONDS:-20}"
  ./scripts/sanitize.sh tsan-unit
fi
if [[ -n $image_pid ]]; then
  background_wait "$image_pid" "$image_log" "the container image check"
  image_pid=""
  grep '^image.sh: ' "$image_log" || true
fi
