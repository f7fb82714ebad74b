"""The click benchmark's long-list case (bench/clicks_bench.py runs it).

Hundreds of candidates per query, only the top 10 shown: a deterministic
logging ranker never shows most of them, a Plackett-Luce logging policy
(Gumbel top-k on its scores times beta, the policy's inverse temperature)
explores. Each setting is run on several generated sets (one per seed) and
every system is reported as its mean share of the ceiling's NDCG@10 with the
spread over the seeds.

Two forms of the same click log:
* session lists: every logged ranking is one query of its 10 shown
  documents (plrank-logs join's D), label = click;
* all candidates: every query once, all its candidates (the sessions
  pooled: plrank-logs join's D.all, summed over the query's requests),
  label = clicked in some session, D.weight = the query's click count of
  the document over the number of sessions, D.marginals = the logging
  policy's position marginals mu(d, j) (Monte Carlo over 1000 rankings and
  the logged ones, exact 0/1 for the deterministic ranker). `--position_debias=ips` with
  `--position_propensities` = the true curve is then the policy-aware
  estimator: a click counts 1 / sum_j mu(d, j) theta_j;
* all candidates with IPS relevance grades (plrank-logs join
  --pooled_grades's D.pooled, computed here as the join tool does): the
  same pooled lists, label round(G min(1, r)) for a clicked document (0
  otherwise), r = (clicks + a prior) / (exposure + a), exposure = the sum
  of theta at the positions the document was shown at ("observed") or
  sessions * sum_j mu(d, j) theta_j ("expected"), prior = the log's clicks
  per unit of that exposure; trained without --position_debias.
"""

import json
import math
import os
import sys

import clicks_bench as cb

SYSTEMS = [
    ("session_naive", "session lists, naive"),
    ("session_ips_curve", "session lists, ips (1/k)^eta"),
    ("session_ips_exposure", "session lists, ips by the policy's exposure"),
    ("all_naive", "all candidates, naive"),
    ("all_rate", "all candidates, click-rate weights"),
    ("all_ips", "all candidates, policy-aware ips"),
    ("shown_grades", "true grades of the shown documents (bound)"),
]


def marginals_of(scores, k, logged, sampled, rng, draws):
    """mu[d][j]: probability that the logging policy shows d at j + 1.
    Sampled: Monte Carlo over `draws` rankings plus the logged ones (draws
    of the same policy), so a document that was shown never gets 0."""
    n = len(scores)
    mu = [[0.0] * k for _ in range(n)]
    if not sampled:
        for r, i in enumerate(cb.deterministic_order(scores)[:k]):
            mu[i][r] = 1.0
        return mu
    rankings = [cb.gumbel_top_k(scores, k, rng) for _ in range(draws)]
    for order in rankings + logged:
        for r, i in enumerate(order):
            mu[i][r] += 1.0 / (draws + len(logged))
    return mu


