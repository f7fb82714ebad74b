#!/usr/bin/env bash
# The installed PLRank, away from the source and build trees:
#   install_test.sh prefix BUILD  cmake --install BUILD --prefix TMP/a, then
#                                 move TMP/a to TMP/b and run from TMP/b
#   install_test.sh deb BUILD     cpack -G DEB, then dpkg-deb -x into TMP/root
#                                 (no system install) and run TMP/root/usr
# From there: every program's --version, the Python packages import, and a
# round trip: plrank-datagen -> plrank-train -> plrank-eval --scores_out ->
# plrank-server (with its HTTP port) -> plrank-client and plrank-client-py
# rank --scores_out, whose scores must equal plrank-eval's byte for byte;
# plrank-publish publishes a second version the server then serves; and
# plrank-plot draws the model's feature importance with plrank-eval.
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "install_test: $*" >&2; exit 1; }

case "$mode" in
  prefix)
    cmake --install "$build" --prefix "$work/a" >/dev/null
    mv "$work/a" "$work/b"
    prefix="$work/b"
    ;;
  deb)
    (cd "$build" && cpack -G DEB -B "$work/pkg" >/dev/null) ||
      fail "cpack -G DEB failed"
    deb=$(ls "$work"/pkg/plrank_*.deb)
    # Not `| grep -q`: grep stops at the first match, dpkg-deb then dies of
    # SIGPIPE and pipefail fails the test on a good package.
    info=$(dpkg-deb --info "$deb") || fail "dpkg-deb --info $deb failed"
    grep -q "Package: plrank" <<<"$info" || fail "$deb: no package name"
    dpkg-deb -x "$deb" "$work/root"
    prefix="$work/root/usr"
    ;;
  *) fail "usage: install_test.sh prefix|deb BUILD" ;;
esac
bin="$prefix/bin"
# Nothing may come from the build or source tree: hide both from PATH and
# PYTHONPATH, and run from an unrelated directory.
export PATH=/usr/bin:/bin
unset PYTHONPATH PLRANK_BIN_DIR
cd "$work"

for program in plrank-train plrank-eval plrank-datagen plrank-convert \
               plrank-server plrank-client plrank-loadgen plrank-client-py \
               plrank-plot; do
  [ -x "$bin/$program" ] || fail "$bin/$program is not installed"
  out=$("$bin/$program" --version) || fail "$program --version failed"
  case "$out" in
    *unknown*|"") fail "$program --version: '$out'" ;;
  esac
done
[ -x "$bin/plrank-publish" ] || fail "plrank-publish is not installed"
[ -f "$prefix/share/doc/plrank/README.md" ] || fail "the manual is not installed"
[ -f "$prefix/share/doc/plrank/docs/inference-protocol.md" ] || fail "docs/ is not installed"
[ -f "$prefix/share/plrank/proto/plrank/v1/ranker.proto" ] || fail "the .proto files are not installed"
grep -rq "$build\|/work/" "$bin/plrank-client-py" "$bin/plrank-plot" &&
  fail "a wrapper names the build tree"

PYTHONPATH="$prefix/lib/plrank/python" python3 - <<'PY' || fail "the Python packages do not import"
import plrank, plrank_client, plrank_plot
from plrank.v1 import ranker_pb2
assert plrank.__version__
PY

"$bin/plrank-datagen" --queries=20 --mean_docs=10 --features=8 --seed=7 --out=data.txt >/dev/null
mkdir -p models/web/1
"$bin/plrank-train" --train=data.txt --trees=10 --leaves=4 --min_data_in_leaf=3 \
  --quiet --model_out=models/web/1/model.pb
"$bin/plrank-eval" --model=models/web/1/model.pb --data=data.txt --scores_out=eval.scores >/dev/null

"$bin/plrank-server" --model_base_path=models --host=127.0.0.1 --port=0 \
  --metrics_port=0 --http_port=0 --poll_interval_seconds=0 >server.out 2>server.err &
server_pid=$!
for _ in $(seq 300); do
  grep -q "^http on" server.out 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || fail "plrank-server exited: $(cat server.err)"
  sleep 0.1
done
target=$(sed -n 's/^listening on //p' server.out)
http=$(sed -n 's/^http on //p' server.out)
[ -n "$target" ] && [ -n "$http" ] || fail "plrank-server printed no ports"
for _ in $(seq 300); do
  curl -sf "http://$http/v2/models/web/ready" >/dev/null && break
  sleep 0.1
done
"$bin/plrank-client" --target="$target" --model=web rank --data=data.txt \
  --scores_out=client.scores >/dev/null
cmp eval.scores client.scores || fail "plrank-client's scores differ from plrank-eval's"
"$bin/plrank-client-py" --target="$target" --model=web rank --data=data.txt \
  --scores_out=client_py.scores >/dev/null
cmp eval.scores client_py.scores || fail "plrank-client-py's scores differ from plrank-eval's"

"$bin/plrank-publish" --base_path=models --model=web --version=2 --bin_dir="$bin" \
  -- --train=data.txt --trees=12 --leaves=4 --min_data_in_leaf=3 --quiet >publish.log 2>&1 ||
  fail "plrank-publish failed: $(cat publish.log)"
"$bin/plrank-client" --target="$target" reload >/dev/null
curl -sf "http://$http/v2/models/web/versions/2/ready" >/dev/null ||
  fail "the published version 2 is not served"

# plrank-plot finds plrank-eval beside itself (lib/plrank/python/plrank_plot_build.py).
"$bin/plrank-plot" importance --model=models/web/1/model.pb --out=importance.png \
  >/dev/null 2>plot.err || fail "plrank-plot importance failed: $(cat plot.err)"
[ -s importance.png ] || fail "plrank-plot wrote no picture"
echo "install_test $mode: OK ($prefix)"
