"""Session fixture: tiny data, two trained versions, a live plrank-server.

Binaries come from --bin_dir (default: $PLRANK_BIN_DIR). The repository
holds model "demo" with versions 1 and 2 (v1 labelled "stable" through the
server config file, which also names it the shadow, paused at fraction 0) and a corrupt version 3 that fails to load; the server
listens on 127.0.0.1 port 0 and is killed at the end of the session (and by
the kernel if pytest itself dies, via PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path
from typing import Dict, List

import pytest

from plrank_client import RankerClient

MAX_DOCUMENTS = 100  # --max_documents_per_request of the test server
NUM_FEATURES = 8


def pytest_addoption(parser):
    parser.addoption("--bin_dir", default=os.environ.get("PLRANK_BIN_DIR", ""),
                     help="directory of plrank-server, plrank-train, ... "
                          "(default: $PLRANK_BIN_DIR)")


@dataclasses.dataclass
class Env:
    bin_dir: Path
    work: Path
    data: Path          # LETOR file, all queries
    model_base: Path
    target: str
    eval_scores: Dict[int, Path]             # version -> plrank-eval --scores_out
    eval_metrics: Dict[int, Dict[str, float]]  # version -> printed metrics
    eval_output: Dict[int, str]

    def binary(self, name: str) -> str:
        return str(self.bin_dir / name)


def run(args: List[str], **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, timeout=60, **kwargs)
    if result.returncode != 0:
        raise AssertionError(f"{args} failed ({result.returncode}):\n"
                             f"{result.stdout}\n{result.stderr}")
    return result


_METRIC_LINE = re.compile(r"^(ndcg@\d+|err|map)\s+(-?[\d.]+)\s*$")


def parse_metrics(text: str) -> Dict[str, float]:
    return {m.group(1): float(m.group(2))
            for m in map(_METRIC_LINE.match, text.splitlines()) if m}


def _die_with_parent():
    # PR_SET_PDEATHSIG = 1: the server gets SIGTERM if pytest dies.
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def start_server(bin_dir: Path, work: Path, extra: List[str], name: str):
    """Starts plrank-server; returns (process, "127.0.0.1:PORT")."""
    log = open(work / f"{name}.log", "w")
    process = subprocess.Popen(
        [str(bin_dir / "plrank-server"), "--host=127.0.0.1", "--port=0",
         "--metrics_port=-1", "--poll_interval_seconds=0", *extra],
        stdout=subprocess.PIPE, stderr=log, text=True,
        preexec_fn=_die_with_parent)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.2)
        if ready:
            line = process.stdout.readline()
            match = re.match(r"listening on (\S+:\d+)$", line.strip())
            if match:
                return process, match.group(1)
            if not line:
                break
        if process.poll() is not None:
            break
    stop_server(process)
    raise AssertionError(f"{name} did not start:\n" +
                         (work / f"{name}.log").read_text())


def stop_server(process) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout:
        process.stdout.close()


def wait_for_states(target: str, expected: Dict[int, str]) -> None:
    """Polls GetModelStatus until every version has its expected state."""
    deadline = time.monotonic() + 15
    states: Dict[int, str] = {}
    with RankerClient(target, timeout=2) as client:
        while True:
            try:
                states = {v.version: v.state for v in client.status("demo").versions}
                if all(states.get(v) == s for v, s in expected.items()):
                    return
            except Exception:  # not serving yet
                if time.monotonic() > deadline:
                    raise
            if time.monotonic() > deadline:
                raise AssertionError(f"version states {states}, want {expected}")
            time.sleep(0.05)


@pytest.fixture(scope="session")
def env(request, tmp_path_factory) -> Env:
    bin_option = request.config.getoption("--bin_dir")
    if not bin_option:
        pytest.fail("pass --bin_dir=DIR (or set PLRANK_BIN_DIR) with the "
                    "plrank binaries")
    bin_dir = Path(bin_option).resolve()
    work = tmp_path_factory.mktemp("plrank")
    data = work / "data.txt"
    run([str(bin_dir / "plrank-datagen"), "--queries=30", "--mean_docs=12",
         f"--features={NUM_FEATURES}", "--seed=3", f"--out={data}"])
    base = work / "models"
    for version, trees in ((1, 5), (2, 8)):
        model = base / "demo" / str(version) / "model.pb"
        model.parent.mkdir(parents=True)
        run([str(bin_dir / "plrank-train"), f"--train={data}", f"--trees={trees}",
             "--leaves=4", "--min_data_in_leaf=5", "--quiet", f"--model_out={model}"])
    broken = base / "demo" / "3" / "model.pb"
    broken.parent.mkdir()
    broken.write_bytes(b"not a model")
    scores, metrics, outputs = {}, {}, {}
    for version in (1, 2):
        scores[version] = work / f"eval_v{version}.scores"
        out = run([str(bin_dir / "plrank-eval"),
                   f"--model={base / 'demo' / str(version) / 'model.pb'}",
                   f"--data={data}", f"--scores_out={scores[version]}"]).stdout
        outputs[version] = out
        metrics[version] = parse_metrics(out)
    config = work / "server_config.txt"
    config.write_text('models {\n  name: "demo"\n  version_policy { all {} }\n'
                      '  version_labels { key: "stable" value: 1 }\n'
                      # Shadowing configured but paused (fraction 0): status
                      # shows it, and no request is ever copied, so both
                      # clients' status outputs stay comparable.
                      '  shadow_label: "stable"\n}\n')
    process, target = start_server(
        bin_dir, work, [f"--model_base_path={base}", f"--model_config_file={config}",
                        f"--max_documents_per_request={MAX_DOCUMENTS}"], "server")
    request.addfinalizer(lambda: stop_server(process))
    wait_for_states(target, {1: "AVAILABLE", 2: "AVAILABLE", 3: "FAILED"})
    return Env(bin_dir, work, data, base, target, scores, metrics, outputs)


@pytest.fixture(scope="session")
def client(env):
    with RankerClient(env.target, timeout=10) as c:
        yield c
