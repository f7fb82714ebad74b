#!/usr/bin/env bash
# ctest python_package_pip_install: the manual's install of the `plrank`
# package (docs/python.md), exactly, into a temporary venv with Debian's
# site packages, offline; then the manual's example as written and the
# package's pytest suite against the CLIs of the same build. PLRANK_BUILD_DIR
# makes setup.py build the extension in this build tree, where it is already
# built (the core libraries are never compiled a second time).
#   pip_install_test.sh PYTHON SOURCE_DIR BUILD_DIR
set -euo pipefail
python=$1 source=$2 build=$3
start=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
venv=$work/venv

# --- the manual's commands (docs/python.md) ---
"$python" -m venv --system-site-packages "$venv"
PLRANK_BUILD_DIR=$build "$venv/bin/pip" install --no-build-isolation --no-index "$source/python"
echo "pip install: $((SECONDS - start)) s"

# The manual's example (docs/python.md), as written, on data from plrank-datagen.
cd "$work"
"$build/bin/plrank-datagen" --queries=200 --out_prefix=data >/dev/null
awk '/^<!-- python-example -->$/ {on = 1; next}
     on && /^```python$/ {inside = 1; next}
     inside && /^```$/ {exit}
     inside {print}' "$source/docs/python.md" > example.py
[ "$(wc -l < example.py)" -eq 5 ] || { echo "docs/python.md example: expected 5 lines:"; cat example.py; exit 1; }
"$venv/bin/python" example.py
[ -s model.pb ] || { echo "docs/python.md example wrote no model.pb"; exit 1; }

# The suite, importing the installed package (cwd is not the source tree).
gen=$build/clients/python/gen
if [ -d "$gen/plrank/v1" ]; then
  export PLRANK_PY_GEN=$gen PLRANK_CLIENT_SOURCE=$source/clients/python
fi
PYTHONDONTWRITEBYTECODE=1 PLRANK_BIN_DIR=$build/bin \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$source/python/tests"
echo "python_package_pip_install: $((SECONDS - start)) s in all"
