"""Fixtures of the plrank package tests: the CLIs of a build tree
(PLRANK_BIN_DIR) and a small generated dataset."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def bin_dir() -> Path:
    value = os.environ.get("PLRANK_BIN_DIR")
    if not value:
        pytest.fail("PLRANK_BIN_DIR (the build tree's bin/, with plrank-train) is not set")
    path = Path(value)
    assert (path / "plrank-train").is_file(), f"{path}: no plrank-train"
    return path


@pytest.fixture(scope="session")
def data(bin_dir, tmp_path_factory) -> Path:
    """<dir>/d.train, d.vali, d.test: 90 queries of ~25 documents, 12 features."""
    directory = tmp_path_factory.mktemp("data")
    subprocess.run([str(bin_dir / "plrank-datagen"), "--queries=90", "--mean_docs=25",
                    "--features=12", "--seed=5", f"--out_prefix={directory / 'd'}"],
                   check=True, capture_output=True, timeout=60)
    return directory
