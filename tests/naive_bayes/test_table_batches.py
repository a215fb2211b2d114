"""A table's batches counted by columns where the row rule's outcome is certain, by the row rule
elsewhere (``naive_bayes.table_batches``): the same sums, statistics and malformed rows as the row
rule (``tables.table_partition``) over every row, for any cells, types, batch sizes and hold-out."""

import math

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbspark.inputs.stats import FAILFAST_TAG
from nbspark.naive_bayes.events import add_values, row_events, scaled
from nbspark.naive_bayes.inputs import record_events
from nbspark.naive_bayes.table_batches import PLAIN_NUMBER, count_columns, table_batch_sums
from nbspark.naive_bayes.tables import TableRule
from nbspark.spine.counting import combine_partition

#: cells that look like numbers to someone: Python's float reads some, pyarrow's cast others
NUMBERS = [
    "1", "-2.5", "+3", ".5", "5.", "1e5", "1E-3", "-0", "007", "1e400", "-1e400", "2.4703282292062328e-324",
    "123456789012345678901234567890", " 1", "1 ", "\t2", "", "inf", "-Infinity", "nan", "NaN", "1_000",
    "١٢", "1,5", "1.2.3", "e5", "--1", "abc", "0x10", "1e", "+", ".", "½",
]  # fmt: skip
LABELS = ["a", "b", "B", " c ", "", " ", "\u00a0", "\x1c", "是", "—", "7", None]
CATEGORIES = ["x", "y", " ", "", "Ω", None]


def _rows_by_the_rule(table: pa.Table, rule: TableRule, places) -> dict:
    """The row rule over every row, summed as the ``combine`` engine sums a partition."""
    records = ((i, row, places[i]) for i, row in enumerate(table.to_pylist()))
    return dict(
        combine_partition((kv for r in rule.rows(records) for kv in record_events(r, "mixed")), add_values)
    )


def _by_batches(table: pa.Table, rule: TableRule, places, size: int) -> dict:
    def batches():
        at = 0
        for batch in table.to_batches(max_chunksize=size):
            yield batch, np.arange(at, at + batch.num_rows), lambda j, at=at: places[at + j]
            at += batch.num_rows

    return table_batch_sums(batches(), rule, "mixed", record_events)


def _close(p: float, q: float) -> bool:
    """Sums equal up to the order of their additions."""
    return p == q or math.isclose(p, q, rel_tol=1e-12) or (math.isnan(p) and math.isnan(q))


def _equal(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for k, x in a.items():
        y = b[k]
        if isinstance(x, tuple):
            if x[0] != y[0] or not all(_close(p, q) for p, q in zip(x[1:], y[1:])):
                return False
        elif x != y:
            return False
    return True


def _rule(
    numeric=("x", "z"), categorical=("c",), holdout=0.0, mode="permissive", bernoulli=frozenset(), decimal="."
):
    splits = frozenset({"train"}) if holdout else frozenset()
    return TableRule(
        "label", tuple(numeric), tuple(categorical), splits, holdout, 3, mode, 1000, bernoulli, decimal
    )


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(LABELS),
            st.one_of(st.sampled_from(NUMBERS), st.none(), st.floats(allow_nan=False).map(repr)),
            st.one_of(st.sampled_from(NUMBERS), st.none()),
            st.sampled_from(CATEGORIES),
        ),
        max_size=60,
    ),
    size=st.integers(1, 25),
    holdout=st.sampled_from([0.0, 0.4]),
)
def test_text_cells_by_batches_are_the_row_rules_counts(rows, size, holdout):
    table = pa.table(
        {
            "label": pa.array([r[0] for r in rows], pa.string()),
            "x": pa.array([r[1] for r in rows], pa.string()),
            "z": pa.array([r[2] for r in rows], pa.string()),
            "c": pa.array([r[3] for r in rows], pa.string()),
        }
    )
    places = [("t.csv", i + 2) for i in range(len(rows))]
    rule = _rule(holdout=holdout)
    assert _equal(_by_batches(table, rule, places, size), _rows_by_the_rule(table, rule, places))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.integers(-3, 3), st.none()),
            st.one_of(st.floats(), st.none()),
            st.one_of(st.integers(-(2**62), 2**62), st.none()),
            st.one_of(st.integers(0, 4), st.none()),
        ),
        max_size=40,
    ),
    size=st.integers(1, 15),
)
def test_typed_columns_by_batches_are_the_row_rules_counts(rows, size):
    """Parquet's types: integer labels and categories (their text is Python's ``str``), floating point
    and integer numbers (an integer past 2**53 rounds as Python's ``float`` rounds it)."""
    table = pa.table(
        {
            "label": pa.array([r[0] for r in rows], pa.int64()),
            "x": pa.array([r[1] for r in rows], pa.float64()),
            "z": pa.array([r[2] for r in rows], pa.int64()),
            "c": pa.array([r[3] for r in rows], pa.int32()),
        }
    )
    places = [("t.parquet", i + 1) for i in range(len(rows))]
    rule = _rule()
    assert _equal(_by_batches(table, rule, places, size), _rows_by_the_rule(table, rule, places))


