"""Python documents -> plrank.v1.Document messages.

A document is one of
  * a sequence of numbers (list, tuple, array.array, a numpy row, any
    iterable of numbers): dense features, feature i at position i
    (LETOR's index 1 is position 0), exactly the model's feature count,
    NaN = missing;
  * a mapping {0-based feature index: value}: sparse features, absent = 0
    (indices are sent sorted; the server checks the range);
  * a plrank.v1.Document message, sent as is (its own id kept).
Ids default to the document's position in the request ("0", "1", ...).
Only the Python shape is checked here; feature counts, infinities and
limits are the server's to check, so its INVALID_ARGUMENT messages apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable, Optional, Sequence

from ._stubs import ranker_pb2


def _check_numbers(values: list, where: str) -> None:
    for value in values:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
            raise TypeError(f"{where}: feature value {value!r} is not a number")


def fill_document(document: Any, out, default_id: str) -> None:
    """Writes one document into the (empty) Document message `out`."""
    if isinstance(document, ranker_pb2.Document):
        out.CopyFrom(document)
        if not out.id:
            out.id = default_id
        return
    out.id = default_id
    where = f"document {default_id}"
    if isinstance(document, Mapping):
        items = sorted(document.items())
        for index, _ in items:
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise TypeError(f"{where}: sparse feature index {index!r} is not "
                                "a non-negative integer (0-based)")
        values = [value for _, value in items]
        _check_numbers(values, where)
        out.sparse.indices.extend(index for index, _ in items)
        out.sparse.values.extend(float(value) for value in values)
        return
    if isinstance(document, (str, bytes)) or not isinstance(document, Iterable):
        raise TypeError(f"{where}: expected a sequence of feature values, a "
                        f"mapping index -> value or a plrank.v1.Document, got "
                        f"{type(document).__name__}")
    values = list(document)
    _check_numbers(values, where)
    # Set the oneof even for an empty row, so the server reports the width.
    out.dense.SetInParent()
    out.dense.values.extend(float(value) for value in values)


def fill_documents(documents: Iterable[Any], repeated,
                   ids: Optional[Sequence[str]] = None) -> int:
    """Appends every document to a repeated Document field; returns the count."""
    count = 0
    for position, document in enumerate(documents):
        default_id = str(ids[position]) if ids is not None else str(position)
        fill_document(document, repeated.add(), default_id)
        count += 1
    if ids is not None and len(ids) != count:
        raise ValueError(f"{len(ids)} ids for {count} documents")
    return count
