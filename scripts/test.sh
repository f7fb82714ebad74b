#!/usr/bin/env bash
# Command (2) of the README: install what is missing, build everything, run
# every test with ctest. `.ci/run` calls exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build=${PLRANK_TEST_BUILD_DIR:-build/test}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2
cd "$build"
ctest --output-on-failure -j2 --timeout 900
