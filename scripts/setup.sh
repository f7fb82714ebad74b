#!/usr/bin/env bash
# Installs the Debian 12 packages the build needs, only those missing.
# Idempotent and non-interactive; a no-op when everything is present.
set -euo pipefail

# PLRANK_SETUP_PROFILE=build installs only what compiling needs (the
# container's build stage); the default, full, adds the test, benchmark and
# deploy-check tools.
packages=(
  build-essential cmake pkg-config curl
  ninja-build   # scripts/cmake_env.sh: new build trees use Ninja
  libabsl-dev libprotobuf-dev protobuf-compiler
  libgrpc++-dev protobuf-compiler-grpc prometheus-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev libboost-dev openssl
  liblbfgs-dev
  libssl-dev   # plrank-server checks its TLS files with OpenSSL
  # plrank-train's distributed training over Open MPI (README "Distributed
  # training"), also in the image; without it plrank-train is single-process.
  libopenmpi-dev
)
if [ "${PLRANK_SETUP_PROFILE:-full}" != build ]; then
  packages+=(
    libxgboost-dev   # benchmark peer only
    # Deploy checks and the Python client (README "Deploy"): promtool and a
    # real Prometheus, Debian's python3 with gRPC/protobuf/pytest/yaml.
    prometheus python3 python3-grpcio python3-protobuf python3-pytest python3-yaml
    # plrank-plot (README "Learning curves and pictures"): PNGs via
    # matplotlib's Agg backend, no display.
    python3-matplotlib python3-numpy
    # The `plrank` Python package (README "Python package"): pybind11
    # extension, offline pip install into a venv with Debian's setuptools.
    pybind11-dev python3-dev python3-venv python3-pip python3-setuptools
    python3-wheel
    # plrank.PLRanker (docs/python-sklearn.md): scikit-learn's estimator API
    # and pandas DataFrames, for the package's tests.
    python3-sklearn python3-pandas
    # Fuzzing (scripts/fuzz.sh and the fuzz smoke of scripts/test.sh): clang
    # with its sanitizer and libFuzzer runtimes, and its OpenMP.
    clang-14 libclang-rt-14-dev libfuzzer-14-dev libomp-14-dev
    # Distributed training (README "Distributed training"): mpirun for its
    # tests (libopenmpi-dev, above, builds plrank-train with MPI).
    openmpi-bin
  )
  # Manifest rendering and schema validation need kubectl (kustomize) and
  # node/npm; use whatever the machine has, else Debian's packages.
  command -v kubectl >/dev/null || packages+=(kubernetes-client)
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
fi

# scripts/image.sh (PLRANK_SETUP_IMAGE=1): a Debian base from the apt
# mirror, imported and built into the image, then run from its rootfs.
if [ "${PLRANK_SETUP_IMAGE:-0}" = 1 ]; then
  packages+=(mmdebstrap debootstrap buildah podman)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep "install ok installed" >/dev/null; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  as_root=(sudo -n)
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
