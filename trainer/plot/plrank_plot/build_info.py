"""Version and program directory, from the build when there is one.

CMake writes plrank_plot_build.py (VERSION, BUILD_TYPE, BIN_DIR) into
<build>/trainer/plot/ and the bin/plrank-plot wrapper puts that directory on
PYTHONPATH; run from the source tree without it, the values are unknown.
"""

from __future__ import annotations

import os
import shutil
from typing import Optional

try:
    import plrank_plot_build as _build  # type: ignore
except ImportError:  # run from the source tree
    _build = None


def version_line() -> str:
    if _build is None:
        return "plrank-plot unknown (source tree)"
    return f"plrank-plot {_build.VERSION} ({_build.BUILD_TYPE} build)"


def program(name: str) -> Optional[str]:
    """The built program `name` beside plrank-plot, else the one on PATH."""
    if _build is not None:
        path = os.path.join(_build.BIN_DIR, name)
        if os.access(path, os.X_OK):
            return path
    return shutil.which(name)
