"""Text output of the CLI, byte-compatible with the C++ plrank-client.

format_score() writes a double like C++ std::to_chars(double) (shortest
round-trip digits, fixed or scientific whichever is shorter, fixed on a
tie), so `rank --scores_out` files equal plrank-eval's byte for byte.
"""

from __future__ import annotations

import math
import time
from decimal import Decimal
from typing import List

from .types import ModelStatus, ShadowStatus


def format_score(value: float) -> str:
    if math.isnan(value):
        return "-nan" if math.copysign(1.0, value) < 0 else "nan"
    if math.isinf(value):
        return "-inf" if value < 0 else "inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    # repr() gives the shortest digits that round-trip, as to_chars does.
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    # value = 0.digits * 10**point, i.e. `point` digits before the dot.
    point = len(digits) + exponent
    if point <= 0:
        fixed = "0." + "0" * (-point) + digits
    elif point >= len(digits):
        # An integer: to_chars prints its exact digits, same length.
        fixed = str(int(abs(value)))
    else:
        fixed = digits[:point] + "." + digits[point:]
    sci_exponent = point - 1
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    scientific = (f"{mantissa}e{'-' if sci_exponent < 0 else '+'}"
                  f"{abs(sci_exponent):02d}")
    return sign + (fixed if len(fixed) <= len(scientific) else scientific)


def utc_time(unix_seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(unix_seconds))


def format_model_status(status: ModelStatus) -> str:
    """Multi-line description, as the C++ client's FormatModelStatus."""
    default = str(status.default_version) if status.default_version > 0 else "none"
    lines: List[str] = [f"model {status.name}: {len(status.versions)} "
                        f"version(s), default version {default}"]
    for version in status.versions:
        line = f"  version {version.version}  {version.state}"
        if version.labels:
            line += "  labels: " + ",".join(version.labels)
        if version.loaded_unix_seconds > 0:
            line += "  loaded " + utc_time(version.loaded_unix_seconds)
        lines.append(line)
        if version.error:
            lines.append(f"    error: {version.error}")
        if version.promotion_refused:
            lines.append(f"    {version.promotion_refused}")
        meta = version.metadata
        if meta is None:
            continue
        lines.append(
            f"    objective {meta.objective or '?'}, {meta.num_trees} trees, "
            f"{meta.num_features} features, {meta.num_outputs} output(s)"
            f"{', linear weights' if meta.has_linear_weights else ''}")
        if meta.created_unix_seconds > 0:
            lines.append("    created " + utc_time(meta.created_unix_seconds))
        if meta.checksum or meta.file_bytes > 0:
            lines.append(f"    checksum {meta.checksum or '-'}, "
                         f"{meta.file_bytes} bytes")
        # Byte-wise order, like the C++ std::map.
        for name in sorted(meta.training_metrics, key=lambda n: n.encode()):
            lines.append(f"    {name} = {meta.training_metrics[name]:.6f}")
    return "\n".join(lines) + "\n"


def format_shadow_status(shadow: ShadowStatus) -> str:
    """As the C++ client's FormatShadowStatus."""
    if shadow.configured_label:
        line = f"shadow: label {shadow.configured_label}"
        if shadow.shadow_version > 0:
            line += f" (version {shadow.shadow_version})"
    else:
        line = f"shadow: version {shadow.configured_version}"
    line += f", fraction {shadow.fraction:g}"
    if shadow.error:
        line += f"; unavailable: {shadow.error}"
    lines = [line]
    for pair in shadow.comparisons:
        target = str(pair.shadow_version) if pair.shadow_version > 0 else "none"
        line = (f"  serving {pair.serving_version} -> shadow {target}: "
                f"{pair.scored} scored, {pair.dropped} dropped, "
                f"{pair.failed} failed")
        if pair.scored > 0:
            line += (f"; mean tau {pair.mean_kendall_tau:.4f} over "
                     f"{pair.tau_count}, top-1 agreement "
                     f"{pair.top1_agreement:.4f}, mean top-10 overlap "
                     f"{pair.mean_top10_overlap:.4f}")
        lines.append(line)
        if pair.last_error:
            lines.append(f"    last error: {pair.last_error}")
    return "\n".join(lines) + "\n"


def format_model_list(models: List[ModelStatus]) -> str:
    lines = [f"{len(models)} model(s)"]
    for model in models:
        versions = " ".join(f"{v.version}:{v.state}" for v in model.versions)
        default = str(model.default_version) if model.default_version > 0 else "none"
        lines.append(f"{model.name:<20} default {default:<6} versions "
                     f"{versions or '-'}")
    return "\n".join(lines) + "\n"