@pytest.mark.parametrize(
    "column, rule",
    [
        (pa.array([True, False, None, True]), _rule()),  # a bool is no number to the row rule
        (
            pa.array(["1", "0", "1", None]),
            _rule(categorical=("c", "x"), numeric=("z",), bernoulli=frozenset({"x"})),
        ),
        (pa.array(["1,5", "2", None, "3,25"]), _rule(decimal=",")),
        (pa.array([1.5, 2.0, None, -1.0], pa.float32()), _rule()),
    ],
    ids=["bool", "bernoulli", "decimal-comma", "float32"],
)
def test_what_cannot_be_counted_by_columns_goes_to_the_row_rule(column, rule):
    table = pa.table(
        {
            "label": pa.array(["a", "b", "a", "b"]),
            "x": column,
            "z": pa.array(["1", "2", "3", "4"]),
            "c": pa.array(["u", None, "v", "u"]),
        }
    )
    places = [("t", i + 1) for i in range(4)]
    by_rule = _rows_by_the_rule(table, rule, places)
    assert _equal(_by_batches(table, rule, places, 3), by_rule)
    assert ("__stat__", "rows_read") in by_rule


def test_the_plain_form_is_what_pythons_float_and_pyarrows_cast_read_alike():
    """Every string of the plain form: pyarrow's cast gives Python's float, bit for bit."""
    import re

    import pyarrow.compute as pc

    plain = [s for s in NUMBERS if re.search(PLAIN_NUMBER, s)]
    assert {"1", "+3", ".5", "5.", "1e400", "007"} <= set(plain) and not {" 1", "inf", "1_000", "١٢"} & set(
        plain
    )
    cast = pc.cast(pa.array(plain), pa.float64()).to_pylist()
    assert [math.copysign(1, x) for x in cast] == [math.copysign(1, float(s)) for s in plain]
    assert cast == [float(s) for s in plain]


def test_failfast_stops_at_the_first_malformed_row_in_order():
    table = pa.table(
        {"label": ["a", "b", "a", None], "x": ["1", "2", "abc", "4"], "z": ["1"] * 4, "c": ["u"] * 4}
    )
    places = [("t.csv", i + 2) for i in range(4)]
    with pytest.raises(ValueError, match=f"{FAILFAST_TAG}\ttable:t.csv\t4\tnumeric"):
        _by_batches(table, _rule(mode="failfast"), places, 2)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.none()),
            st.sampled_from(CATEGORIES),
            st.integers(0, 3),
            st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.none()),
        ),
        max_size=40,
    ),
    weighed=st.booleans(),
)
def test_rows_by_columns_are_the_row_events_of_each_row_scaled_by_its_weight(rows, weighed):
    """``count_columns`` (a model's ``partial_fit`` of rows in memory, and the plain rows of a table's
    batches) against ``events.row_events`` of each row, scaled by its whole weight (a row of weight 0
    counts nothing), summed in row order: the same keys, the same counts, the same sums (two numeric
    columns, each missing in some rows)."""
    weights = [r[3] for r in rows] if weighed else None
    by_rows: dict = {}
    for label, x, c, w, z in rows:
        w = w if weighed else 1
        num = {k: v for k, v in (("x", x), ("z", z)) if v is not None}
        cat = {} if c is None else {"c": c}
        for key, value in row_events(label, cat, num):
            if w:
                by_rows[key] = (
                    add_values(by_rows[key], scaled(value, w)) if key in by_rows else scaled(value, w)
                )
    by_columns: dict = {}

    def add(key, value):
        assert key not in by_columns  # each key once a call
        by_columns[key] = value

    numbers = {
        name: np.array([np.nan if r[i] is None else r[i] for r in rows], np.float64)
        for name, i in (("x", 1), ("z", 4))
    }
    count_columns([r[0] for r in rows], numbers, {"c": [r[2] for r in rows]}, add, weights)
    assert _equal(by_columns, by_rows)
