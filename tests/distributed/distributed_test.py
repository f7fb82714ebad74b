#!/usr/bin/env python3
"""Distributed training tests: `mpirun -np N plrank-train` (docs/distributed.md).

    distributed_test.py --bin_dir DIR --mpi_built {ON,OFF} CASE [ARGS...]

CASE is one of
  equality OBJECTIVE [FLAG...]  single-process, -np 2 and -np 3 models give
                                the same test scores (within 1e-5 relative)
  dying                         a rank killed mid-training fails the job,
                                naming the rank, and no model is written
  failing                       a rank whose input is unreadable fails the
                                job, naming the rank, and no model is written
  mismatch                      ranks started with different flags are
                                refused before training, naming the rank
  other_binary                  a rank started from another binary is
                                refused before training, naming the rank
  publish                       plrank-publish --launcher='mpirun ...' (the
                                Kubernetes MPIJob's command) publishes

Skips (exit 77, with a message) when mpirun is absent or plrank-train was
built without MPI; fails instead when the CI environment variable is set.
Data are generated with plrank-datagen (small, a fixed seed), so the tests
need no shared data.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
RELATIVE_TOLERANCE = 1e-5


def skip_or_fail(message):
    if os.environ.get("CI"):
        print(f"FAIL (CI is set, so this does not skip): {message}")
        sys.exit(1)
    print(f"SKIPPED: {message}")
    sys.exit(SKIP)


def mpirun_command(num_ranks):
    """mpirun with what containers and CI machines need: more ranks than
    cores (--oversubscribe) and, as root, --allow-run-as-root."""
    command = ["mpirun", "--oversubscribe", "-np", str(num_ranks)]
    if os.geteuid() == 0:
        command.insert(1, "--allow-run-as-root")
    return command


def mpi_environment():
    env = dict(os.environ)
    # Containers often forbid the cross-memory-attach single copy of Open
    # MPI's shared-memory transport; plain copies work everywhere.
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    # One OpenMP thread per rank: the machine's cores are shared.
    env["OMP_NUM_THREADS"] = "1"
    return env


def run(command, check=True):
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            env=mpi_environment(), timeout=300)
    if check and result.returncode != 0:
        print("$ " + " ".join(command))
        print(result.stdout)
        raise SystemExit(f"FAIL: exit code {result.returncode}")
    return result


def generate(bin_dir, work):
    prefix = work / "synth"
    run([str(bin_dir / "plrank-datagen"), "--queries=150", "--mean_docs=14",
         "--features=12", "--seed=7", f"--out_prefix={prefix}"])
    return (pathlib.Path(f"{prefix}.train"), pathlib.Path(f"{prefix}.vali"),
            pathlib.Path(f"{prefix}.test"))


def train_flags(train, valid, model, extra):
    return [f"--train={train}", f"--valid={valid}", f"--model_out={model}",
            "--trees=15", "--leaves=7", "--min_data_in_leaf=5",
            "--bagging_fraction=0.8", "--bagging_freq=2",
            "--feature_fraction=0.75", "--num_threads=1", "--log_period=5",
            "--early_stopping_rounds=10"] + list(extra)


def scores(bin_dir, model, data, out):
    run([str(bin_dir / "plrank-eval"), f"--model={model}", f"--data={data}",
         f"--scores_out={out}"])
    return [float(line.split()[-1]) for line in out.read_text().splitlines()
            if line.strip()]


def max_relative_difference(a, b):
    if len(a) != len(b):
        raise SystemExit(f"FAIL: {len(a)} scores vs {len(b)}")
    # Relative to the score scale, so a score that happens to be ~0 does not
    # turn a 1e-17 rounding difference into a large ratio.
    scale = max(max(abs(x) for x in a), 1e-12)
    return max(abs(x - y) / max(abs(x), abs(y), 1e-3 * scale)
               for x, y in zip(a, b))


def case_equality(bin_dir, work, objective, extra):
    train, valid, test = generate(bin_dir, work)
    train_bin = str(bin_dir / "plrank-train")
    flags = [f"--objective={objective}"] + extra
    single = work / "single.pb"
    run([train_bin] + train_flags(train, valid, single, flags))
    reference = scores(bin_dir, single, test, work / "single.scores")
    worst = 0.0
    for ranks in (2, 3):
        model = work / f"np{ranks}.pb"
        result = run(mpirun_command(ranks) + [train_bin] +
                     train_flags(train, valid, model, flags))
        first = result.stdout.splitlines()[0] if result.stdout else ""
        if first != f"distributed: {ranks} ranks":
            print(result.stdout)
            raise SystemExit(f"FAIL: first line {first!r}")
        got = scores(bin_dir, model, test, work / f"np{ranks}.scores")
        difference = max_relative_difference(reference, got)
        worst = max(worst, difference)
        print(f"{objective} {' '.join(extra)} -np {ranks}: max relative "
              f"difference {difference:.3g} over {len(got)} test scores")
    if worst > RELATIVE_TOLERANCE:
        raise SystemExit(f"FAIL: {worst:.3g} > {RELATIVE_TOLERANCE}")
    print("PASS")


def expect_failure(result, model, needles):
    print(result.stdout)
    if result.returncode == 0:
        raise SystemExit("FAIL: the job exited 0")
    for needle in needles:
        if needle not in result.stdout:
            raise SystemExit(f"FAIL: no {needle!r} in the job's output")
    if model.exists():
        raise SystemExit(f"FAIL: {model} was written")
    print(f"PASS (exit code {result.returncode})")


def case_dying(bin_dir, work):
    train, valid, _ = generate(bin_dir, work)
    model = work / "model.pb"
    command = mpirun_command(2) + [str(bin_dir / "plrank-train")] + \
        train_flags(train, valid, model, ["--objective=plrank"])
    # Test hook of the MPI reducer: rank 1 sends itself SIGKILL at its 20th
    # reduction, i.e. in the middle of growing the first trees.
    os.environ["PLRANK_DISTRIBUTED_TEST_KILL"] = "1:20"
    result = run(command, check=False)
    del os.environ["PLRANK_DISTRIBUTED_TEST_KILL"]
    expect_failure(result, model, ["rank 1"])


def case_failing(bin_dir, work):
    train, valid, _ = generate(bin_dir, work)
    model = work / "model.pb"
    train_bin = str(bin_dir / "plrank-train")
    # MPMD: rank 1 gets a training file it cannot read.
    good = train_flags(train, valid, model, [])
    bad = train_flags(work / "missing.train", valid, model, [])
    command = mpirun_command(1) + [train_bin] + good + [":", "-np", "1",
                                                        train_bin] + bad
    result = run(command, check=False)
    expect_failure(result, model, ["(rank 1 of 2): error:"])


def case_mismatch(bin_dir, work):
    train, valid, _ = generate(bin_dir, work)
    model = work / "model.pb"
    train_bin = str(bin_dir / "plrank-train")
    good = train_flags(train, valid, model, [])
    other = train_flags(train, valid, model, ["--learning_rate=0.05"])
    command = mpirun_command(2) + [train_bin] + good + [":", "-np", "1",
                                                        train_bin] + other
    result = run(command, check=False)
    expect_failure(result, model, ["rank 2 (options or data)"])
    if "rank 1 (" in result.stdout:
        raise SystemExit("FAIL: rank 1 has rank 0's flags but was named")


def case_other_binary(bin_dir, work):
    """A rank started from another build of plrank-train (here: a copy with
    one extra byte, which still runs) is refused before training."""
    train, valid, _ = generate(bin_dir, work)
    model = work / "model.pb"
    train_bin = bin_dir / "plrank-train"
    other = work / "plrank-train-other"
    other.write_bytes(train_bin.read_bytes() + b"\0")
    other.chmod(0o755)
    flags = train_flags(train, valid, model, [])
    command = mpirun_command(1) + [str(train_bin)] + flags + \
        [":", "-np", "1", str(other)] + flags
    result = run(command, check=False)
    expect_failure(result, model, ["rank 1 (binary)"])


def case_publish(bin_dir, work):
    """plrank-publish --launcher=mpirun... (the Kubernetes MPIJob's
    command) publishes the distributed model as a new version."""
    train, valid, test = generate(bin_dir, work)
    publish = pathlib.Path(__file__).resolve().parents[2] / "deploy" / \
        "docker" / "plrank-publish"
    base = work / "models"
    base.mkdir()
    launcher = " ".join(mpirun_command(2))
    command = [str(publish), f"--base_path={base}", "--model=web",
               "--version=3", f"--bin_dir={bin_dir}", f"--eval_data={test}",
               f"--launcher={launcher}", "--",
               f"--train={train}", f"--valid={valid}", "--trees=5",
               "--leaves=7", "--min_data_in_leaf=5", "--num_threads=1"]
    result = run(command, check=False)
    print(result.stdout)
    model = base / "web" / "3" / "model.pb"
    if result.returncode != 0 or not model.is_file():
        raise SystemExit("FAIL: nothing published")
    if "distributed: 2 ranks" not in result.stdout:
        raise SystemExit("FAIL: plrank-train did not run under mpirun")
    print("PASS")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin_dir", required=True, type=pathlib.Path)
    parser.add_argument("--mpi_built", required=True)
    parser.add_argument("case")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if shutil.which("mpirun") is None:
        skip_or_fail("mpirun is not installed (openmpi-bin)")
    if args.mpi_built != "ON":
        skip_or_fail("plrank-train was built without MPI (libopenmpi-dev)")
    with tempfile.TemporaryDirectory(prefix="plrank-mpi-") as directory:
        work = pathlib.Path(directory)
        if args.case == "equality":
            case_equality(args.bin_dir, work, args.args[0], args.args[1:])
        elif args.case == "dying":
            case_dying(args.bin_dir, work)
        elif args.case == "failing":
            case_failing(args.bin_dir, work)
        elif args.case == "mismatch":
            case_mismatch(args.bin_dir, work)
        elif args.case == "other_binary":
            case_other_binary(args.bin_dir, work)
        elif args.case == "publish":
            case_publish(args.bin_dir, work)
        else:
            raise SystemExit(f"unknown case {args.case}")


if __name__ == "__main__":
    main()