def one_setting(runner, tag, train_q, test_q, flat_test, log_scores, sampled,
                sessions, eta, max_ips, rng, draws, wanted=None,
                rhat_specs=()):
    """NDCG@10 per test query of every system, and the coverage."""
    max_label = max(l for _, d in train_q for l, _ in d)
    k_shown = 10
    exam = [(1.0 / (r + 1)) ** eta for r in range(k_shown)]
    curve = ",".join(f"{x:.6g}" for x in exam)
    session_log, session_pos, session_prop = [], [], []
    pooled = []
    # The log's clicks per unit of (observed, expected) exposure over every
    # query, as plrank-logs join --pooled_grades computes its prior.
    log_clicks, log_seen, log_expected = 0, 0.0, 0.0
    at = 0
    for qid, docs in train_q:
        n = len(docs)
        s = log_scores[at:at + n]
        at += n
        k = min(k_shown, n)
        fixed = None if sampled else cb.deterministic_order(s)[:k]
        orders = [cb.gumbel_top_k(s, k, rng) if sampled else fixed
                  for _ in range(sessions)]
        mu = marginals_of(s, k, orders, sampled, rng, draws)
        exposure = [sum(m * e for m, e in zip(row, exam)) for row in mu]
        clicks, shown, seen = [0] * n, [0] * n, [0.0] * n
        seen2 = [0.0] * n  # sum of theta^2: the Bernoulli part of Var c
        for session, order in enumerate(orders):
            rows, any_click = [], 0
            for r, i in enumerate(order):
                click = rng.random() < exam[r] * cb.relevance_probability(
                    docs[i][0], max_label)
                clicks[i] += click
                shown[i] += 1
                seen[i] += exam[r]
                seen2[i] += exam[r] ** 2
                any_click += click
                rows.append((int(click), docs[i][1]))
            if any_click:
                session_log.append((f"{qid}_{session}", rows))
                session_pos += list(range(1, k + 1))
                session_prop += [max(exposure[i], 1e-6) for i in order]
        log_clicks += sum(clicks)
        log_seen += sum(seen)
        log_expected += sessions * sum(exposure)
        if sum(clicks):
            pooled.append((qid, docs, clicks, shown, mu, seen,
                           [sessions * x for x in exposure], seen2, s))

    wanted = wanted or [key for key, _ in SYSTEMS]

    def score(name, path, flags):
        if name not in wanted and name != "session_naive":
            return None
        return cb.per_query_ndcg(test_q, runner.train_score(
            path, flat_test, f"{tag}.{name}", flags)[0])

    ips = ["--position_debias=ips", f"--max_ips_weight={max_ips}"]
    res = {}
    path = os.path.join(runner.scratch, tag + ".sessions.txt")
    cb.write_letor(path, session_log)
    cb.write_lines(path + ".position", session_pos)
    if os.path.exists(path + ".propensity"):  # a previous run's
        os.remove(path + ".propensity")
    res["session_naive"] = score("session_naive", path, [])
    res["session_ips_curve"] = score(
        "session_ips_curve", path, ips + [f"--position_propensities={curve}"])
    cb.write_lines(path + ".propensity", [f"{p:.6g}" for p in session_prop])
    res["session_ips_exposure"] = score("session_ips_exposure", path, ips)

    path = os.path.join(runner.scratch, tag + ".all.txt")
    cb.write_letor(path, [(qid, [(int(c > 0), d[1]) for d, c in zip(docs, cl)])
                          for qid, docs, cl, *_ in pooled])
    for side in (".weight", ".marginals"):
        if os.path.exists(path + side):
            os.remove(path + side)
    res["all_naive"] = score("all_naive", path, [])
    cb.write_lines(path + ".weight", [f"{c / sessions:.6g}"
                                      for _, _, cl, *_ in pooled for c in cl])
    res["all_rate"] = score("all_rate", path, [])
    cb.write_lines(path + ".marginals",
                   [" ".join(f"{m:.6g}" for m in row)
                    for _, _, _, _, mu, *_ in pooled for row in mu])
    res["all_ips"] = score("all_ips", path,
                           ips + [f"--position_propensities={curve}"])

    # IPS relevance grades: r_hat(d) = clicks(d) / exposure(d) estimates the
    # position-based model's click probability once examined; exposure is the
    # examination the sessions gave d (sum of theta at its positions) or its
    # expectation under the policy (sessions * sum_j mu(d, j) theta_j).
    # Grade = round(G * min(r_hat, 1)), so noise clicks on an often-shown
    # irrelevant document (r_hat ~ eps) fall back to 0.
    def grade(c, e, a, grades, prior, floor=0):
        if c == 0:
            return 0
        r = (c + a * prior) / (e + a) if e + a > 0 else 1.0
        return max(floor, int(grades * min(r, 1.0) + 0.5))

    for den, g, a, obj in rhat_specs:
        key = rhat_key(den, g, a, obj)
        if key not in wanted:
            continue
        which = 5 if den == "seen" else 6
        prior = log_clicks / (log_seen if den == "seen" else log_expected)
        path = os.path.join(runner.scratch, tag + f".{key}.txt")
        if a == "lg":
            rows = logger_prior_labels(pooled, g, prior, "all" in obj)
            sys.stderr.write(f"{tag}.{key}: {LG_PRIOR[0]}\n")
            cb.write_letor(path, rows)
        elif a == "ml":
            rows = ml_labels(pooled, g, "all" in obj)
            sys.stderr.write(f"{tag}.{key}: prior {ML_PRIOR[0]}\n")
            cb.write_letor(path, rows)
        elif a == "dm":
            rows = dm_labels(runner, tag, key, pooled, g, prior, grade)
            cb.write_letor(path, rows)
        elif isinstance(a, str):  # empirical Bayes: a Beta prior fitted
            fits = ([beta_prior(p[2], p[5], p[7]) for p in pooled]
                    if a == "ebq" else
                    [beta_prior([c for p in pooled for c in p[2]],
                                [e for p in pooled for e in p[5]],
                                [e for p in pooled for e in p[7]])]
                    * len(pooled))
            everyone = "all" in obj
            rows = [(p[0], [(eb_grade(c, e, m, b, g, everyone), d[1])
                            for d, c, e in zip(p[1], p[2], p[5])])
                    for p, (m, b) in zip(pooled, fits)]
            sys.stderr.write(f"{tag}.{key}: prior m {fits[0][0]:.4g} "
                             f"b {fits[0][1]:.4g}\n")
            cb.write_letor(path, rows)
        else:
            cb.write_letor(path, [
                (p[0], [(grade(c, e, a, g, prior, int("floor" in obj)), d[1])
                        for d, c, e in zip(p[1], p[2], p[which])
                        if e > 0 or "shown" not in obj])
                for p in pooled])
        flags = []
        if os.path.exists(path + ".weight"):
            os.remove(path + ".weight")
        if obj == "mart2w":
            # Pointwise squared loss to r weighted by the exposure: its
            # minimiser over a leaf is the ratio estimator sum c / sum E.
            flags = ["--objective=mart2"]
            cb.write_lines(path + ".weight", [f"{e:.6g}" for p in pooled
                                              for e in p[which]])
        if "reg" in obj:
            flags = REG_FLAGS
            tail = obj.split("reg", 1)[1]
            if tail.isdigit():  # regN: the N-th set of --long_reg_sets
                flags = REG_SETS[int(tail) - 1]
            elif tail == "x":
                # A leaf holds about EXAMS_PER_LEAF examinations: documents
                # per leaf = that over the mean observed exposure.
                seen_all = [e for p in pooled for e in p[5]]
                mean_e = sum(seen_all) / len(seen_all)
                flags = [f for f in REG_FLAGS if "min_data_in_leaf" not in f]
                flags.append("--min_data_in_leaf="
                             f"{max(20, round(EXAMS_PER_LEAF / mean_e))}")
                sys.stderr.write(f"{tag}.{key}: {flags}\n")
        if "ebw" in obj:
            # The same labels, a clicked document weighted by the share of
            # its posterior that is data, e / (e + b) (b: beta_prior's fit).
            _, b = beta_prior([c for p in pooled for c in p[2]],
                              [e for p in pooled for e in p[5]],
                              [e for p in pooled for e in p[7]])
            cb.write_lines(path + ".weight", [
                f"{(e / (e + b) if c and not math.isinf(b) else 1.0):.6g}"
                for p in pooled for c, e in zip(p[2], p[5])])
        res[key] = score(key, path, flags)

    path = os.path.join(runner.scratch, tag + ".shown_grades.txt")
    cb.write_letor(path, [(qid, [d for d, sh in zip(docs, shown) if sh])
                          for qid, docs, _, shown, *_ in pooled])
    res["shown_grades"] = score("shown_grades", path, [])
    # Diagnostics of the gap: the bound trained with --long_reg_flags, and
    # every candidate with the true grade if shown, 0 if not (the pooled
    # lists with noise-free labels), with --long_reg_flags.
    res["shown_grades_reg"] = score("shown_grades_reg", path, REG_FLAGS)
    path = os.path.join(runner.scratch, tag + ".true_shown_all.txt")
    cb.write_letor(path, [(qid, [(d[0] if sh else 0, d[1])
                                 for d, sh in zip(docs, shown)])
                          for qid, docs, _, shown, *_ in pooled])
    res["true_shown_all_reg"] = score("true_shown_all_reg", path, REG_FLAGS)
    candidates = sum(len(docs) for _, docs, *_ in pooled)
    coverage = sum(1 for _, _, _, sh, *_ in pooled for x in sh if x) / candidates
    res = {key: v for key, v in res.items() if v is not None}
    return res, coverage, len(session_pos), candidates


