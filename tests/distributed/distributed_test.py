#!/usr/bin/env python3
"""Distributed training tests: `mpirun -np N plrank-train` (docs/distributed.md).

    distributed_test.py --bin_dir DIR --mpi_built {ON,OFF} CASE [ARGS...]

CASE is one of
  equality OBJECTIVE [FLAG...]  single-process and -np 1..4 models give the
                                same test scores (within 1e-5 relative),
                                each rank reading its byte range of one file
                                and, pre-sharded, its own file ({rank})
  duplicate_query               a query id in two shards fails the job,
                                naming both files
  resume [-np N]                a run killed after half its trees and
                                resumed (--resume) gives the uninterrupted
                                run's test scores bit for bit
  voting                        --tree_learner=voting: fewer bytes per
                                iteration with a smaller --top_k, the same
                                model twice, recorded in the artifact;
                                single-process ignores it; bad values fail
  shard_cache                   --dataset_cache writes and then reads one
                                cache per rank's byte range
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


def query_blocks(path):
    """The file's lines grouped by query, in file order."""
    blocks = []
    for line in path.read_text().splitlines(keepends=True):
        qid = line.split()[1]
        if not blocks or blocks[-1][0] != qid:
            blocks.append((qid, []))
        blocks[-1][1].append(line)
    return blocks


def write_shards(path, ranks, pattern):
    """Splits `path` into `ranks` files of whole queries (contiguous blocks,
    so their concatenation in rank order is the file)."""
    blocks = query_blocks(path)
    for rank in range(ranks):
        begin = len(blocks) * rank // ranks
        end = len(blocks) * (rank + 1) // ranks
        target = pathlib.Path(str(pattern).replace("{rank}", str(rank))
                              .replace("{ranks}", str(ranks)))
        target.write_text("".join("".join(lines)
                                  for _, lines in blocks[begin:end]))


def case_equality(bin_dir, work, objective, extra):
    train, valid, test = generate(bin_dir, work)
    train_bin = str(bin_dir / "plrank-train")
    flags = [f"--objective={objective}"] + extra
    single = work / "single.pb"
    run([train_bin] + train_flags(train, valid, single, flags))
    reference = scores(bin_dir, single, test, work / "single.scores")
    worst = 0.0
    for ranks in (1, 2, 3, 4):
        for mode in ("range", "shards"):
            if mode == "range":
                train_in, valid_in = train, valid
            else:
                train_in = work / f"train-{{rank}}-of-{{ranks}}"
                valid_in = work / f"valid-{{rank}}-of-{{ranks}}"
                write_shards(train, ranks, train_in)
                write_shards(valid, ranks, valid_in)
            model = work / f"np{ranks}-{mode}.pb"
            result = run(mpirun_command(ranks) + [train_bin] +
                         train_flags(train_in, valid_in, model, flags))
            first = result.stdout.splitlines()[0] if result.stdout else ""
            if ranks > 1 and first != f"distributed: {ranks} ranks":
                print(result.stdout)
                raise SystemExit(f"FAIL: first line {first!r}")
            got = scores(bin_dir, model, test,
                         work / f"np{ranks}-{mode}.scores")
            difference = max_relative_difference(reference, got)
            worst = max(worst, difference)
            print(f"{objective} {' '.join(extra)} -np {ranks} ({mode}): max "
                  f"relative difference {difference:.3g} over {len(got)} "
                  "test scores")
    if worst > RELATIVE_TOLERANCE:
        raise SystemExit(f"FAIL: {worst:.3g} > {RELATIVE_TOLERANCE}")
    print("PASS")


