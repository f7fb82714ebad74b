#!/usr/bin/env python3
"""Checks the layering rules of docs/ARCHITECTURE.md on every C++ file.

    scripts/check_layers.py [--root DIR]

Every `#include "..."` of a project file (or of gRPC, prometheus-cpp or the
generated protobuf headers) in a layer's directory must match one of the
layer's allowed prefixes, and no test, fuzz or bench file may include a
header under tests/unit/ (shared test support lives in tests/testing/).

The Python packages are layered the same way (PY_RULES, checked on every
`import` with the ast module): the training package `plrank` (python/plrank/)
imports no serving code (gRPC, protobuf, the client, the generated
`plrank.v1` stubs), as the C++ trainer links none; the serving client
`plrank_client` imports no trainer (`plrank`, its extension, `plrank_plot`),
as the C++ client includes none; `plrank-plot` talks to models only through
`plrank-eval`. The extension's C++ (python/src/) includes core, common and
the trainer's option parsing, never the server or the clients.

Only core/cpu/ may call the compiler's CPU detection
(__builtin_cpu_supports): every other layer asks CpuFeatures::Detected().

Prints each violation as FILE:LINE: message and exits 1 when there is one;
exits 0 and prints a one-line summary otherwise. ctest runs it (test
`architecture_layers`) and also runs it on scratch trees with one forbidden
include or import to show that it can fail.
"""

import argparse
import ast
import pathlib
import re
import sys

# Include prefixes every layer may use: the standard library and Abseil are
# angle/quoted includes that are not project code.
ALWAYS = ("absl/",)

# Project-owned include roots and third-party roots whose use is a layering
# decision. An include that starts with none of these is not checked
# (system headers, gtest, nlohmann, OpenMP, OpenSSL...).
CHECKED_ROOTS = (
    "core/", "common/", "server/", "clients/", "trainer/", "bench/",
    "fuzz/", "tests/", "grpcpp/", "grpc/", "prometheus/", "plrank/v1/",
    "google/protobuf/",
)

# Layer directory -> include prefixes it may use (besides its own directory
# and ALWAYS). The order of the table is the order of docs/ARCHITECTURE.md.
RULES = {
    # The CPU's instruction-set extensions, detected once: below every layer
    # that picks a kernel by them (scoring, boosting).
    "core/cpu/": (),
    "core/data/": (),
    "core/metrics/": ("core/data/",),
    "core/objectives/": ("core/data/", "core/metrics/"),
    "core/model/": ("core/data/", "plrank/v1/model.pb.h",
                    "google/protobuf/"),
    # Beside the ensemble: its scorers, its importers and its explainer,
    # none of which sees the artifact's protobuf types.
    "core/scoring/": ("core/cpu/", "core/data/", "core/model/"),
    "core/import/": ("core/data/", "core/model/"),
    "core/explain/": ("core/data/", "core/model/"),
    "core/boosting/": ("core/cpu/", "core/data/", "core/metrics/",
                       "core/objectives/", "core/model/"),
    "core/linear/": ("core/data/", "core/metrics/"),
    # The Plackett-Luce ranking policy (sampling, propensities) and the
    # counterfactual estimators over logged rankings.
    "core/policy/": ("core/data/",),
    "core/pipeline/": ("core/",),
    "common/": ("core/data/", "core/metrics/"),
    "trainer/": ("core/", "common/"),
    # The MPI module of distributed training: a Reducer (core/boosting/)
    # over MPI, and the only code that may include <mpi.h> (MPI_ONLY).
    "trainer/distributed/": ("core/boosting/",),
    # The serving lifecycle: no gRPC, prometheus or RPC wire types
    # (ranker.proto); its config file format (server_config.proto) is its
    # own. Metrics reach it through LifecycleObserver.
    "server/lifecycle/": ("core/data/", "core/model/", "core/scoring/",
                          "core/explain/",
                          "plrank/v1/server_config.pb.h", "google/protobuf/"),
    # The RPC layer over it.
    "server/": ("core/data/", "core/metrics/", "core/model/",
                "core/scoring/", "core/explain/", "core/policy/", "common/",
                "grpcpp/", "grpc/", "prometheus/", "plrank/v1/",
                "google/protobuf/"),
    "clients/": ("core/data/", "core/metrics/", "common/", "grpcpp/",
                 "grpc/", "plrank/v1/", "google/protobuf/"),
    # The Python package's extension: the core libraries and the options
    # plrank-train parses; no serving code.
    "python/": ("core/", "common/", "trainer/"),
}

# Python package directory -> modules it must not import (a module or any
# submodule of it), and the exceptions to that (`plrank.v1`, the generated
# stubs, is a namespace portion of `plrank` that only the client uses).
PY_RULES = {
    "python/plrank/": (("grpc", "google.protobuf", "plrank_client",
                        "plrank.v1", "plrank_plot"), ()),
    "clients/python/plrank_client/": (("plrank", "plrank_plot", "numpy"),
                                      ("plrank.v1",)),
    "trainer/plot/plrank_plot/": (("grpc", "google.protobuf",
                                   "plrank_client", "plrank"), ()),
}

# Code that may include any layer but never a test's own directory: support
# code shared by tests lives in tests/testing/, so no test depends on
# another suite's files (integration tests once included tests/unit/server/).
TEST_CODE = ("tests/", "fuzz/", "bench/")
TEST_ONLY = "tests/unit/"

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

