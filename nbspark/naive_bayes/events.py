"""Naive Bayes events: what one document or table row counts, and the count rows the sums become.

The Spark side flatMaps each training record through ``doc_events`` / ``row_events``, sums by key
with ``add_values`` and writes ``event_row``s (``COUNT_DDL``), from which
``naive_bayes.model.build_nb_model`` builds a model. Pure Python.

Events (Cohen's v2 for text), keys ``(event, label, feature, value)``:

=========  =================================================  ==========================
event      meaning                                            value summed
=========  =================================================  ==========================
``Y=ANY``  one per (record, label)                            1
``Y``      ``Y=y``                                            1
``YX``     multinomial: ``Y=y ∧ X=w``; Bernoulli: documents   token count / 1 / 1
           of y containing w; categorical: ``Y=y ∧ X_j=v``
``YX=ANY`` multinomial: ``Y=y ∧ X=ANY`` (tokens of class y)   token count
``YG``     Gaussian: per (y, feature j)                       (n, Σx, Σx²)
=========  =================================================  ==========================
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence

from nbspark.inputs.spec import is_decimal_comma
from nbspark.naive_bayes.count_table import Y_ANY, YG, YX, YX_ANY, Y

__all__ = [
    "COUNT_DDL",
    "add_values",
    "binary_cell",
    "doc_events",
    "event_row",
    "number_cell",
    "row_events",
    "scaled",
]


#: The count-row layout of naive Bayes models (``n`` for counts; Gaussian rows add Σx, Σx²).
COUNT_DDL = (
    "event STRING NOT NULL, label STRING, feature STRING, value STRING, "
    "n BIGINT NOT NULL, sum DOUBLE, sumsq DOUBLE"
)


def add_values(a, b):
    """The reduceByKey function: ints add; Gaussian (n, Σx, Σx²) triples add element-wise."""
    if type(a) is int:
        return a + b
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def scaled(value, k: int):
    """An event's value counted ``k`` times (an example of weight k): ints and each part of a
    Gaussian (n, Σx, Σx²) triple times k, as ``add_values`` of k copies gives."""
    if type(value) is int:
        return value * k
    return (value[0] * k, value[1] * k, value[2] * k)


def event_row(key: tuple, value) -> tuple:
    """``(event, label, feature, value, n, sum, sumsq)`` from a reduced ``(key, value)``."""
    if type(value) is int:
        return (*key, value, None, None)
    return (*key, int(value[0]), float(value[1]), float(value[2]))


def doc_events(labels: Sequence[str], tokens: Sequence[str], kind: str) -> Iterator[tuple[tuple, int]]:
    """Events of one document (multinomial or Bernoulli); a document counts once per label."""
    counts = Counter(tokens)
    total = sum(counts.values())
    for y in labels:
        yield (Y_ANY, None, None, None), 1
        yield (Y, y, None, None), 1
        if kind == "multinomial":
            for w, c in counts.items():
                yield (YX, y, w, None), c
            yield (YX_ANY, y, None, None), total
        else:  # bernoulli: presence
            for w in counts:
                yield (YX, y, w, None), 1


def number_cell(value, decimal: str = ".") -> float | None:
    """A numeric table cell (training, classify, ``nbspark.load``): None if blank; ValueError if not a
    number. An integer past a double's range is infinite, as the text of one is (``float("1e400")``).
    Text is read with the input's ``decimal`` mark: with ``","`` a cell must match
    ``inputs.spec.DECIMAL_COMMA`` (``1.5`` is refused there: a point only groups thousands)."""
    if value is None:
        return None
    if type(value) is str:  # a CSV's cell: most of them
        text = value.strip()
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an int: 10**400
            return math.inf if value > 0 else -math.inf
    else:
        text = str(value).strip()
    if not text:
        return None
    if decimal == ",":
        if not is_decimal_comma(text):
            raise ValueError(f"{text!r} is not a number written with a decimal comma")
        text = text.replace(".", "").replace(",", ".")
    return float(text)  # ValueError for a non-number


def binary_cell(value, decimal: str = ".") -> str | None:
    """A Bernoulli cell as "0" or "1" (None when missing): 0 or 1 as a number, a bool, or true/false
    in any case (a CSV's TRUE, a Parquet boolean); ValueError for anything else."""
    if (word := str(value).strip().lower()) in ("true", "false"):  # str(True) is "True"
        return "1" if word == "true" else "0"
    x = number_cell(value, decimal)
    if x is None:
        return None
    if x not in (0.0, 1.0):
        raise ValueError(value)
    return "1" if x else "0"


def row_events(
    label: str, categorical: dict[str, str], numeric: dict[str, float]
) -> Iterator[tuple[tuple, object]]:
    """Events of one table row: categorical counts and Gaussian sufficient statistics."""
    yield (Y_ANY, None, None, None), 1
    yield (Y, label, None, None), 1
    for j, v in categorical.items():
        yield (YX, label, j, v), 1
    for j, x in numeric.items():
        yield (YG, label, j, None), (1, x, x * x)
