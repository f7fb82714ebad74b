#!/usr/bin/env python3
"""Time per boosting iteration at 8-64 machines, data- and voting-parallel
(bench/results/distributed.md, "Model").

    distributed_model.py [--voting_mb K=MB ...]

Per machine and iteration, no overlap of computation and communication:
  compute   = CPU_US_PER_DOC * N / (CORES * P) + SCAN_MS
              (gradients, histograms and leaf statistics divide by P: each
              machine holds, bins and scores only its own documents; the
              split scan over every feature's bins is the same on every
              machine, for voting too: its local vote scans every feature)
  bandwidth = 2 (P - 1) / P * V / B   (reduce-scatter + allgather)
  latency   = (R * 2 * (P - 1) + r * ceil(log2 P)) * ALPHA
              (each of R large reductions: a reduce-scatter and an
              allgather of P - 1 pairwise messages each; each of r small
              ones, at most 1024 doubles: one allgather, log2 P rounds)
V, R, r: bytes and reductions per iteration (31 leaves, 136 features, 255
bins, Newton gain). Data-parallel: V = 28.6 MB, R = 30 histograms, r = 2
(root sums, leaf statistics). Voting: R = 30 elected-histogram sums, r =
32 (the 30 votes of 2 x 136 doubles too), V measured by
bench/voting_quality.py (rank 0's bytes per iteration at 4 ranks, divided
by 2 (P - 1) / P).
"""

import argparse
import math

CPU_US_PER_DOC = 0.5   # single-process profile: 7 s CPU, 30 iterations, 472K docs
CORES = 12             # 16 cores per machine at 75 % efficiency
SCAN_MS = 15.0 / CORES  # split scan, 15 ms of CPU per iteration (profile fit)
NETWORKS = (("10 Gb/s", 1.25e9, 25e-6), ("100 Gb/s", 12.5e9, 3e-6))
DATA_SETS = (("MSLR-30K-sized", 2.27e6), ("10x larger", 22.7e6))
MACHINES = (1, 8, 16, 32, 64)


def milliseconds(documents, machines, megabytes, reductions, bandwidth, alpha):
    large, small = reductions
    compute = CPU_US_PER_DOC * 1e-6 * documents / (CORES * machines) * 1e3 + SCAN_MS
    if machines == 1:
        return compute, 0.0, 0.0
    share = 2.0 * (machines - 1) / machines
    transfer = share * megabytes * 1e6 / bandwidth * 1e3
    latency = (large * 2 * (machines - 1) +
               small * math.ceil(math.log2(machines))) * alpha * 1e3
    return compute, transfer, latency


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data_mb", type=float, default=28.6)
    parser.add_argument("--voting_mb", action="append", default=[],
                        help="top_k=megabytes per iteration, e.g. 5=4.9")
    args = parser.parse_args()
    modes = [("data-parallel", args.data_mb, (30, 2))]
    for entry in args.voting_mb:
        k, mb = entry.split("=")
        modes.append((f"voting, top_k = {k}", float(mb), (30, 32)))
    print("| data | network | mode | V MB | " +
          " | ".join(f"{p} machine{'s' if p > 1 else ''}" for p in MACHINES) +
          " | fastest |")
    print("|" + " --- |" * 4 + " ---: |" * (len(MACHINES) + 1))
    for data_name, documents in DATA_SETS:
        for network, bandwidth, alpha in NETWORKS:
            for mode, megabytes, reductions in modes:
                cells, best = [], None
                for p in MACHINES:
                    c, t, l = milliseconds(documents, p, megabytes, reductions,
                                           bandwidth, alpha)
                    total = c + t + l
                    if best is None or total < best[1]:
                        best = (p, total)
                    cells.append(f"{total:.0f}" if p == 1 else
                                 f"{total:.0f} ({c:.0f} + {t:.0f} + {l:.0f})")
                print(f"| {data_name} | {network} | {mode} | {megabytes:.1f} | " +
                      " | ".join(cells) + f" | {best[0]} ({best[1]:.0f} ms) |")


if __name__ == "__main__":
    main()
