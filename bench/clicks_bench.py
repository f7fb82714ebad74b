#!/usr/bin/env python3
"""The click benchmark of issue 35 (scripts/bench.sh clicks runs it).

Clicks are simulated from graded LETOR sets with the position-based model
(Joachims et al. 2017; Ai et al. 2018): a logging ranker (PLRank trained on a
few queries with true grades) orders each training query; the document at
position k is examined with probability (1/k)^eta and, once examined, clicked
with probability eps + (1 - eps) (2^g - 1) / (2^gmax - 1) (eps = 0.1: noise
clicks on irrelevant documents). Every session becomes one query of the click
log, written with its side files (docs/clicks-training.md): D.position,
D.propensity. Systems are trained on the clicks and evaluated by NDCG@10 on
the TRUE grades of the test queries; paired t-tests over test queries.

Pure Python (no numpy on the bench machine); the trainers are the project's
binaries (plrank-train, plrank-eval) and plrank-xgb-peer (XGBoost 1.7).
"""

import argparse
import math
import os
import random
import subprocess
import sys
import time

import clicks_long_lists

# ----------------------------------------------------------------- LETOR io


def read_letor(path):
    """[(qid, [(label, feature_text)])] in file order; .query files honoured."""
    groups = None
    if os.path.exists(path + ".query"):
        with open(path + ".query") as f:
            groups = [int(x) for x in f.read().split()]
    docs = []
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            label = int(float(parts[0]))
            if len(parts) > 1 and parts[1].startswith("qid:"):
                qid, feats = parts[1][4:], " ".join(parts[2:])
            else:
                qid, feats = None, " ".join(parts[1:])
            docs.append((qid, label, feats))
    queries = []
    if groups is not None:
        at = 0
        for g, size in enumerate(groups):
            queries.append((str(g), [(l, ft) for _, l, ft in docs[at:at + size]]))
            at += size
        return queries
    for qid, label, feats in docs:
        if not queries or queries[-1][0] != qid:
            queries.append((qid, []))
        queries[-1][1].append((label, feats))
    return queries


def write_letor(path, queries):
    with open(path, "w") as f:
        for qid, docs in queries:
            for label, feats in docs:
                f.write(f"{label} qid:{qid} {feats}\n")


def write_lines(path, values):
    with open(path, "w") as f:
        for v in values:
            f.write(f"{v}\n")


def read_scores(path):
    with open(path) as f:
        return [float(x) for x in f.read().split()]


# ------------------------------------------------------------------ metrics


def ndcg_at(labels, scores, k=10):
    order = sorted(range(len(labels)), key=lambda i: (-scores[i], labels[i], i))
    dcg = sum((2 ** labels[i] - 1) / math.log2(r + 2)
              for r, i in enumerate(order[:k]))
    ideal = sorted(labels, reverse=True)
    idcg = sum((2 ** l - 1) / math.log2(r + 2) for r, l in enumerate(ideal[:k]))
    return dcg / idcg if idcg > 0 else 1.0  # plrank-eval's empty_query_ndcg=one


def per_query_ndcg(queries, scores):
    out, at = [], 0
    for _, docs in queries:
        n = len(docs)
        out.append(ndcg_at([l for l, _ in docs], scores[at:at + n]))
        at += n
    return out


def _betacf(a, b, x):
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / (c if abs(c) > 1e-300 else 1e-300)
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / (c if abs(c) > 1e-300 else 1e-300)
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-12:
            break
    return h


def _betai(a, b, x):
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    bt = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) +
                  a * math.log(x) + b * math.log(1.0 - x))
    if x < (a + 1.0) / (a + b + 2.0):
        return bt * _betacf(a, b, x) / a
    return 1.0 - bt * _betacf(b, a, 1.0 - x) / b


def paired_t(a, b):
    """(mean difference a - b, two-sided p) of the paired t-test."""
    d = [x - y for x, y in zip(a, b)]
    n = len(d)
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1) if n > 1 else 0.0
    if var == 0.0:
        return mean, 1.0 if mean == 0.0 else 0.0
    t = mean / math.sqrt(var / n)
    df = n - 1
    p = _betai(0.5 * df, 0.5, df / (df + t * t))
    return mean, p


