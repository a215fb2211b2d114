"""Naive Bayes events without Spark: what a document and a table cell count, by hand."""

import math

import pytest

from nbspark.naive_bayes.events import add_values, binary_cell, doc_events, event_row, number_cell


def count(events):
    """Sum events the way reduceByKey does, and lay them out as count rows."""
    table = {}
    for key, value in events:
        table[key] = add_values(table[key], value) if key in table else value
    return [event_row(k, v) for k, v in table.items()]


def test_multilabel_document_counts_once_per_label():
    rows = count(doc_events(("a", "b"), ["x", "y", "x"], "multinomial"))
    table = {r[:4]: r[4] for r in rows}
    assert table[("Y=ANY", None, None, None)] == 2
    assert table[("YX", "a", "x", None)] == 2 and table[("YX", "b", "x", None)] == 2
    assert table[("YX=ANY", "b", None, None)] == 3


def test_a_number_with_a_decimal_comma_is_read_by_the_one_rule():
    """``decimal = ","``, by hand: the comma marks the fraction, a point groups thousands (in threes
    only); a point as the decimal mark is refused there, not read as a thousand."""
    read = {"1,5": 1.5, "-0,25": -0.25, ",5": 0.5, "1,": 1.0, "1,5e3": 1500.0, "1.234,5": 1234.5}
    read |= {"1.234": 1234.0, "1.000.000": 1e6, " 12 ": 12.0, "": None, "   ": None}
    read |= {"Inf": math.inf, "-Inf": -math.inf, "+Inf": math.inf}  # Spark's words for them
    assert {text: number_cell(text, ",") for text in read} == read
    assert math.isnan(number_cell("NaN", ","))
    for text in ("1.5", "1,2,3", "1.23,4", "12.34", "1 000,5", "abc", "1,5,", "nan", "Infinity", "-NaN"):
        with pytest.raises(ValueError, match="not a number written with a decimal comma"):
            number_cell(text, ",")
    assert number_cell(2.5, ",") == 2.5 and number_cell("1.5") == 1.5  # a number is one; "." reads points
    # a 0/1 column (nb.bernoulli_columns) by the same rule
    assert [binary_cell(c, ",") for c in ("1,0", "0,0", "1", "TRUE", "")] == ["1", "0", "1", "1", None]
    with pytest.raises(ValueError):
        binary_cell("0,5", ",")
    with pytest.raises(ValueError):
        number_cell("1,5")
