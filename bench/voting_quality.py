#!/usr/bin/env python3
"""Voting-parallel against data-parallel split finding (docs/distributed.md).

    voting_quality.py --bin_dir DIR --work_dir DIR [--ranks 4] [--top_k 20,5,2]

For every set (MQ2008, clueweb09 and table2018 in their five folds, the
LightGBM example, and a generated MSLR-shaped set of 136 features),
trains PLRank's default with `mpirun -np RANKS plrank-train` once with
--tree_learner=data and once with --tree_learner=voting per --top_k (each
rank reading its byte range of the training file; one OpenMP thread per
rank), and prints a markdown table: NDCG@10 on the test queries (empty
queries count 1, plrank-eval's default) of data-parallel, each voting run's
difference from it with the paired t-test's p over the test queries of all
folds, and the bytes each rank sent per iteration (rank 0's
distributed_bytes_sent_per_iteration, averaged over the folds) as a ratio of
data-parallel's. Quality is measured here, never asserted in tests.
"""

import argparse
import os
import pathlib
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clicks_bench import (paired_t, per_query_ndcg, read_letor,  # noqa: E402
                          read_scores, write_letor)

DATA = pathlib.Path(os.environ.get("PLRANK_SHARED_DATA_DIR",
                                   pathlib.Path(__file__).resolve().parents[1].parent /
                                   "shared" / "data"))


def run(command, env=None):
    result = subprocess.run(command, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"failed ({result.returncode}): {' '.join(command)}\n"
                 f"{result.stdout[-3000:]}")
    return result.stdout


def folds(work, bin_dir):
    """(set name, feature count, [(train, valid or None, test)])."""
    sets = []
    for name, features in (("MQ2008", 46), ("clueweb09", 42), ("table2018", 39)):
        out = work / name
        if not (out / "Fold5" / "test.txt").exists():
            run(["bash", str(DATA / "make-folds.sh"), str(out), name])
        sets.append((name, features, [
            (out / f"Fold{k}" / "train.txt", out / f"Fold{k}" / "vali.txt",
             out / f"Fold{k}" / "test.txt") for k in range(1, 6)]))
    # Its .query files become qid: fields: one file is split among the
    # ranks at query starts, which needs a qid on every line.
    example = work / "lightgbm-example"
    for part in ("train", "test"):
        target = pathlib.Path(f"{example}.{part}")
        if not target.exists():
            write_letor(str(target), read_letor(
                str(DATA / "lightgbm-example" / f"rank.{part}")))
    sets.append(("LightGBM example", 300, [
        (pathlib.Path(f"{example}.train"), None,
         pathlib.Path(f"{example}.test"))]))
    prefix = work / "generated"
    if not pathlib.Path(f"{prefix}.test").exists():
        run([str(bin_dir / "plrank-datagen"), "--queries=1500", "--seed=11",
             f"--out_prefix={prefix}"])
    sets.append(("generated (MSLR-shaped)", 136, [
        (pathlib.Path(f"{prefix}.train"), pathlib.Path(f"{prefix}.vali"),
         pathlib.Path(f"{prefix}.test"))]))
    return sets


def train_and_score(bin_dir, ranks, train, valid, test, model, flags):
    mpirun = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(ranks)]
    if os.geteuid() == 0:
        mpirun.insert(1, "--allow-run-as-root")
    env = dict(os.environ, OMP_NUM_THREADS="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    command = mpirun + [str(bin_dir / "plrank-train"), f"--train={train}",
                        f"--model_out={model}", "--num_threads=1",
                        "--log_period=0"] + flags
    if valid is not None:
        command.append(f"--valid={valid}")
    output = run(command, env)
    sent = 0.0
    for line in output.splitlines():
        if line.startswith("distributed_bytes_sent_per_iteration="):
            sent = float(line.split("=", 1)[1])
    scores_path = model.with_suffix(".scores")
    run([str(bin_dir / "plrank-eval"), f"--model={model}", f"--data={test}",
         f"--scores_out={scores_path}"])
    return per_query_ndcg(read_letor(str(test)), read_scores(scores_path)), sent


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin_dir", required=True, type=pathlib.Path)
    parser.add_argument("--work_dir", required=True, type=pathlib.Path)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--top_k", default="20,5,2")
    parser.add_argument("--sets", default="",
                        help="comma-separated set names (default: all)")
    args = parser.parse_args()
    if shutil.which("mpirun") is None:
        sys.exit("mpirun is not installed (openmpi-bin)")
    top_ks = [int(k) for k in args.top_k.split(",")]
    args.work_dir.mkdir(parents=True, exist_ok=True)
    header = ["set", "features", "test queries", "data-parallel NDCG@10"]
    for k in top_ks:
        header += [f"voting top_k={k}: NDCG@10 - data (p)",
                   f"top_k={k}: bytes / data's"]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    wanted = [name for name in args.sets.split(",") if name]
    pooled = {mode: [] for mode in ["data"] + top_ks}
    for name, features, fold_list in folds(args.work_dir, args.bin_dir):
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        results = {}  # mode -> (per-query NDCG over folds, [bytes per fold])
        for mode in ["data"] + top_ks:
            flags = (["--tree_learner=data"] if mode == "data" else
                     ["--tree_learner=voting", f"--top_k={mode}"])
            ndcg, sent = [], []
            for i, (train, valid, test) in enumerate(fold_list):
                slug = "".join(c if c.isalnum() else "_" for c in name)
                model = args.work_dir / f"model-{slug}-{i}-{mode}.pb"
                fold_ndcg, fold_sent = train_and_score(
                    args.bin_dir, args.ranks, train, valid, test, model, flags)
                ndcg += fold_ndcg
                sent.append(fold_sent)
            results[mode] = (ndcg, sum(sent) / len(sent))
        data_ndcg, data_sent = results["data"]
        row = [name, str(features), str(len(data_ndcg)),
               f"{sum(data_ndcg) / len(data_ndcg):.4f}"]
        for mode in pooled:
            pooled[mode] += results[mode][0]
        for k in top_ks:
            ndcg, sent = results[k]
            difference, p = paired_t(ndcg, data_ndcg)
            row += [f"{difference:+.4f} ({p:.2g})",
                    f"{sent / data_sent:.2f}" if data_sent else "-"]
        print("| " + " | ".join(row) + " |", flush=True)
    # Every test query of every set, paired the same way.
    data_ndcg = pooled["data"]
    row = ["all sets (pooled queries)", "", str(len(data_ndcg)),
           f"{sum(data_ndcg) / len(data_ndcg):.4f}"]
    for k in top_ks:
        difference, p = paired_t(pooled[k], data_ndcg)
        row += [f"{difference:+.4f} ({p:.2g})", ""]
    print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
