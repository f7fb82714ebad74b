"""The small LETOR reader and the C++-compatible number formatting."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import pytest

from plrank_client.formatting import format_score, format_shadow_status
from plrank_client.types import ShadowComparison, ShadowStatus
from plrank_client.letor import LetorError, parse_letor, read_letor, to_float32


def test_reads_queries_labels_and_missing_values():
    text = ("# header comment\n"
            "2 qid:a 1:0.5 3:-1e-3 # trailing comment\n"
            "\n"
            "0 qid:a 2:nan 3:NULL\n"
            "1.0 qid:b\t1:+7\r\n")
    data = parse_letor(text, "t.txt")
    assert data.num_features == 3 and data.num_documents == 3
    a, b = data.queries
    assert (a.query_id, a.labels, a.ids) == ("a", [2, 0], ["0", "1"])
    assert a.rows[0] == [0.5, 0.0, to_float32("-1e-3")]
    assert a.rows[1][0] == 0.0 and math.isnan(a.rows[1][1]) and math.isnan(a.rows[1][2])
    assert (b.query_id, b.labels, b.ids, b.rows) == ("b", [1], ["2"], [[7.0, 0.0, 0.0]])
    assert parse_letor(text, "t.txt", num_features=5).queries[1].rows[0] == [7.0, 0, 0, 0, 0]


@pytest.mark.parametrize("text, line, message", [
    ("1 qid:1 1:1\nx qid:1 1:1\n", 2, "bad label 'x'"),
    ("1.5 qid:1 1:1\n", 1, "is not an integer"),
    ("32 qid:1 1:1\n", 1, "outside 0..31"),
    ("1 1:1\n", 1, "expected qid:"),
    ("1 qid: 1:1\n", 1, "empty qid"),
    ("1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n", 3, "t.txt:1..1 are separated"),
    ("1 qid:1 0:1\n", 1, "feature index 0 is not positive"),
    ("1 qid:1 x:1\n", 1, "bad feature index 'x'"),
    ("1 qid:1 1:1 1:2\n", 1, "feature 1 repeated"),
    ("1 qid:1 1:inf\n", 1, "infinite"),
    ("1 qid:1 1:1e39\n", 1, "outside float range"),
    ("1 qid:1 1:1_0\n", 1, "bad value '1_0'"),
    ("1 qid:1 1:\n", 1, "feature 1 has no value"),
    ("1 qid:1 1\n", 1, "expected <index>:<value>"),
    ("1 qid:1 9:1\n", 1, "feature index 9 above --num_features=8"),
])
def test_errors_name_file_and_line(text, line, message):
    with pytest.raises(LetorError) as caught:
        parse_letor(text, "t.txt", num_features=8)
    assert str(caught.value).startswith(f"t.txt:{line}: ")
    assert message in str(caught.value)


def test_empty_and_missing_files(tmp_path):
    with pytest.raises(LetorError, match="no documents"):
        parse_letor("# nothing\n\n", "e.txt")
    with pytest.raises(LetorError, match="cannot read"):
        read_letor(str(tmp_path / "missing.txt"))


def _float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def test_float32_rounding_is_correct_at_double_midpoints():
    # 1 + 2^-24 is the midpoint between float32 1 and 1 + 2^-23. A decimal
    # just above it rounds to that double, which then rounds to even (1).
    mid = Fraction(1) + Fraction(1, 2 ** 24)
    decimal = "1.0000000596046447753906250000000000000001"
    assert Fraction(decimal) > mid and float(decimal) == float(mid)
    assert _float32(float(decimal)) == 1.0          # double rounding: wrong
    assert to_float32(decimal) == 1 + 2 ** -23      # direct rounding: right
    assert to_float32("1.00000005960464477539062499999999") == 1.0
    assert to_float32("1.000000059604644775390625") == 1.0  # true tie -> even
    assert to_float32("-1.0000000596046447753906250000000000000001") == -(1 + 2 ** -23)
    assert to_float32("0.1") == _float32(0.1)


@pytest.mark.parametrize("value, text", [
    # Expected strings are what C++ std::to_chars(double) writes.
    (0.0, "0"), (-0.0, "-0"), (1.0, "1"), (100.0, "100"), (1e16, "1e+16"),
    (1e15, "1e+15"), (1e22, "1e+22"), (123456789012345680000.0, "123456789012345683968"),
    (0.0001, "1e-04"), (0.00012345, "0.00012345"), (0.00012, "0.00012"),
    (1e-5, "1e-05"), (1.5e-7, "1.5e-07"), (-0.21290063666708806, "-0.21290063666708806"),
    (0.5, "0.5"), (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    (12345.678, "12345.678"), (1234567.0, "1234567"), (0.001, "0.001"),
])
def test_format_score_matches_to_chars(value, text):
    assert format_score(value) == text


def test_format_shadow_status():
    # The layout of the C++ client's FormatShadowStatus (whose output the
    # shadow scoring integration test checks).
    shadow = ShadowStatus(
        configured_version=0, configured_label="candidate", fraction=0.25,
        shadow_version=3, error="", comparisons=[
            ShadowComparison(1, 3, scored=10, dropped=2, failed=1,
                             mean_kendall_tau=0.142857, tau_count=9,
                             top1_agreement=0.5, mean_top10_overlap=0.9,
                             last_error="bad document"),
            ShadowComparison(2, 0, scored=0, dropped=0, failed=4,
                             mean_kendall_tau=0.0, tau_count=0,
                             top1_agreement=0.0, mean_top10_overlap=0.0,
                             last_error="")])
    assert format_shadow_status(shadow) == (
        "shadow: label candidate (version 3), fraction 0.25\n"
        "  serving 1 -> shadow 3: 10 scored, 2 dropped, 1 failed; mean tau "
        "0.1429 over 9, top-1 agreement 0.5000, mean top-10 overlap 0.9000\n"
        "    last error: bad document\n"
        "  serving 2 -> shadow none: 0 scored, 0 dropped, 4 failed\n")
    unresolved = ShadowStatus(9, "", 1.0, 0, "version 9 is not loaded", [])
    assert format_shadow_status(unresolved) == (
        "shadow: version 9, fraction 1; unavailable: version 9 is not loaded\n")
