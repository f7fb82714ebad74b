#!/usr/bin/env python3
"""Paired t-tests between any two systems of the click benchmark's long
lists, from the per-setting JSON files a run leaves in its scratch
directory (bench/clicks_long_lists.py writes <scratch>/long<seed>.<logging>
.s<sessions>.json: every system's per-test-query NDCG@10 and the ceiling).

  python3 bench/clicks_long_pairs.py SCRATCH REFERENCES SYSTEMS [--markdown]

REFERENCES, SYSTEMS: comma-separated system keys (e.g. all_naive,all_ips
and rhat_seen_g4_a0). Prints, per setting, each system's mean share of the
ceiling over the seeds and its mean NDCG@10 difference to each reference
over all seeds' test queries with the two-sided paired p. --markdown: one
table row per setting instead, each system's cell "mean ± std over the
seeds % (difference to the first reference, p)".
"""

import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clicks_bench as cb  # noqa: E402
import json  # noqa: E402


NAMES = {"det": "deterministic", "b1": "Plackett-Luce, beta = 1",
         "b4": "Plackett-Luce, beta = 4"}


def settings(scratch):
    """(logging, sessions, the seeds' cells) of every setting run."""
    for log in ["det", "b1", "b4"]:
        for sessions in [10, 100]:
            files = sorted(glob.glob(f"{scratch}/long*.{log}.s{sessions}.json"))
            cells = [json.load(open(f)) for f in files]
            if cells:
                yield log, sessions, cells


def markdown(scratch, ref, keys):
    print("| logging | sessions | " + " | ".join(keys) + " |")
    print("|---|---|" + "---|" * len(keys))
    for log, sessions, cells in settings(scratch):
        row = [NAMES[log], str(sessions)]
        for key in keys:
            shares = [100 * cb.mean(c[key]) / c["ceiling"] for c in cells]
            m = cb.mean(shares)
            sd = (sum((x - m) ** 2 for x in shares) / (len(shares) - 1)) ** 0.5 \
                if len(shares) > 1 else 0.0
            text = f"{m:.1f} ± {sd:.1f} %"
            if key != ref:
                d, p = cb.paired_t([v for c in cells for v in c[key]],
                                   [v for c in cells for v in c[ref]])
                text += f" ({d:+.3f}, p {p:.2g})"
            row.append(text)
        print("| " + " | ".join(row) + " |")


def main():
    scratch, refs, keys = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    if "--markdown" in sys.argv[4:]:
        markdown(scratch, refs[0], keys)
        return
    for log, sessions, cells in settings(scratch):
        print(f"{log} {sessions} sessions ({len(cells)} seeds)")
        for key in keys:
            values = [v for c in cells for v in c[key]]
            share = cb.mean([cb.mean(c[key]) / c["ceiling"] for c in cells])
            text = f"  {key} {100 * share:.1f} %"
            for ref in refs:
                d, p = cb.paired_t(values, [v for c in cells for v in c[ref]])
                text += f"; vs {ref} {d:+.4f} (p {p:.2g})"
            print(text)


if __name__ == "__main__":
    main()