# MPI stays behind the Reducer interface: only this directory includes it,
# so core/ builds and runs without MPI.
MPI_ONLY = "trainer/distributed/"
MPI_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]mpi(\.h|cxx\.h)?[>"]')

# The CPU is asked once, in one place (CpuFeatures::Detected): no other
# layer file calls the compiler's CPU detection, so what each kernel needs
# is stated where it is chosen (tests may call it, to check the detection).
CPU_ONLY = "core/cpu/"
CPU_DETECTION = re.compile(r"__builtin_cpu_(supports|init|is)\b")


def in_build_tree(relative: str) -> bool:
    """Build output inside the source tree (python/build/, ...)."""
    return any(part.startswith("build") for part in relative.split("/")[:-1])


def imported_modules(tree):
    """(line, absolute module name) of every import; relative ones skipped."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
            for alias in node.names:  # `from plrank import _core`
                yield node.lineno, f"{node.module}.{alias.name}"


def under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def check_python_file(root: pathlib.Path, path: pathlib.Path, package: str):
    relative = path.relative_to(root).as_posix()
    forbidden, excepted = PY_RULES[package]
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        tree = ast.parse(text, filename=relative)
    except SyntaxError as error:
        return [f"{relative}:{error.lineno}: cannot parse: {error.msg}"]
    problems = []
    seen = set()
    for line, module in imported_modules(tree):
        if any(under(module, e) for e in excepted):
            continue
        for prefix in forbidden:
            if under(module, prefix) and (line, prefix) not in seen:
                seen.add((line, prefix))
                problems.append(
                    f"{relative}:{line}: {package.rstrip('/')} must not "
                    f'import "{module}" (forbidden: {", ".join(forbidden)}; '
                    "see scripts/check_layers.py)")
    return problems


def layer_of(relative: str):
    """The longest RULES key that `relative` lies under, or None."""
    best = None
    for layer in RULES:
        if relative.startswith(layer) and (best is None or
                                           len(layer) > len(best)):
            best = layer
    return best


def check_test_file(root: pathlib.Path, path: pathlib.Path):
    """Violations of the tests/testing rule in a test, fuzz or bench file."""
    relative = path.relative_to(root).as_posix()
    problems = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        match = INCLUDE.match(line)
        if match and match.group(1).startswith(TEST_ONLY):
            problems.append(
                f"{relative}:{number}: tests must not include "
                f'"{match.group(1)}" (shared test support lives in '
                "tests/testing/; see docs/ARCHITECTURE.md)")
    return problems


def check_file(root: pathlib.Path, path: pathlib.Path):
    relative = path.relative_to(root).as_posix()
    layer = layer_of(relative)
    if layer is None:
        return []
    allowed = (layer,) + RULES[layer] + ALWAYS
    problems = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        if MPI_INCLUDE.match(line) and not relative.startswith(MPI_ONLY):
            problems.append(
                f"{relative}:{number}: only {MPI_ONLY.rstrip('/')} may "
                "include MPI (the rest sees a Reducer; see "
                "docs/ARCHITECTURE.md)")
            continue
        if CPU_DETECTION.search(line) and not relative.startswith(CPU_ONLY):
            problems.append(
                f"{relative}:{number}: only {CPU_ONLY.rstrip('/')} asks the "
                "CPU for its features (use CpuFeatures::Detected(); see "
                "docs/ARCHITECTURE.md)")
            continue
        match = INCLUDE.match(line)
        if not match:
            continue
        target = match.group(1)
        if not target.startswith(CHECKED_ROOTS):
            continue
        if target.startswith(allowed):
            continue
        problems.append(
            f"{relative}:{number}: {layer.rstrip('/')} must not include "
            f'"{target}" (allowed: {", ".join(allowed)}; see '
            "docs/ARCHITECTURE.md)")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(
        pathlib.Path(__file__).resolve().parent.parent),
        help="the checkout to check (default: this script's)")
    args = parser.parse_args()
    root = pathlib.Path(args.root).resolve()
    problems = []
    checked = 0
    for layer in RULES:
        directory = root / layer
        if not directory.is_dir():
            continue
        for path in sorted(directory.rglob("*")):
            if path.suffix not in (".h", ".cc") or not path.is_file():
                continue
            if in_build_tree(path.relative_to(root).as_posix()):
                continue
            if layer_of(path.relative_to(root).as_posix()) != layer:
                continue  # a deeper layer's file; checked under that layer
            checked += 1
            problems.extend(check_file(root, path))
    for top in TEST_CODE:
        directory = root / top
        if not directory.is_dir():
            continue
        for path in sorted(directory.rglob("*")):
            if path.suffix not in (".h", ".cc") or not path.is_file():
                continue
            checked += 1
            problems.extend(check_test_file(root, path))
    for package in PY_RULES:
        directory = root / package
        if not directory.is_dir():
            continue
        for path in sorted(directory.rglob("*")):
            if path.suffix not in (".py", ".pyi") or not path.is_file():
                continue
            if in_build_tree(path.relative_to(root).as_posix()):
                continue
            checked += 1
            problems.extend(check_python_file(root, path, package))
    for problem in problems:
        print(problem)
    if checked == 0:
        print(f"check_layers: no C++ or Python files under {root}", file=sys.stderr)
        return 1
    if problems:
        print(f"check_layers: {len(problems)} forbidden include(s) or import(s) in "
              f"{checked} files", file=sys.stderr)
        return 1
    print(f"check_layers: {checked} files, every include and import allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