REG_FLAGS = []  # --long_reg_flags: the trainer flags of the ":reg" systems
REG_SETS = []  # --long_reg_sets: flags of ":reg1", ":reg2", ...
EXAMS_PER_LEAF = 300  # ":regx": examinations per leaf


def beta_prior(clicks, exposure, exposure2):
    """Method-of-moments fit of a prior on the examined-click rate r
    (mean m, variance v) over the documents with exposure e > 0: a click at
    position j is Bernoulli(theta_j r), so over a document's impressions
    E c = e m and Var c = e m - s (v + m^2) + e^2 v, s = sum theta_j^2:
      m = sum c / sum e,
      v = (sum (c - e m)^2 - m sum e + m^2 sum s) / sum (e^2 - s)
    (a document shown once has e^2 = s and says nothing about v). As a Beta
    prior its pseudo-exposure is b = m (1 - m) / v - 1, the posterior mean
    (c + b m) / (e + b); v <= 0 (no spread beyond the click noise) gives
    b = inf, every document the prior mean."""
    rows = [(c, e, s) for c, e, s in zip(clicks, exposure, exposure2) if e > 0]
    se = sum(e for _, e, _ in rows)
    if not rows or se <= 0:
        return 0.0, float("inf")
    m = sum(c for c, _, _ in rows) / se
    den = sum(e * e - s for _, e, s in rows)
    v = ((sum((c - e * m) ** 2 for c, e, _ in rows) - m * se
          + m * m * sum(s for _, _, s in rows)) / den) if den > 0 else 0.0
    return m, (max(0.0, m * (1 - m) / v - 1) if v > 0 else float("inf"))


