"""plrank-plot: PLRank's learning curves and pictures as PNG (docs/training.md).

Subcommands: curves (plrank-train --history_out), importance (plrank-eval
--importance), compare (two plrank-eval --scores_out files, per query) and
fig2 (plrank-repro --feature_sweep). matplotlib draws with its Agg backend,
so no display is needed.
"""
