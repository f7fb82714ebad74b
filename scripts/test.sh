#!/usr/bin/env bash
# Command (2) of the README: install what is missing, build everything, run
# every test with ctest. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${PLRANK_TEST_BUILD_DIR:-build/test}
./scripts/build.sh "$build"
cd "$build"
ctest --output-on-failure -j2 --timeout 900