def case_duplicate_query(bin_dir, work):
    train, valid, _ = generate(bin_dir, work)
    pattern = work / "train-{rank}"
    write_shards(train, 2, pattern)
    # The first query of shard 0 again at the end of shard 1.
    first = query_blocks(work / "train-0")[0][1]
    with open(work / "train-1", "a") as shard:
        shard.write("".join(first))
    model = work / "model.pb"
    result = run(mpirun_command(2) + [str(bin_dir / "plrank-train")] +
                 train_flags(pattern, valid, model, []), check=False)
    qid = first[0].split()[1][len("qid:"):]
    expect_failure(result, model, [f"query id {qid} is in two shards",
                                   str(work / "train-0"),
                                   str(work / "train-1")])


def case_resume(bin_dir, work, args):
    """Killed (SIGKILL, a test hook) right after iteration 8 of 16, with a
    checkpoint every 4 iterations, then resumed: the test scores equal the
    uninterrupted run's exactly."""
    ranks = int(args[1]) if len(args) >= 2 and args[0] == "-np" else 1
    train, valid, test = generate(bin_dir, work)
    train_bin = str(bin_dir / "plrank-train")
    launcher = mpirun_command(ranks) if ranks > 1 else []
    flags = ["--trees=16", "--early_stopping_rounds=0", "--objective=xendcg"]

    def train_run(model, checkpoints, extra_env=None, resume=False):
        command = launcher + [train_bin] + train_flags(
            train, valid, model, flags + [f"--checkpoint_dir={checkpoints}",
                                          "--checkpoint_every=4"] +
            (["--resume"] if resume else []))
        if extra_env:
            os.environ.update(extra_env)
        try:
            return run(command, check=False)
        finally:
            for name in extra_env or {}:
                del os.environ[name]

    whole = work / "whole.pb"
    result = train_run(whole, work / "whole-checkpoints")
    if result.returncode != 0:
        print(result.stdout)
        raise SystemExit("FAIL: the uninterrupted run failed")
    resumed = work / "resumed.pb"
    checkpoints = work / "checkpoints"
    killed = train_run(resumed, checkpoints,
                       {"PLRANK_TEST_KILL_AFTER_ITERATION": "8"})
    if killed.returncode == 0 or resumed.exists():
        print(killed.stdout)
        raise SystemExit("FAIL: the killed run was not killed")
    if not (checkpoints / "checkpoint.plrank").is_file():
        raise SystemExit("FAIL: no checkpoint was written")
    again = train_run(resumed, checkpoints, resume=True)
    print(again.stdout)
    if again.returncode != 0 or "resuming from" not in again.stdout or \
            "after iteration 8 of 16" not in again.stdout:
        raise SystemExit("FAIL: the run did not resume after iteration 8")
    a = scores(bin_dir, whole, test, work / "whole.scores")
    b = scores(bin_dir, resumed, test, work / "resumed.scores")
    if (work / "whole.scores").read_text() != \
            (work / "resumed.scores").read_text():
        raise SystemExit("FAIL: resumed scores differ, max relative "
                         f"{max_relative_difference(a, b):.3g}")
    print(f"PASS (-np {ranks}: {len(a)} test scores bit-identical)")


def write_positions(path):
    """D.position beside D: the document's place in its query, 1..10 again
    from 11 on (enough to give gam a curve to learn)."""
    positions = []
    for _, lines in query_blocks(path):
        positions += [str(i % 10 + 1) for i in range(len(lines))]
    pathlib.Path(f"{path}.position").write_text("\n".join(positions) + "\n")


