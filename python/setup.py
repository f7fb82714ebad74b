"""Builds plrank._core with CMake (see pyproject.toml for the install).

The extension is the CMake target plrank_python_module over the core
libraries. With PLRANK_BUILD_DIR set to a configured PLRank build tree (as
the ctest test does), that tree builds it, reusing its compiled libraries;
otherwise a tree of its own is configured under setuptools' build_temp with
only the core, the trainer's option parsing and the extension (no server,
tests or benchmarks). PLRANK_BUILD_JOBS sets the parallel jobs (2).
"""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def project_version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(plrank VERSION ([0-9.]+)", text)
    if not match:
        raise RuntimeError(f"{ROOT / 'CMakeLists.txt'}: no project VERSION")
    return match.group(1)


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        jobs = os.environ.get("PLRANK_BUILD_JOBS", "2")
        reuse = os.environ.get("PLRANK_BUILD_DIR")
        if reuse:
            build = Path(reuse).resolve()
            if not (build / "CMakeCache.txt").is_file():
                raise RuntimeError(
                    f"PLRANK_BUILD_DIR={reuse}: not a configured CMake build tree")
        else:
            build = Path(self.build_temp).resolve() / "cmake"
            subprocess.run(
                ["cmake", "-S", str(ROOT), "-B", str(build),
                 "-DCMAKE_BUILD_TYPE=Release", "-DPLRANK_BUILD_TESTS=OFF",
                 "-DPLRANK_BUILD_BENCH=OFF", "-DPLRANK_BUILD_SERVER=OFF",
                 "-DPLRANK_BUILD_PYTHON_MODULE=ON",
                 f"-DPLRANK_PYTHON={sys.executable}",
                 f"-DPython_EXECUTABLE={sys.executable}"],
                check=True)
        subprocess.run(["cmake", "--build", str(build), "-j", jobs,
                        "--target", "plrank_python_module"], check=True)
        listed = build / "python" / "extension_path.txt"
        if not listed.is_file():
            raise RuntimeError(
                f"{build}: the plrank Python extension is not configured "
                "(PLRANK_BUILD_PYTHON_MODULE=OFF, or pybind11-dev / "
                "python3-dev missing: see the CMake warning)")
        built = Path(listed.read_text().strip())
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        if not built.name.endswith(suffix):
            raise RuntimeError(
                f"{built} was built for another Python than {sys.executable} "
                f"(expected the suffix {suffix}); configure the build tree "
                f"with -DPLRANK_PYTHON={sys.executable} or unset PLRANK_BUILD_DIR")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    version=project_version(),
    ext_modules=[CMakeExtension("plrank._core")],
    cmdclass={"build_ext": CMakeBuild},
)