# --------------------------------------------------------------- simulation


def relevance_probability(label, max_label, eps=0.1):
    if max_label <= 0:
        return eps
    return eps + (1.0 - eps) * (2 ** label - 1) / (2 ** max_label - 1)


def deterministic_order(scores):
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def gumbel_top_k(scores, k, rng):
    keyed = [(s - math.log(-math.log(rng.random() or 1e-300)), i)
             for i, s in enumerate(scores)]
    keyed.sort(reverse=True)
    return [i for _, i in keyed[:k]]


def simulate(queries, logging_scores, eta, sessions, rng, shown=None,
             sampled=False, max_label=None, propensity_draws=300):
    """Click log: (queries, positions, propensities, curve). shown=None shows
    the whole list; sampled draws each session's ranking from the logging
    ranker's Plackett-Luce policy (Gumbel top-k) and the propensity of a
    document is its expected examination under that policy (Monte Carlo
    over propensity_draws rankings; the serving side logs it exactly)."""
    if max_label is None:
        max_label = max(l for _, docs in queries for l, _ in docs)
    log, positions, propensities = [], [], []
    at = 0
    for qid, docs in queries:
        n = len(docs)
        s = logging_scores[at:at + n]
        at += n
        k = n if shown is None else min(shown, n)
        exam = [(1.0 / (r + 1)) ** eta for r in range(k)]
        if sampled:
            expected = [0.0] * n
            for _ in range(propensity_draws):
                for r, i in enumerate(gumbel_top_k(s, k, rng)):
                    expected[i] += exam[r]
            expected = [e / propensity_draws for e in expected]
        else:
            fixed = deterministic_order(s)[:k]
        for session in range(sessions):
            order = gumbel_top_k(s, k, rng) if sampled else fixed
            rows, pos, prop = [], [], []
            clicks = 0
            for r, i in enumerate(order):
                label, feats = docs[i]
                click = rng.random() < exam[r] * relevance_probability(
                    label, max_label)
                clicks += click
                rows.append((int(click), feats))
                pos.append(r + 1)
                prop.append(max(expected[i], 1e-6) if sampled else exam[r])
            if clicks == 0:
                continue  # no signal; a real log keeps it, training skips it
            log.append((f"{qid}_{session}", rows))
            positions += pos
            propensities += prop
    return log, positions, propensities


# ------------------------------------------------------------------ runners


