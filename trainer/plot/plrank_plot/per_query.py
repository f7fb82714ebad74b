"""Per-query NDCG@k of score files, as plrank-eval computes it.

The rules follow core/metrics/ranking_metrics.cc: gain 2^label - 1,
discount 1/log2(2 + rank); equal scores rank the lower label first (then
input order) and NaN scores last; a query without a relevant document
(no label > 0) counts 1, 0 or is skipped (--empty_query_ndcg).
"""

from __future__ import annotations

import math
import os
from typing import Dict, List, Sequence, Tuple

from .cli import PlotError


def read_queries(path: str) -> List[Tuple[List[int], List[int]]]:
    """(labels, line indices) per query, queries in first-appearance order.

    Data lines are "<label> qid:<id> ...", '#' starts a comment, blank lines
    are skipped; without qid:, <path>.query (LightGBM) or <path>.group
    (XGBoost) gives the documents per query."""
    labels: List[int] = []
    qids: List[str] = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            try:
                labels.append(int(float(tokens[0])))
            except ValueError:
                raise PlotError(f"{path}:{number}: bad label {tokens[0]!r}")
            qid = tokens[1] if len(tokens) > 1 else ""
            qids.append(qid[4:] if qid.startswith("qid:") else "")
    if any(qids) and not all(qids):
        raise PlotError(f"{path}: some lines have qid: and some do not")
    if not all(qids):
        qids = _qids_from_sidecar(path, len(labels))
    groups: Dict[str, Tuple[List[int], List[int]]] = {}
    for line, (label, qid) in enumerate(zip(labels, qids)):
        group = groups.setdefault(qid, ([], []))
        group[0].append(label)
        group[1].append(line)
    return list(groups.values())


def _qids_from_sidecar(path: str, documents: int) -> List[str]:
    for suffix in (".query", ".group"):
        if os.path.exists(path + suffix):
            with open(path + suffix, encoding="utf-8") as sizes:
                counts = [int(token) for token in sizes.read().split()]
            if sum(counts) != documents:
                raise PlotError(f"{path}{suffix}: {sum(counts)} documents "
                                f"for {documents} data lines")
            return [str(q) for q, count in enumerate(counts)
                    for _ in range(count)]
    raise PlotError(f"{path}: no qid: and no {path}.query or .group file")


def read_scores(path: str) -> List[float]:
    """One score per line, as plrank-eval --scores_out writes them."""
    with open(path, encoding="utf-8") as lines:
        try:
            return [float(line) for line in lines if line.strip()]
        except ValueError as error:
            raise PlotError(f"{path}: {error}")


def ndcg(scores: Sequence[float], labels: Sequence[int], k: int,
         empty: str) -> float:
    if not any(label > 0 for label in labels):
        return {"one": 1.0, "zero": 0.0, "skip": math.nan}[empty]
    top = min(k, len(labels))
    order = sorted(range(len(labels)), key=lambda i: (
        math.isnan(scores[i]), -scores[i] if not math.isnan(scores[i]) else 0,
        labels[i], i))
    gain = lambda label: 2.0 ** label - 1.0  # noqa: E731
    dcg = sum(gain(labels[i]) / math.log2(2 + r)
              for r, i in enumerate(order[:top]))
    ideal = sum(gain(label) / math.log2(2 + r) for r, label in
                enumerate(sorted(labels, reverse=True)[:top]))
    return dcg / ideal


def compare(data: str, score_paths: Sequence[str], k: int,
            empty: str) -> List[List[float]]:
    """[file][query] NDCG@k of each score file on `data` (skipped queries
    left out of every file)."""
    queries = read_queries(data)
    documents = sum(len(lines) for _, lines in queries)
    per_file = []
    for path in score_paths:
        scores = read_scores(path)
        if len(scores) != documents:
            raise PlotError(f"{path}: {len(scores)} scores for {documents} "
                            f"data lines of {data}")
        per_file.append([ndcg([scores[i] for i in lines], labels, k, empty)
                         for labels, lines in queries])
    kept = [q for q in range(len(queries))
            if not any(math.isnan(values[q]) for values in per_file)]
    return [[values[q] for q in kept] for values in per_file]