def case_gam(bin_dir, work):
    """--position_debias=gam over shards (each with its .position file):
    -np 2 and 3 score as single-process training does (the per-position sums
    reduced over ranks), and a -np 2 run killed after iteration 8 and
    resumed ends bit-identical to its uninterrupted twin (the bias is in
    the checkpoint)."""
    train, valid, test = generate(bin_dir, work)
    write_positions(train)
    train_bin = str(bin_dir / "plrank-train")
    flags = ["--position_debias=gam", "--trees=16", "--early_stopping_rounds=0"]
    single = work / "single.pb"
    result = run([train_bin] + train_flags(train, valid, single, flags))
    if "gam: learned position bias b_1..b_10" not in result.stdout:
        print(result.stdout)
        raise SystemExit("FAIL: no learned curve in the single-process log")
    reference = scores(bin_dir, single, test, work / "single.scores")
    pattern = work / "train-{rank}-of-{ranks}"
    worst = 0.0
    for ranks in (2, 3):
        write_shards(train, ranks, pattern)
        for rank in range(ranks):
            write_positions(pathlib.Path(str(pattern).replace(
                "{rank}", str(rank)).replace("{ranks}", str(ranks))))
        model = work / f"np{ranks}.pb"
        run(mpirun_command(ranks) + [train_bin] +
            train_flags(pattern, valid, model, flags))
        got = scores(bin_dir, model, test, work / f"np{ranks}.scores")
        difference = max_relative_difference(reference, got)
        worst = max(worst, difference)
        print(f"gam -np {ranks}: max relative difference {difference:.3g}")
    if worst > RELATIVE_TOLERANCE:
        raise SystemExit(f"FAIL: {worst:.3g} > {RELATIVE_TOLERANCE}")
    write_shards(train, 2, pattern)
    for rank in range(2):
        write_positions(work / f"train-{rank}-of-2")

    def np2(model, checkpoints, kill=False, resume=False):
        extra = [f"--checkpoint_dir={checkpoints}", "--checkpoint_every=4"]
        if resume:
            extra.append("--resume")
        if kill:
            os.environ["PLRANK_TEST_KILL_AFTER_ITERATION"] = "8"
        try:
            return run(mpirun_command(2) + [train_bin] +
                       train_flags(pattern, valid, model, flags + extra),
                       check=False)
        finally:
            os.environ.pop("PLRANK_TEST_KILL_AFTER_ITERATION", None)

    whole = work / "whole.pb"
    if np2(whole, work / "whole-checkpoints").returncode != 0:
        raise SystemExit("FAIL: the uninterrupted -np 2 run failed")
    resumed = work / "resumed.pb"
    killed = np2(resumed, work / "checkpoints", kill=True)
    if killed.returncode == 0 or resumed.exists():
        raise SystemExit("FAIL: the killed run was not killed")
    again = np2(resumed, work / "checkpoints", resume=True)
    if again.returncode != 0 or "after iteration 8 of 16" not in again.stdout:
        print(again.stdout)
        raise SystemExit("FAIL: the run did not resume after iteration 8")
    scores(bin_dir, whole, test, work / "whole.scores")
    scores(bin_dir, resumed, test, work / "resumed.scores")
    if (work / "whole.scores").read_text() != \
            (work / "resumed.scores").read_text():
        raise SystemExit("FAIL: the resumed gam run's scores differ")
    print(f"PASS (worst {worst:.3g}; resumed -np 2 bit-identical)")


def bytes_per_iteration(output):
    for line in output.splitlines():
        if line.startswith("distributed_bytes_sent_per_iteration="):
            return float(line.split("=", 1)[1])
    print(output)
    raise SystemExit("FAIL: no distributed_bytes_sent_per_iteration line")