class Runner:
    def __init__(self, bin_dir, scratch, trees, threads):
        self.bin = bin_dir
        self.scratch = scratch
        self.trees = trees
        self.threads = threads
        self.xgb = os.path.join(bin_dir, "plrank-xgb-peer")
        self.has_xgb = os.path.exists(self.xgb)
        self.seconds = 0.0

    def run(self, cmd):
        start = time.time()
        done = subprocess.run(cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        self.seconds += time.time() - start
        if done.returncode != 0:
            sys.stderr.write(" ".join(cmd) + "\n" + done.stdout + done.stderr)
            raise SystemExit(f"failed: {cmd[0]}")
        return done.stdout

    def train_score(self, train, test, name, flags, trees=None):
        model = os.path.join(self.scratch, name + ".pb")
        scores = os.path.join(self.scratch, name + ".scores")
        self.run([os.path.join(self.bin, "plrank-train"), f"--train={train}",
                  f"--model_out={model}", f"--trees={trees or self.trees}",
                  f"--num_threads={self.threads}", "--quiet", "--seed=1"] +
                 flags)
        self.run([os.path.join(self.bin, "plrank-eval"), f"--model={model}",
                  f"--data={test}", f"--scores_out={scores}"])
        return read_scores(scores), model

    def xgb_score(self, train, test, name, objective="rank:pairwise"):
        scores = os.path.join(self.scratch, name + ".scores")
        self.run([self.xgb, f"--train={train}", f"--test={test}",
                  f"--scores_out={scores}", f"--objective={objective}",
                  f"--trees={self.trees}", f"--num_threads={self.threads}",
                  "--quiet"])
        return read_scores(scores)


def logging_ranker(runner, train_queries, train_path, tag, fraction, rng,
                   trees=10):
    """A weak ranker: PLRank, `trees` trees on `fraction` of the training
    queries with true grades; returns its scores of every training doc."""
    chosen = [q for q in train_queries if rng.random() < fraction]
    if len(chosen) < 3:
        chosen = train_queries[:3]
    small = os.path.join(runner.scratch, f"{tag}.logging.txt")
    write_letor(small, chosen)
    scores, _ = runner.train_score(small, train_path, f"{tag}.logging",
                                   ["--leaves=7", "--min_data_in_leaf=5"],
                                   trees=trees)
    return scores


# --------------------------------------------------------------- the tables


FLUSH = lambda: None  # rewrites the report after every row (main sets it)

SYSTEMS = [
    ("PLRank naive", "plrank", []),
    ("PLRank gam", "plrank", ["--position_debias=gam"]),
    ("PLRank ips", "plrank", ["--position_debias=ips"]),
    ("LambdaMART naive", "lambdamart", []),
    ("LambdaMART gam", "lambdamart", ["--position_debias=gam"]),
    ("LambdaMART ips", "lambdamart", ["--position_debias=ips"]),
]


def mean(values):
    return sum(values) / len(values)


def standard_case(runner, name, train_path, test_path, etas, session_counts,
                  rng, report, max_ips):
    train_q = read_letor(train_path)
    test_q = read_letor(test_path)
    flat_train = os.path.join(runner.scratch, f"{name}.train.txt")
    write_letor(flat_train, train_q)
    flat_test = os.path.join(runner.scratch, f"{name}.test.txt")
    write_letor(flat_test, test_q)
    max_label = max(l for _, d in train_q for l, _ in d)
    ceiling_scores, _ = runner.train_score(flat_train, flat_test,
                                           f"{name}.ceiling", [])
    ceiling = per_query_ndcg(test_q, ceiling_scores)
    log_scores = logging_ranker(runner, train_q, flat_train, name, 0.03, rng)
    report.append(f"\n### {name}\n")
    report.append(
        f"{len(train_q)} training queries, {len(test_q)} test queries; "
        f"ceiling (PLRank on the true grades) NDCG@10 {mean(ceiling):.4f}.\n")
    report.append(
        "| eta | sessions/query | click rows | " +
        " | ".join(s[0] for s in SYSTEMS) +
        (" | XGBoost pairwise" if runner.has_xgb else "") +
        " | best PLRank debiased vs naive (p) | gap recovered | vs LambdaMART same (p) | vs XGBoost (p) |")
    report.append("|" + "---|" * (len(SYSTEMS) + 7 + (1 if runner.has_xgb else 0)))
    summary = []
    for eta in etas:
        for sessions in session_counts:
            log, positions, props = simulate(train_q, log_scores, eta,
                                             sessions, rng,
                                             max_label=max_label)
            tag = f"{name}.eta{eta}.s{sessions}"
            path = os.path.join(runner.scratch, tag + ".clicks.txt")
            write_letor(path, log)
            write_lines(path + ".position", positions)
            curve = ",".join(f"{(1.0 / k) ** eta:.6g}" for k in
                             range(1, max(positions) + 1))
            results = {}
            for label, objective, flags in SYSTEMS:
                extra = list(flags)
                if "--position_debias=ips" in flags:
                    extra += [f"--position_propensities={curve}",
                              f"--max_ips_weight={max_ips}"]
                scores, _ = runner.train_score(
                    path, flat_test, f"{tag}.{label.replace(' ', '_')}",
                    [f"--objective={objective}"] + extra)
                results[label] = per_query_ndcg(test_q, scores)
            if runner.has_xgb:
                results["XGBoost"] = per_query_ndcg(
                    test_q, runner.xgb_score(path, flat_test, tag + ".xgb"))
            naive = results["PLRank naive"]
            best = max(("PLRank gam", "PLRank ips"),
                       key=lambda k: mean(results[k]))
            diff, p = paired_t(results[best], naive)
            gap = mean(ceiling) - mean(naive)
            recovered = diff / gap if gap > 0 else float("nan")
            same = "LambdaMART " + best.split()[1]
            d_lm, p_lm = paired_t(results[best], results[same])
            cells = [f"{mean(results[s[0]]):.4f}" for s in SYSTEMS]
            if runner.has_xgb:
                cells.append(f"{mean(results['XGBoost']):.4f}")
                d_x, p_x = paired_t(results[best], results["XGBoost"])
                xgb_cell = f"{d_x:+.4f} ({p_x:.3g})"
            else:
                xgb_cell = "-"
            report.append(
                f"| {eta} | {sessions} | {len(positions)} | " +
                " | ".join(cells) +
                f" | {best.split()[1]} {diff:+.4f} ({p:.3g}) | "
                f"{100 * recovered:.0f} % | {d_lm:+.4f} ({p_lm:.3g}) | {xgb_cell} |")
            summary.append((name, eta, sessions, best, diff, p, recovered,
                            d_lm, p_lm))
            sys.stderr.write(f"{tag}: done ({runner.seconds:.0f} s)\n")
            FLUSH()
    return summary


def write_report(args, runner, report, long_report):
    with open(args.out, "w") as f:
        f.write("# Learning from clicks: position-debiased training\n\n")
        f.write("Reproduce: `scripts/bench.sh clicks` (bench/clicks_bench.py; "
                f"flags here: --trees={args.trees} --etas={args.etas} "
                f"--sessions={args.sessions} --small_etas={args.small_etas or args.etas} "
                f"--small_sessions={args.small_sessions or args.sessions} "
                f"--long_sessions={args.long_sessions} --long_seeds={args.long_seeds} "
                f"--long_betas={args.long_betas} "
                f"--long_queries={args.long_queries} --max_ips_weight={args.max_ips_weight} "
                f"--long_logging_trees={args.long_logging_trees} "
                f"--long_max_ips_weight={args.long_max_ips_weight} "
                f"--seed={args.seed}). Run time {runner.seconds / 60:.0f} min "
                f"of trainer and scorer processes at {args.threads} threads "
                "under `nice -n 10` on a shared 2-core machine.\n\n")
        f.write(__doc__.split("\n\n", 1)[1].split("Pure Python")[0])
        f.write(
            "Systems: PLRank (its defaults) and LambdaMART, each on the naive "
            "clicks, with `--position_debias=gam` and with "
            "`--position_debias=ips` (the true examination curve given by "
            "`--position_propensities`, clipped at `--max_ips_weight`); "
            "XGBoost 1.7 rank:pairwise on the clicks; PLRank on the true "
            "grades as the ceiling. Sessions without a click are dropped "
            "from the logs. p: two-sided paired t-test over test queries. "
            "'gap recovered' = (debiased - naive) / (ceiling - naive).\n")
        f.write("\n## Standard sets (whole lists shown)\n")
        f.write("\n".join(report) + "\n")
        if long_report:
            f.write("\n## Long lists: exploration (deterministic vs sampled logging)\n")
            f.write("\n".join(long_report) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True, help="shared data directory")
    ap.add_argument("--out", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--sets", default="mq2008,lightgbm,generated,long")
    ap.add_argument("--etas", default="0.5,1,2")
    ap.add_argument("--sessions", default="1,10")
    ap.add_argument("--small_etas", default="",
                    help="etas of the LightGBM example and generated sets "
                    "(default: --etas)")
    ap.add_argument("--small_sessions", default="",
                    help="sessions of those sets (default: --sessions)")
    ap.add_argument("--long_sessions", default="10,100")
    ap.add_argument("--long_seeds", default="36,37,38",
                    help="one generated long-list set (and simulation) per seed")
    ap.add_argument("--long_betas", default="1,4",
                    help="inverse temperatures of the Plackett-Luce logging "
                    "policy (its logits: beta times the logging ranker's scores)")
    ap.add_argument("--long_marginal_draws", type=int, default=1000,
                    help="Monte Carlo rankings per query for the position "
                    "marginals (plrank-logs join's --marginal_samples)")
    ap.add_argument("--long_queries", type=int, default=150)
    ap.add_argument("--long_logging_trees", type=int, default=30,
                    help="trees of the long lists' logging ranker (its scores "
                    "are the logits of its Plackett-Luce policy)")
    ap.add_argument("--long_max_ips_weight", type=float, default=100)
    ap.add_argument("--long_systems", default="",
                    help="comma-separated long-list systems to run (default: "
                    "all; the session lists' naive training always runs)")
    ap.add_argument("--long_rhat", default="seen:4:0,mu:4:2",
                    help="IPS relevance-grade systems DEN:G:A,...: label = "
                    "round(G min(1, (clicks + A prior) / (exposure + A))), "
                    "DEN seen (the sessions' examination of the document) "
                    "or mu (its expectation under the logging policy); A "
                    "eb, ebq, ml or dm fits a prior instead (see "
                    "clicks_long_lists.rhat_specs)")
    ap.add_argument("--long_reg_flags", default="",
                    help="trainer flags of the --long_rhat systems marked "
                    ":reg, e.g. '--min_data_in_leaf=100 --leaves=15'")
    ap.add_argument("--long_reg_sets", default="",
                    help="';'-separated trainer flag sets of the --long_rhat "
                    "systems marked :reg1, :reg2, ...")
    ap.add_argument("--max_ips_weight", type=float, default=20)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    runner = Runner(args.bin, args.scratch, args.trees, args.threads)
    etas = [float(x) if "." in x else int(x) for x in args.etas.split(",")]
    sessions = [int(x) for x in args.sessions.split(",")]
    sets = args.sets.split(",")
    small_etas = ([float(x) if "." in x else int(x)
                   for x in args.small_etas.split(",")]
                  if args.small_etas else etas)
    small_sessions = ([int(x) for x in args.small_sessions.split(",")]
                      if args.small_sessions else sessions)
    report = []
    long_report = []
    summaries = []
    global FLUSH
    FLUSH = lambda: write_report(args, runner, report, long_report)
    if "long" in sets:
        clicks_long_lists.long_list_case(runner, args, long_report, FLUSH)
    mq = os.path.join(args.data, "MQ2008")
    if "mq2008" in sets:
        train = os.path.join(args.scratch, "mq2008.s123.txt")
        with open(train, "w") as out:
            for part in ("S1", "S2", "S3"):
                with open(os.path.join(mq, part + ".txt")) as f:
                    out.write(f.read())
        summaries += standard_case(runner, "MQ2008 (fold 1: train S1-S3, test S5)",
                                   train, os.path.join(mq, "S5.txt"), etas,
                                   sessions, rng, report, args.max_ips_weight)
    if "lightgbm" in sets:
        lg = os.path.join(args.data, "lightgbm-example")
        summaries += standard_case(runner, "LightGBM example",
                                   os.path.join(lg, "rank.train"),
                                   os.path.join(lg, "rank.test"), small_etas,
                                   small_sessions, rng, report,
                                   args.max_ips_weight)
    datagen = os.path.join(args.bin, "plrank-datagen")
    if "generated" in sets:
        prefix = os.path.join(args.scratch, "gen")
        runner.run([datagen, "--regime=short_graded", "--queries=400",
                    "--features=40", "--seed=35", f"--out_prefix={prefix}"])
        summaries += standard_case(runner,
                                   "generated (short_graded: 400 queries split 60/20/20, 40 features)",
                                   prefix + ".train", prefix + ".test",
                                   small_etas, small_sessions, rng, report,
                                   args.max_ips_weight)
    write_report(args, runner, report, long_report)
    print(f"wrote {args.out} ({runner.seconds:.0f} s in trainers)")


if __name__ == "__main__":
    main()