def dm_labels(runner, tag, key, pooled, grades, prior, grade, bins=20,
              folds=2):
    """Two stages: PLRank on the IPS grades (G = 4, a = 0, REG_FLAGS) scores
    the training candidates; its within-query rank, in `bins` quantiles,
    gets the click rate sum c / sum e of its bin over every query (a direct
    model of r from the features); the label is the posterior mean
    (c + b m(d)) / (e + b) around that model, b fitted by moments to the
    residual spread, for every candidate (unclicked and unshown too)."""
    # Cross-fitted: the model of one half of the queries scores the other
    # half (in-sample, it would rank its own noise clicks first).
    labelled = [(p[0], [(grade(c, e, 0, 4, prior), d[1])
                        for d, c, e in zip(p[1], p[2], p[5])]) for p in pooled]
    by_query = [None] * len(pooled)
    for fold in range(folds):
        fit = [q for i, q in enumerate(labelled) if i % folds != fold]
        held = [i for i in range(len(labelled)) if i % folds == fold]
        first = os.path.join(runner.scratch, f"{tag}.{key}.stage1.{fold}.txt")
        other = first + ".held.txt"
        cb.write_letor(first, fit)
        cb.write_letor(other, [labelled[i] for i in held])
        model = first + ".pb"
        scores_path = model + ".scores"
        runner.run([os.path.join(runner.bin, "plrank-train"),
                    f"--train={first}", f"--model_out={model}",
                    f"--trees={runner.trees}",
                    f"--num_threads={runner.threads}", "--quiet", "--seed=1"]
                   + REG_FLAGS)
        runner.run([os.path.join(runner.bin, "plrank-eval"), f"--model={model}",
                    f"--data={other}", f"--scores_out={scores_path}"])
        fold_scores = cb.read_scores(scores_path)
        at = 0
        for i in held:
            n = len(pooled[i][1])
            by_query[i] = fold_scores[at:at + n]
            at += n
    binned = [rank_bins(q, bins) for q in by_query]
    rate, b_fit = binned_rate_prior(pooled, binned, bins, prior)
    sys.stderr.write(f"{tag}.{key}: bins " +
                     " ".join(f"{r:.3g}" for r in rate) + f"; b {b_fit:.4g}\n")
    return shrunk_label_rows(pooled, binned, rate, b_fit, grades, True)


