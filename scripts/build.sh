#!/usr/bin/env bash
# Installs what is missing and builds PLRank in Release:
#   scripts/build.sh [BUILD_DIR] [extra cmake -D options...] [-- targets...]
# The test command (scripts/test.sh) and the container's build stage
# (deploy/docker/Dockerfile) both build through this script, so CI exercises
# the image's build steps.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
source scripts/cmake_env.sh
build=${1:-build/release}
shift || true
cmake_args=()
targets=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; targets=("$@"); break; fi
  cmake_args+=("$1"); shift
done
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "${cmake_args[@]}" >/dev/null
if [ ${#targets[@]} -gt 0 ]; then
  cmake --build "$build" -j"${PLRANK_BUILD_JOBS:-2}" --target "${targets[@]}"
else
  cmake --build "$build" -j"${PLRANK_BUILD_JOBS:-2}"
fi
