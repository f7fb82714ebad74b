"""Command line of plrank-plot: one subcommand per picture."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from . import build_info


class PlotError(Exception):
    """A bad input; printed as "plrank-plot: <message>" with exit code 1."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="plrank-plot",
        description="Draws PLRank's learning curves and pictures to PNG "
        "(matplotlib, Agg backend: no display needed).")
    parser.add_argument("--version", action="version",
                        version=build_info.version_line())
    commands = parser.add_subparsers(dest="command", required=True,
                                     metavar="COMMAND")
    curves = commands.add_parser(
        "curves", help="loss and NDCG@k vs iteration, train and valid, "
        "from plrank-train --history_out")
    curves.add_argument("--history", required=True, help="history.json")
    curves.add_argument("--out", required=True, help="PNG to write")

    importance = commands.add_parser(
        "importance", help="feature importance of a model, from "
        "plrank-eval --importance")
    importance.add_argument("--model", required=True, help="model.pb")
    importance.add_argument("--out", required=True, help="PNG to write")
    importance.add_argument("--kind", choices=("gain", "split"),
                            default="gain", help="summed split gain or "
                            "split count (default gain)")
    importance.add_argument("--top", type=int, default=20,
                            help="the N most important features (default 20)")
    importance.add_argument("--eval_bin", default=None,
                            help="plrank-eval to run (default: the one "
                            "beside plrank-plot)")

    compare = commands.add_parser(
        "compare", help="per-query NDCG@k differences of two score files, "
        "sorted (the paper's Fig. 3)")
    compare.add_argument("--data", required=True,
                         help="the LETOR file both score files score")
    compare.add_argument("--scores", required=True, nargs=2,
                         metavar=("A", "B"), help="two plrank-eval "
                         "--scores_out files")
    compare.add_argument("--labels", nargs=2, metavar=("A", "B"),
                         default=None, help="legend names (default: the "
                         "score files' names)")
    compare.add_argument("--k", type=int, default=10,
                         help="NDCG cut-off (default 10)")
    compare.add_argument("--empty_query_ndcg", choices=("one", "zero", "skip"),
                         default="one", help="NDCG of a query without "
                         "relevant documents, as plrank-eval's flag")
    compare.add_argument("--out", required=True, help="PNG to write")

    fig2 = commands.add_parser(
        "fig2", help="test NDCG@10 of the linear rankers vs the number of "
        "features, from plrank-repro --feature_sweep (the paper's Fig. 2)")
    fig2.add_argument("--sweep", required=True, help="fig2.json")
    fig2.add_argument("--out", required=True, help="PNG to write")
    return parser


def _run(args: argparse.Namespace) -> str:
    # Imported here so that --help and --version work without matplotlib.
    from . import figures, importance, per_query
    if args.command == "curves":
        return figures.curves(args.history, args.out)
    if args.command == "importance":
        if args.top < 1:
            raise PlotError("--top must be >= 1")
        table = importance.run_eval(args.model, args.eval_bin)
        return figures.importance(table, args.model, args.kind, args.top,
                                  args.out)
    if args.command == "compare":
        if args.k < 1:
            raise PlotError("--k must be >= 1")
        labels = args.labels or [os.path.basename(p) for p in args.scores]
        values = per_query.compare(args.data, args.scores, args.k,
                                   args.empty_query_ndcg)
        return figures.compare(values, labels, args.k, args.out)
    return figures.fig2(args.sweep, args.out)


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        print(_run(args))
    except ImportError as error:
        print(f"plrank-plot: {error} (install python3-matplotlib and "
              "python3-numpy: scripts/setup.sh)", file=sys.stderr)
        return 1
    except KeyError as error:
        print(f"plrank-plot: the input has no {error.args[0]!r} (not the "
              "JSON this subcommand reads?)", file=sys.stderr)
        return 1
    except (PlotError, OSError, ValueError) as error:
        print(f"plrank-plot: {error}", file=sys.stderr)
        return 1
    return 0
