#!/usr/bin/env python3
"""Paired t-tests between any two systems of the click benchmark's long
lists, from the per-setting JSON files a run leaves in its scratch
directory (bench/clicks_long_lists.py writes <scratch>/long<seed>.<logging>
.s<sessions>.json: every system's per-test-query NDCG@10 and the ceiling).

  python3 bench/clicks_long_pairs.py SCRATCH REFERENCES SYSTEMS

REFERENCES, SYSTEMS: comma-separated system keys (e.g. all_naive,all_ips
and rhat_seen_g4_a0). Prints, per setting, each system's mean share of the
ceiling over the seeds and its mean NDCG@10 difference to each reference
over all seeds' test queries with the two-sided paired p.
"""

import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import clicks_bench as cb  # noqa: E402
import json  # noqa: E402


def main():
    scratch, refs, keys = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    for log in ["det", "b1", "b4"]:
        for sessions in [10, 100]:
            files = sorted(glob.glob(f"{scratch}/long*.{log}.s{sessions}.json"))
            cells = [json.load(open(f)) for f in files]
            if not cells:
                continue
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