LG_PRIOR = [""]  # the last logging-ranker prior, for the log


def isotonic_bins(num, den, prior):
    """Non-increasing rates num / den over the bins (pool adjacent
    violators weighted by den); a bin without exposure takes the rate of
    the bin above it."""
    bins = len(num)
    blocks = []
    for k in range(bins):
        if den[k] <= 0:
            continue
        blocks.append([num[k], den[k], [k]])
        while (len(blocks) > 1 and blocks[-2][0] / blocks[-2][1]
               < blocks[-1][0] / blocks[-1][1]):
            c, e, ks = blocks.pop()
            blocks[-1][0] += c
            blocks[-1][1] += e
            blocks[-1][2] += ks
    rate = [prior] * bins
    for c, e, ks in blocks:
        for k in ks:
            rate[k] = c / e
    for k in range(1, bins):
        if den[k] <= 0:
            rate[k] = rate[k - 1]
    return rate


def rank_bins(scores, bins):
    """Each document's bin (0 = best) of its rank by `scores` within its
    query, `bins` equal shares of the query's ranks."""
    n = len(scores)
    order = sorted(range(n), key=lambda i: -scores[i])
    b = [0] * n
    for rank, i in enumerate(order):
        b[i] = rank * bins // n
    return b


def shrunk_label_rows(pooled, binned, rate, b_fit, grades, everyone):
    """Pooled lists labelled round(G min(1, r)), r = (c + b m(d)) / (e + b)
    with m(d) the rate of d's rank bin (m itself when b is infinite); an
    unclicked document gets 0 unless `everyone`."""
    rows = []
    for p, b in zip(pooled, binned):
        row = []
        for i, (d, c, e) in enumerate(zip(p[1], p[2], p[5])):
            m = rate[b[i]]
            r = m if math.isinf(b_fit) else (c + b_fit * m) / (e + b_fit)
            label = int(grades * min(r, 1.0) + 0.5) if (c or everyone) else 0
            row.append((label, d[1]))
        rows.append((p[0], row))
    return rows


def binned_rate_prior(pooled, binned, bins, prior):
    """(m, b): m[bin] the isotonic click rate per examination of the rank
    bins (non-increasing in the rank), b the pseudo-exposure fitted by
    moments to the residual spread of r around m(d) (as beta_prior, with
    m_d per document)."""
    num, den = [0.0] * bins, [0.0] * bins
    for p, b in zip(pooled, binned):
        for i, (c, e) in enumerate(zip(p[2], p[5])):
            num[b[i]] += c
            den[b[i]] += e
    rate = isotonic_bins(num, den, prior)
    top = bottom = 0.0
    for p, b in zip(pooled, binned):
        for i, (c, e, s2) in enumerate(zip(p[2], p[5], p[7])):
            if e > 0:
                m = rate[b[i]]
                top += (c - e * m) ** 2 - e * m + s2 * m * m
                bottom += e * e - s2
    v = top / bottom if bottom > 0 else 0.0
    b_fit = max(0.0, prior * (1 - prior) / v - 1) if v > 0 else float("inf")
    return rate, b_fit


