#!/usr/bin/python3
"""Writes hostile model.pb files for scripts/soak.sh and the hostile-input
checks of bench/results/reliability.md.

    scripts/craft_model.py KIND OUT [SRC]

KIND:
  truncated     the first half of SRC (a real model.pb)
  garbage       1 KiB of deterministic noise
  bad_version   a well-formed envelope with format_version 2
  inf_sum       valid structure, every leaf finite (1e308) but two trees add
                up to +inf
  wide          valid structure, num_features = 50,000,000
  features:N    a valid, finite 2-tree model with N features (a version the
                clients' requests do not fit when N differs from the
                serving model's)
Needs protoc and Debian's python3-protobuf (scripts/setup.sh).
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_pb2():
    out = tempfile.mkdtemp(prefix="plrank-craft-")
    try:
        subprocess.check_call(["protoc", "-I", os.path.join(ROOT, "proto"),
                               "--python_out", out, "plrank/v1/model.proto"])
        sys.path.insert(0, out)
        from plrank.v1 import model_pb2 as module  # noqa: E402
        return module
    finally:
        shutil.rmtree(out, ignore_errors=True)


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def envelope(pb, model, format_version=1):
    payload = model.SerializeToString(deterministic=True)
    return pb.ModelFile(format_version=format_version, payload=payload,
                        checksum=fnv1a64(payload),
                        checksum_algorithm="fnv1a64").SerializeToString()


def stump(pb, feature, leaves):
    t = pb.Tree(split_feature=[feature], threshold=[0.5], default_left=[True],
                left_child=[-1], right_child=[-2])
    t.leaf_value.extend(leaves)
    return t


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    kind, out = sys.argv[1], sys.argv[2]
    if kind == "truncated":
        with open(sys.argv[3], "rb") as f:
            data = f.read()
        data = data[: len(data) // 2]
    elif kind == "garbage":
        data = random.Random(7).randbytes(1024)
    else:
        pb = model_pb2()
        model = pb.Model(format_version=1, objective="plrank", num_outputs=1,
                         created_unix_seconds=1700000000)
        if kind == "bad_version":
            model.num_features = 4
            model.trees.append(stump(pb, 0, [-1.0, 1.0]))
            data = envelope(pb, model, format_version=2)
        elif kind == "inf_sum":
            model.num_features = 4
            model.trees.append(stump(pb, 0, [1e308, 1e308]))
            model.trees.append(stump(pb, 1, [1e308, 1e308]))
            data = envelope(pb, model)
        elif kind == "wide":
            model.num_features = 50_000_000
            model.trees.append(stump(pb, 0, [-1.0, 1.0]))
            data = envelope(pb, model)
        elif kind.startswith("features:"):
            model.num_features = int(kind.split(":", 1)[1])
            model.trees.append(stump(pb, 0, [-1.0, 1.0]))
            model.trees.append(stump(pb, model.num_features - 1, [0.5, -0.5]))
            data = envelope(pb, model)
        else:
            sys.exit(f"craft_model.py: unknown kind {kind!r}\n{__doc__}")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main()
