"""Feature importance as plrank-eval --importance prints it."""

from __future__ import annotations

import dataclasses
import subprocess
from typing import List, Optional

from . import build_info
from .cli import PlotError


@dataclasses.dataclass
class Feature:
    index: int             # 1-based, as in LETOR files
    gain: Optional[float]  # None when the model records no split gains
    splits: int
    name: str              # "-" when the model has no name for it


def parse(text: str) -> List[Feature]:
    """Parses the table: '#' comments, a header, then one line per feature:
    feature<TAB>gain<TAB>splits<TAB>name (gain "-" = unavailable)."""
    features = []
    header_seen = False
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if fields[:3] != ["feature", "gain", "splits"]:
                raise PlotError(f"importance line {number}: expected the "
                                f"header 'feature gain splits name': {line!r}")
            header_seen = True
            continue
        if len(fields) != 4:
            raise PlotError(f"importance line {number}: expected 4 "
                            f"tab-separated fields: {line!r}")
        features.append(Feature(int(fields[0]),
                                None if fields[1] == "-" else float(fields[1]),
                                int(fields[2]), fields[3]))
    if not header_seen:
        raise PlotError("no importance table in plrank-eval's output")
    return features


def run_eval(model: str, eval_bin: Optional[str]) -> List[Feature]:
    """Runs plrank-eval --model=<model> --importance and parses its table."""
    program = eval_bin or build_info.program("plrank-eval")
    if program is None:
        raise PlotError("plrank-eval not found (give --eval_bin)")
    result = subprocess.run([program, f"--model={model}", "--importance"],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise PlotError(f"{program} --importance failed: "
                        f"{result.stderr.strip()}")
    return parse(result.stdout)