def logger_prior_labels(pooled, grades, prior, everyone, bins=20):
    """Direct model = the logging ranker (its scores are in the impression
    log, and it was not fitted to these clicks): m(d) = the isotonic click
    rate of d's within-query rank bin under the logger, over the whole log;
    label round(G (c + b m(d)) / (e + b)), b fitted by moments to the
    spread of r around m (as beta_prior), for a clicked document (every
    candidate with `everyone`, unshown ones m(d))."""
    binned = [rank_bins(p[8], bins) for p in pooled]
    rate, b_fit = binned_rate_prior(pooled, binned, bins, prior)
    LG_PRIOR[0] = ("bins " + " ".join(f"{r:.3g}" for r in rate) +
                   f"; b {b_fit:.4g}")
    return shrunk_label_rows(pooled, binned, rate, b_fit, grades, everyone)


ML_PRIOR = [""]  # the last fitted grid prior, for the log


def ml_labels(pooled, grades, everyone, points=41, rounds=300):
    """Maximum marginal likelihood (NPMLE on a grid): the prior pi_k on
    r in a grid of `points` rates in [0.01, 1] fitted by EM to every shown
    document's (clicks c, exposure e) under c ~ Poisson(e r) (the
    position-based model for small theta r), then the label
    round(G E[r | c, e]) for a clicked document (every shown one with
    `everyone`; 0 otherwise). A mixture prior keeps the bimodal shape of
    click noise (r ~ eps) against relevant documents, which a Beta prior
    smooths over."""
    import numpy as np
    grid = np.linspace(0.01, 1.0, points)
    c = np.array([x for p in pooled for x in p[2]], dtype=float)
    e = np.array([x for p in pooled for x in p[5]], dtype=float)
    shown = e > 0
    log_lik = (c[shown, None] * np.log(grid[None, :])
               - e[shown, None] * grid[None, :])
    log_lik -= log_lik.max(axis=1, keepdims=True)
    lik = np.exp(log_lik)
    pi = np.full(points, 1.0 / points)
    for _ in range(rounds):
        post = lik * pi
        post /= post.sum(axis=1, keepdims=True)
        pi = post.mean(axis=0)
    post = lik * pi
    post /= post.sum(axis=1, keepdims=True)
    mean = np.zeros(len(c))
    mean[shown] = post @ grid
    ML_PRIOR[0] = " ".join(f"{r:.2f}:{w:.3f}" for r, w in zip(grid, pi)
                           if w > 0.01)
    labels = [int(grades * r + 0.5) if (x > 0 or (everyone and y > 0)) else 0
              for r, x, y in zip(mean, c, e)]
    rows, at = [], 0
    for p in pooled:
        n = len(p[1])
        rows.append((p[0], [(l, d[1]) for l, d in zip(labels[at:at + n], p[1])]))
        at += n
    return rows


def eb_grade(c, e, m, b, grades, everyone):
    """round(G min(1, posterior mean)); without `everyone` an unclicked
    document stays 0 as in the other IPS grades."""
    if c == 0 and not everyone:
        return 0
    r = m if math.isinf(b) else (c + b * m) / (e + b)
    return int(grades * min(r, 1.0) + 0.5)


def rhat_specs(args):
    """--long_rhat: DEN:G:A[:OBJ],... (DEN seen = the sessions' examination
    of d, mu = its expectation under the policy; G grades; A pseudo-exposure,
    or a fitted prior on the observed exposure: eb (beta_prior over every
    query), ebq (one per query), ml (ml_labels' grid NPMLE), dm (dm_labels'
    cross-fitted direct model); OBJ pl (default), floor (a clicked document
    gets at least grade 1), mart2w (pointwise squared loss to r weighted by
    the exposure), shown (unshown candidates left out), all (eb, ml: the
    posterior label for unclicked documents too), ebw (clicked documents
    weighted e / (e + b)), reg (PLRank with --long_reg_flags), regN (with
    the N-th of --long_reg_sets), regx (--long_reg_flags with
    min_data_in_leaf = EXAMS_PER_LEAF / the mean exposure), and
    combinations such as floorreg (seen:1:0:floorreg is the naive
    all-candidates labels with --long_reg_flags))."""
    specs = []
    for part in filter(None, args.long_rhat.split(",")):
        den, g, a, *obj = part.split(":")
        specs.append((den, int(g), a if a in ("eb", "ebq", "dm", "ml", "lg") else float(a),
                      obj[0] if obj else "pl"))
    return specs


