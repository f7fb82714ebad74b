"""The four pictures, drawn with matplotlib's Agg backend (no display)."""

from __future__ import annotations

import json
import math
import os
from typing import List, Optional, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .cli import PlotError  # noqa: E402
from .importance import Feature  # noqa: E402


def _save(figure, out: str) -> None:
    """Writes the PNG atomically: a temporary file beside `out`, renamed."""
    figure.tight_layout()
    temporary = f"{out}.tmp.{os.getpid()}"
    try:
        figure.savefig(temporary, format="png", dpi=100)
        os.replace(temporary, out)
    finally:
        plt.close(figure)
        if os.path.exists(temporary):
            os.remove(temporary)


def _number(value: Optional[float]) -> float:
    return math.nan if value is None else float(value)


def _load_json(path: str) -> dict:
    with open(path, encoding="utf-8") as text:
        try:
            return json.load(text)
        except json.JSONDecodeError as error:
            raise PlotError(f"{path}: not JSON: {error}")


def curves(history_path: str, out: str) -> str:
    doc = _load_json(history_path)
    records = doc["history"]
    if not records:
        raise PlotError(f"{history_path}: the history is empty")
    iterations = [r["iteration"] for r in records]
    figure, (loss_axes, ndcg_axes) = plt.subplots(1, 2, figsize=(11, 4.2))
    for part, queries in (("train", doc["train_queries"]),
                          ("valid", doc["valid_queries"])):
        losses = [_number(r[f"{part}_loss"]) / max(queries, 1)
                  for r in records]
        if queries and not all(math.isnan(v) for v in losses):
            loss_axes.plot(iterations, losses, label=part,
                           linestyle="--" if part == "train" else "-")
    loss_axes.set(title=f"{doc['objective']} loss per query",
                  xlabel="iteration", ylabel="loss / queries")
    for index, metric in enumerate(doc["metrics"]):
        color = f"C{index % 10}"
        for part, style in (("train", "--"), ("valid", "-")):
            values = [_number(r[part].get(metric)) for r in records]
            if not all(math.isnan(v) for v in values):
                ndcg_axes.plot(iterations, values, style, color=color,
                               label=f"{part} {metric}")
    best = doc.get("best_iteration") or 0
    if doc.get("valid_queries") and 0 < best:
        for axes in (loss_axes, ndcg_axes):
            axes.axvline(best, color="grey", linewidth=0.8, linestyle=":")
    ndcg_axes.set(title="NDCG", xlabel="iteration", ylabel="NDCG")
    for axes in (loss_axes, ndcg_axes):
        if axes.lines:
            axes.legend(fontsize="small")
        else:
            axes.text(0.5, 0.5, "not recorded", ha="center",
                      transform=axes.transAxes)
    _save(figure, out)
    return (f"wrote {out} ({len(records)} iterations, "
            f"{len(doc['metrics'])} cut-offs, best iteration {best})")


def importance(table: List[Feature], model: str, kind: str, top: int,
               out: str) -> str:
    if kind == "gain" and any(f.gain is None for f in table):
        raise PlotError(f"{model} records no split gains; use --kind=split")
    value = (lambda f: f.gain) if kind == "gain" else (lambda f: f.splits)
    chosen = sorted(table, key=lambda f: (-value(f), f.index))[:top]
    names = [f"{f.index}" + ("" if f.name == "-" else f" {f.name}")
             for f in chosen]
    figure, axes = plt.subplots(figsize=(7, 1.5 + 0.28 * len(chosen)))
    axes.barh(range(len(chosen)), [value(f) for f in chosen])
    axes.set_yticks(range(len(chosen)), names, fontsize="small")
    axes.invert_yaxis()
    axes.set(title=f"feature importance of {os.path.basename(model)}",
             xlabel="summed split gain" if kind == "gain" else "splits",
             ylabel="feature")
    _save(figure, out)
    return f"wrote {out} (top {len(chosen)} of {len(table)} features by {kind})"


def compare(values: Sequence[Sequence[float]], labels: Sequence[str], k: int,
            out: str) -> str:
    a, b = values
    if not a:
        raise PlotError("no query to compare")
    differences = sorted((x - y for x, y in zip(a, b)), reverse=True)
    better = sum(d > 0 for d in differences)
    worse = sum(d < 0 for d in differences)
    figure, axes = plt.subplots(figsize=(8, 4))
    axes.bar(range(len(differences)), differences, width=1.0,
             color=["C0" if d >= 0 else "C3" for d in differences])
    axes.axhline(0, color="black", linewidth=0.8)
    axes.set(title=f"NDCG@{k}: {labels[0]} minus {labels[1]}, per query "
             f"({better} better, {worse} worse, "
             f"{len(differences) - better - worse} equal)",
             xlabel="queries, sorted by difference",
             ylabel=f"NDCG@{k} difference")
    _save(figure, out)
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    return (f"wrote {out} ({len(differences)} queries; mean NDCG@{k} "
            f"{labels[0]} {mean(a):.6f}, {labels[1]} {mean(b):.6f})")


def fig2(sweep_path: str, out: str) -> str:
    doc = _load_json(sweep_path)
    figure, axes = plt.subplots(figsize=(6, 4))
    for line in doc["series"]:
        points = [(p["features"], _number(p[doc["metric"]]))
                  for p in line["points"]]
        axes.plot([x for x, _ in points], [y for _, y in points], marker="o",
                  label=line["label"])
    axes.set_xticks(doc["feature_counts"])
    folds = len(doc["folds"])
    axes.set(title=f"test {doc['metric']} vs number of features "
             f"({folds} fold{'s' if folds != 1 else ''})",
             xlabel="number of features (the first N)",
             ylabel=f"test {doc['metric']}")
    axes.legend()
    _save(figure, out)
    return (f"wrote {out} ({len(doc['series'])} systems, "
            f"{len(doc['feature_counts'])} feature counts)")
