"""A small, strict LETOR reader for the CLI (and tests).

The C++ reader (core/data/letor_reader.cc) is the reference; this one reads
the common subset and refuses everything else with "<file>:<line>: why":

    <label> qid:<id> <index>:<value> ... [# comment]

  * label: an integer 0..31 ("2.0" is accepted as 2, like the C++ reader);
  * qid: required, and each query's lines contiguous (no regrouping, no
    LightGBM .query files: use the C++ plrank-client for those);
  * index: 1-based, at most `num_features` when given (else the largest
    index seen is the width), each at most once per line;
  * value: a decimal number, rounded once to float32 exactly as the C++
    reader rounds it; nan / NULL (any case) = missing (NaN); infinities
    and values beyond float range are errors; absent features are 0.
Documents keep their input order; a document's id is its 0-based index
among the file's data lines, as the C++ client numbers them.
"""

from __future__ import annotations

import dataclasses
import math
import re
import struct
from fractions import Fraction
from typing import List, Optional

MAX_LABEL = 31
MAX_FEATURE_INDEX = 1 << 24

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")
_MISSING = {"nan", "+nan", "-nan", "null"}
_INFINITE = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
_SPACES = re.compile(r"[ \t\r]+")


class LetorError(ValueError):
    """A file that does not parse; the message starts with "<file>:<line>: "."""


@dataclasses.dataclass
class LetorQuery:
    query_id: str
    rows: List[List[float]]  # dense, num_features values each (NaN = missing)
    labels: List[int]
    first_document: int      # 0-based data-line index of rows[0]

    @property
    def ids(self) -> List[str]:
        return [str(self.first_document + i) for i in range(len(self.rows))]


@dataclasses.dataclass
class LetorFile:
    path: str
    num_features: int
    queries: List[LetorQuery]

    @property
    def num_documents(self) -> int:
        return sum(len(q.rows) for q in self.queries)


def _float32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _from_float32_bits(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def to_float32(text: str) -> float:
    """Correctly rounded float32 of a decimal, as a Python float.

    float() rounds to double first; a second rounding to float32 can differ
    from direct rounding only when the double lands exactly on a midpoint
    between two float32 values, which is then settled with exact fractions.
    Raises OverflowError beyond float32 range.
    """
    wide = float(text)
    narrow = struct.unpack("<f", struct.pack("<f", wide))[0]
    if narrow == wide or wide == 0.0:
        return narrow
    bits = _float32_bits(narrow)
    # Neighbour on the far side of `wide` (same sign: magnitude +-1 ulp).
    away = (abs(wide) > abs(narrow))
    neighbour = _from_float32_bits(bits + 1 if away else bits - 1)
    if math.isinf(neighbour) or (narrow + neighbour) / 2 != wide:
        return narrow
    exact = abs(Fraction(text))
    if exact == abs(Fraction(wide)):
        return narrow  # a true tie: struct already rounded to even
    exact_is_larger = exact > abs(Fraction(wide))
    return neighbour if exact_is_larger == away else narrow


def _parse_value(token: str, index: int, where: str) -> float:
    lowered = token.lower()
    if lowered in _MISSING:
        return math.nan
    if lowered in _INFINITE:
        raise LetorError(f"{where}: value '{token}' of feature {index} is "
                         "infinite; write nan for a missing value")
    if not _NUMBER.match(token):
        if not token:
            raise LetorError(f"{where}: feature {index} has no value")
        raise LetorError(f"{where}: bad value '{token[:40]}' for feature {index}")
    try:
        return to_float32(token)
    except OverflowError:
        raise LetorError(f"{where}: value '{token[:40]}' of feature {index} is "
                         "outside float range") from None


def _parse_label(token: str, where: str) -> int:
    if not _NUMBER.match(token):
        raise LetorError(f"{where}: bad label '{token[:40]}'; expected an "
                         f"integer 0..{MAX_LABEL}")
    value = float(token)
    if value != math.floor(value):
        raise LetorError(f"{where}: label '{token[:40]}' is not an integer")
    if not 0 <= value <= MAX_LABEL:
        raise LetorError(f"{where}: label '{token[:40]}' outside 0..{MAX_LABEL}")
    return int(value)


def parse_letor(text: str, name: str,
                num_features: Optional[int] = None) -> LetorFile:
    """Parses LETOR text; `name` prefixes error messages."""
    if num_features is not None and num_features < 0:
        raise ValueError(f"num_features must be >= 0, got {num_features}")
    width_limit = num_features or MAX_FEATURE_INDEX
    queries: List[LetorQuery] = []
    sparse_rows: List[dict] = []
    seen_lines = {}  # query id -> (first line, last line)
    max_index = 0
    line_number = 0
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()  # the final newline ends a line; it does not start one
    for line_number, line in enumerate(lines, start=1):
        where = f"{name}:{line_number}"
        tokens = [t for t in _SPACES.split(line.split("#", 1)[0]) if t]
        if not tokens:
            continue
        label = _parse_label(tokens[0], where)
        if len(tokens) < 2 or not tokens[1].startswith("qid:"):
            raise LetorError(f"{where}: expected qid:<id> after the label (this "
                             "reader needs the qid form; the C++ plrank-client "
                             "also reads LightGBM .query files)")
        qid = tokens[1][4:]
        if not qid:
            raise LetorError(f"{where}: empty qid")
        if not queries or queries[-1].query_id != qid:
            if qid in seen_lines:
                first, last = seen_lines[qid]
                raise LetorError(
                    f"{where}: query '{qid}' appears again, but its lines "
                    f"{name}:{first}..{last} are separated from this one by "
                    "other queries; group each query's lines together")
            queries.append(LetorQuery(qid, [], [], len(sparse_rows)))
            seen_lines[qid] = (line_number, line_number)
        seen_lines[qid] = (seen_lines[qid][0], line_number)
        row = {}
        for token in tokens[2:]:
            index_text, colon, value_text = token.partition(":")
            if not colon:
                raise LetorError(f"{where}: expected <index>:<value>, got "
                                 f"'{token[:40]}'")
            if not index_text.isdigit() or not index_text.isascii():
                raise LetorError(f"{where}: bad feature index '{index_text[:40]}'")
            index = int(index_text)
            if index == 0:
                raise LetorError(f"{where}: feature index 0 is not positive; "
                                 "indices start at 1")
            if index > width_limit:
                limit = (f"above --num_features={num_features}" if num_features
                         else f"is too large (limit {MAX_FEATURE_INDEX})")
                raise LetorError(f"{where}: feature index {index} {limit}")
            if index in row:
                raise LetorError(f"{where}: feature {index} repeated")
            row[index] = _parse_value(value_text, index, where)
            max_index = max(max_index, index)
        sparse_rows.append(row)
        queries[-1].labels.append(label)
    if not sparse_rows:
        raise LetorError(f"{name}: no documents ({line_number} lines, all "
                         "blank or comments)")
    width = num_features or max_index
    rows = iter(sparse_rows)
    for query in queries:
        for _ in query.labels:
            dense = [0.0] * width
            for index, value in next(rows).items():
                dense[index - 1] = value
            query.rows.append(dense)
    return LetorFile(name, width, queries)


def read_letor(path: str, num_features: Optional[int] = None) -> LetorFile:
    """Reads a LETOR file (UTF-8); see parse_letor."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as error:
        raise LetorError(f"{path}: cannot read: {error.strerror}") from None
    except UnicodeDecodeError:
        raise LetorError(f"{path}: not UTF-8 text") from None
    return parse_letor(text, path, num_features)