def rhat_key(den, g, a, obj="pl"):
    a = a if isinstance(a, str) else f"{a:g}"
    return f"rhat_{den}_g{g}_a{a}" + ("" if obj == "pl" else f"_{obj}")


def obj_text(obj):
    """The table's words for a --long_rhat OBJ."""
    if obj == "pl":
        return ""
    if "reg" not in obj:
        return ", " + obj
    head, tail = obj.split("reg", 1)
    flags = (REG_SETS[int(tail) - 1] if tail.isdigit() and
             int(tail) <= len(REG_SETS) else REG_FLAGS)
    if tail == "x":
        flags = [f for f in REG_FLAGS if "min_data_in_leaf" not in f] + [
            f"--min_data_in_leaf={EXAMS_PER_LEAF} / mean exposure"]
    return ", " + " ".join(([head] if head else []) + flags)


# Run only when named in --long_systems (diagnostics of the remaining gap).
DIAGNOSTICS = [
    ("shown_grades_reg", "true grades of the shown documents, --long_reg_flags"),
    ("true_shown_all_reg", "all candidates, true grade if shown, 0 if not, "
     "--long_reg_flags"),
]


def all_systems(args):
    return SYSTEMS[:-1] + DIAGNOSTICS + [
        (rhat_key(*spec), "all candidates, IPS relevance grades "
         f"({'observed' if spec[0] == 'seen' else 'expected'} exposure, "
         f"G = {spec[1]}, a = {spec[2] if isinstance(spec[2], str) else f'{spec[2]:g}'}"
         f"{obj_text(spec[3])})")
        for spec in rhat_specs(args)
    ] + SYSTEMS[-1:]


def systems(args):
    diagnostics = {key for key, _ in DIAGNOSTICS}
    return (args.long_systems.split(",") if args.long_systems
            else [key for key, _ in all_systems(args)
                  if key not in diagnostics])


def spread(values):
    m = cb.mean(values)
    if len(values) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def long_list_case(runner, args, report, flush):
    """Runs every (logging, sessions) setting on one generated set per seed
    and writes the tables into `report` (flush() after every setting)."""
    REG_FLAGS[:] = args.long_reg_flags.split()
    REG_SETS[:] = [x.split() for x in args.long_reg_sets.split(";") if x]
    seeds = [int(x) for x in args.long_seeds.split(",")]
    betas = [float(x) for x in args.long_betas.split(",")]
    session_counts = [int(x) for x in args.long_sessions.split(",")]
    loggings = [("deterministic", None)] + [
        (f"Plackett-Luce, beta = {b:g}", b) for b in betas]
    results = {}  # (logging, sessions) -> seed -> {system: [ndcg]}, extras
    header = []
    for seed in seeds:
        rng = cb.random.Random(seed)
        prefix = os.path.join(runner.scratch, f"long{seed}")
        runner.run([os.path.join(args.bin, "plrank-datagen"),
                    "--regime=deep_graded", f"--queries={args.long_queries}",
                    "--mean_docs=300", "--docs_sigma=0.05", "--features=40",
                    f"--seed={seed}", f"--out_prefix={prefix}"])
        train_q = cb.read_letor(prefix + ".train")
        test_q = cb.read_letor(prefix + ".test")
        flat_test = os.path.join(runner.scratch, f"long{seed}.test.txt")
        cb.write_letor(flat_test, test_q)
        ceiling = cb.mean(cb.per_query_ndcg(test_q, runner.train_score(
            prefix + ".train", flat_test, f"long{seed}.ceiling", [])[0]))
        raw = cb.logging_ranker(runner, train_q, prefix + ".train",
                                f"long{seed}", 0.05, rng,
                                trees=args.long_logging_trees)
        logging_ndcg = cb.mean(cb.per_query_ndcg(test_q, runner.train_score(
            os.path.join(runner.scratch, f"long{seed}.logging.txt"), flat_test,
            f"long{seed}.logging_test", ["--leaves=7", "--min_data_in_leaf=5"],
            trees=args.long_logging_trees)[0]))
        docs = sum(len(d) for _, d in train_q) / len(train_q)
        header.append(f"seed {seed}: {len(train_q)} training queries of "
                      f"{docs:.0f} candidates, {len(test_q)} test queries, "
                      f"ceiling {ceiling:.4f}, logging ranker {logging_ndcg:.4f}")
        for name, beta in loggings:
            scores = raw if beta is None else [beta * x for x in raw]
            for sessions in session_counts:
                tag = f"long{seed}.{'det' if beta is None else f'b{beta:g}'}.s{sessions}"
                res, coverage, rows, candidates = one_setting(
                    runner, tag, train_q, test_q, flat_test, scores,
                    beta is not None, sessions, 1, args.long_max_ips_weight,
                    rng, args.long_marginal_draws, systems(args),
                    rhat_specs(args))
                cell = results.setdefault((name, sessions), {})
                cell[seed] = {"ceiling": ceiling, "coverage": coverage,
                              "rows": rows, "candidates": candidates, **res}
                with open(os.path.join(runner.scratch, tag + ".json"), "w") as f:
                    json.dump(cell[seed], f)
                sys.stderr.write(f"{tag}: done ({runner.seconds:.0f} s)\n")
                write_tables(report, header, results, loggings, session_counts,
                             args)
                flush()
    return results


