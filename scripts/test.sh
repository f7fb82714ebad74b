#!/usr/bin/env bash
# Command (2) of the README: install what is missing, build everything, run
# every test with ctest, then the reliability smoke (README "Reliability
# tooling"): every fuzz target for PLRANK_FUZZ_SMOKE_SECONDS (20) from its
# committed corpus (skipped with a message when clang-14 / libFuzzer are not
# installed), and the server's in-process tests under ThreadSanitizer.
# `.ci/run` calls exactly this. PLRANK_TEST_SMOKE=0 skips the smoke.
# PLRANK_TEST_IMAGE=1 also builds the container image for real and runs it
# (scripts/image.sh; needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PLRANK_TEST_BUILD_DIR:-build/test}
start=$SECONDS
./scripts/build.sh "$build"
(cd "$build" && ctest --output-on-failure -j2 --timeout 900)
echo "test.sh: build and ctest took $((SECONDS - start)) s"
if [[ ${PLRANK_TEST_SMOKE:-1} != 0 ]]; then
  start=$SECONDS
  PLRANK_FUZZ_SMOKE=1 ./scripts/fuzz.sh "${PLRANK_FUZZ_SMOKE_SECONDS:-20}"
  echo "test.sh: fuzz smoke (build and runs) took $((SECONDS - start)) s"
  start=$SECONDS
  ./scripts/sanitize.sh tsan-unit
  echo "test.sh: TSan in-process server tests (build and runs) took $((SECONDS - start)) s"
fi
if [[ ${PLRANK_TEST_IMAGE:-0} == 1 ]]; then
  start=$SECONDS
  ./scripts/image.sh
  echo "test.sh: container image (build and run) took $((SECONDS - start)) s"
fi