def case_voting(bin_dir, work):
    """Voting-parallel split finding (equality with data-parallel when every
    feature is elected is the equality_plrank_tree_learner_voting_* cases)."""
    train, valid, test = generate(bin_dir, work)
    train_bin = str(bin_dir / "plrank-train")
    sent = {}
    test_scores = {}
    for name, flags in (("data", ["--tree_learner=data"]),
                        ("top2", ["--tree_learner=voting", "--top_k=2"]),
                        ("top1", ["--tree_learner=voting", "--top_k=1"]),
                        ("top1_again", ["--tree_learner=voting", "--top_k=1"])):
        model = work / f"{name}.pb"
        result = run(mpirun_command(3) + [train_bin] +
                     train_flags(train, valid, model, flags))
        sent[name] = bytes_per_iteration(result.stdout)
        test_scores[name] = scores(bin_dir, model, test, work / f"{name}.scores")
        print(f"{name}: {sent[name]:.0f} bytes sent per rank per iteration")
    # 9 of the 12 features per tree (--feature_fraction=0.75): top_k = 2
    # elects at most 4 per child, top_k = 1 at most 2, data-parallel sums
    # all 12 features' slots of one child per split.
    if not sent["top1"] < sent["top2"] < sent["data"]:
        raise SystemExit(f"FAIL: bytes not top1 < top2 < data: {sent}")
    if test_scores["top1"] != test_scores["top1_again"]:
        raise SystemExit("FAIL: two voting runs gave different models")
    if test_scores["top1"] == test_scores["data"]:
        raise SystemExit("FAIL: top_k=1 of 9 features grew data-parallel's "
                         "model exactly: was the vote skipped?")
    recorded = (work / "top2.pb").read_bytes()
    if b"tree_learner" not in recorded or b"voting" not in recorded:
        raise SystemExit("FAIL: the artifact does not record tree_learner")
    if b"tree_learner" in (work / "data.pb").read_bytes():
        raise SystemExit("FAIL: the default tree_learner is recorded (models "
                         "trained without it must keep their artifact)")
    # Single-process: nothing to vote over, the same model as without it.
    single = work / "single.pb"
    run([train_bin] + train_flags(train, valid, single, []))
    single_voting = work / "single-voting.pb"
    run([train_bin] + train_flags(train, valid, single_voting,
                                  ["--tree_learner=voting", "--top_k=1"]))
    if (scores(bin_dir, single, test, work / "s.scores") !=
            scores(bin_dir, single_voting, test, work / "sv.scores")):
        raise SystemExit("FAIL: single-process training did not ignore "
                         "--tree_learner=voting")
    for flag, needle in (("--tree_learner=feature", "feature-parallel is not "
                          "implemented"),
                         ("--tree_learner=bogus", "is not one of data, voting"),
                         ("--top_k=0", "top_k must be >= 1")):
        model = work / "refused.pb"
        result = run([train_bin] + train_flags(train, valid, model, [flag]),
                     check=False)
        expect_failure(result, model, [needle])
    print("PASS")


def case_shard_cache(bin_dir, work):
    train, valid, test = generate(bin_dir, work)
    cache_dir = work / "cache"
    cache_dir.mkdir()
    models = []
    for attempt in range(2):
        model = work / f"model{attempt}.pb"
        result = run(mpirun_command(2) + [str(bin_dir / "plrank-train")] +
                     train_flags(train, valid, model,
                                 ["--dataset_cache",
                                  f"--dataset_cache_dir={cache_dir}"]))
        word = "wrote" if attempt == 0 else "read"
        if f"dataset cache: {word} " not in result.stdout:
            print(result.stdout)
            raise SystemExit(f"FAIL: run {attempt + 1} did not {word} caches")
        models.append(scores(bin_dir, model, test, work / f"{attempt}.scores"))
    caches = sorted(p.name for p in cache_dir.iterdir())
    print("\n".join(caches))
    # Two ranks, train and valid: four caches of byte ranges.
    if len([c for c in caches if ".bytes-" in c]) != 4:
        raise SystemExit("FAIL: expected one cache per rank and file")
    if models[0] != models[1]:
        raise SystemExit("FAIL: the cached run trained another model")
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
        elif args.case == "duplicate_query":
            case_duplicate_query(args.bin_dir, work)
        elif args.case == "resume":
            case_resume(args.bin_dir, work, args.args)
        elif args.case == "gam":
            case_gam(args.bin_dir, work)
        elif args.case == "voting":
            case_voting(args.bin_dir, work)
        elif args.case == "shard_cache":
            case_shard_cache(args.bin_dir, work)
        elif args.case == "publish":
            case_publish(args.bin_dir, work)
        else:
            raise SystemExit(f"unknown case {args.case}")


if __name__ == "__main__":
    main()