def write_tables(report, header, results, loggings, session_counts, args):
    del report[:]
    report.append(
        f"\nReproduce (long lists): `nice -n 10 scripts/bench.sh clicks -- "
        f"--sets=long --long_seeds={args.long_seeds} "
        f"--long_betas={args.long_betas} --long_sessions={args.long_sessions} "
        f"--long_queries={args.long_queries} --trees={args.trees} "
        f"--long_max_ips_weight={args.long_max_ips_weight} "
        f"--long_rhat={args.long_rhat}"
        + (f" --long_reg_flags='{args.long_reg_flags}'"
           if args.long_reg_flags else "") + "` "
        f"(bench/clicks_long_lists.py).\n")
    report.append(__doc__.split("\n\n", 1)[1].strip() + "\n")
    report.append("Sets (plrank-datagen --regime=deep_graded, 60/20/20 split): " +
                  "; ".join(header) + ". eta = 1, top 10 shown. Cells: mean "
                  "share of the ceiling's NDCG@10 over the seeds ± its standard "
                  "deviation; p: paired t-test of the per-query NDCG@10 of all "
                  "seeds' test queries against the session lists' naive "
                  "training.\n")
    chosen = [(key, label) for key, label in all_systems(args)
              if key in systems(args) or key == "session_naive"]
    names = [label for _, label in chosen]
    report.append("| logging | sessions | shown candidates | " +
                  " | ".join(names) + " |")
    report.append("|---|---|---|" + "---|" * len(names))
    for name, _ in loggings:
        for sessions in session_counts:
            cell = results.get((name, sessions))
            if not cell:
                continue
            seeds = sorted(cell)
            coverage = cb.mean([cell[s]["coverage"] for s in seeds])
            row = [name, str(sessions), f"{100 * coverage:.0f} %"]
            base = [v for s in seeds for v in cell[s]["session_naive"]]
            for key, _ in chosen:
                shares = [cb.mean(cell[s][key]) / cell[s]["ceiling"]
                          for s in seeds]
                m, sd = spread(shares)
                text = f"{100 * m:.0f} ± {100 * sd:.0f} %"
                if key != "session_naive":
                    values = [v for s in seeds for v in cell[s][key]]
                    d, p = cb.paired_t(values, base)
                    text += f" ({'+' if d >= 0 else '-'}, p {p:.2g})"
                row.append(text)
            report.append("| " + " | ".join(row) + " |")
