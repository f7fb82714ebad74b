"""pip can install the generated stubs and the client offline (README)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import plrank.v1

CLIENT_SOURCE = Path(__file__).resolve().parent.parent


def test_pip_install_stubs_and_client(env, tmp_path):
    gen = Path(plrank.v1.__file__).resolve().parent.parent.parent
    if not (gen / "pyproject.toml").exists():
        pytest.skip(f"{gen} has no pyproject.toml (written by CMake)")
    # Copies: pip builds in place and would leave build/ and *.egg-info behind.
    shutil.copytree(gen / "plrank", tmp_path / "stubs" / "plrank")
    assert not (gen / "plrank" / "__init__.py").exists()  # a namespace portion
    shutil.copy(gen / "pyproject.toml", tmp_path / "stubs")
    shutil.copytree(CLIENT_SOURCE / "plrank_client", tmp_path / "client" / "plrank_client")
    shutil.copy(CLIENT_SOURCE / "pyproject.toml", tmp_path / "client")
    target = tmp_path / "site"
    # --no-deps: with --target pip cannot see Debian's grpcio/protobuf.
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet",
                    "--no-build-isolation", "--no-index", "--no-deps",
                    "--disable-pip-version-check", "--target", str(target),
                    str(tmp_path / "stubs"), str(tmp_path / "client")],
                   check=True, capture_output=True, timeout=120)
    script = target / "bin" / "plrank-client-py"
    clean_env = dict(os.environ, PYTHONPATH=str(target))
    result = subprocess.run([str(script), f"--target={env.target}", "list"],
                            capture_output=True, text=True, env=clean_env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("1 model(s)\ndemo ")
    # And the installed copy, not the source tree, was imported.
    probe = subprocess.run(
        [sys.executable, "-c", "import plrank_client, plrank.v1.ranker_pb2 as r; "
         "print(plrank_client.__file__); print(r.__file__)"],
        capture_output=True, text=True, env=clean_env, cwd=tmp_path, check=True)
    assert all(line.startswith(str(target)) for line in probe.stdout.split())
