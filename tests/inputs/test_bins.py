"""``inputs.bins``: a number's bin, by hand, and the same bins from Spark SQL's twin of the rule
(``density.count.bin_expressions``) on awkward cells."""

import math

import pytest

from nbspark.inputs.bins import bin_cell, bin_labels, parse_bins

EDGES = (30.0, 50.0, 65.0)
#: cell -> its bin, None (empty), or ValueError (not a number)
CELLS = {
    "29.999": "<30",
    "30": "[30, 50)",
    " 42 ": "[30, 50)",
    "4.9e1": "[30, 50)",
    "50": "[50, 65)",
    "-1": "<30",
    "65": ">=65",
    "1e400": ">=65",  # a number too large for a double: infinity, the last bin
    ".5": "<30",
    "5.": "<30",
    "n/a": ValueError,
    "": ValueError,
    "NaN": ValueError,
    "0x10": ValueError,
    "1_000": ValueError,
    "5d": ValueError,
    None: None,
}


def test_bins_by_hand():
    assert bin_labels(EDGES) == ["<30", "[30, 50)", "[50, 65)", ">=65"]
    assert bin_labels((0.5, 1e20)) == ["<0.5", "[0.5, 1e+20)", ">=1e+20"]
    for cell, expected in CELLS.items():
        if expected is ValueError:
            with pytest.raises(ValueError):
                bin_cell(cell, EDGES)
        else:
            assert bin_cell(cell, EDGES) == expected, cell
    assert [bin_cell(x, EDGES) for x in (30, 64.5, -math.inf)] == ["[30, 50)", "[50, 65)", "<30"]
    for bad in (True, math.nan, object()):
        with pytest.raises(ValueError):
            bin_cell(bad, EDGES)


@pytest.mark.parametrize(
    "items, message",
    [
        (["age"], "'age' is not COLUMN=EDGE"),
        (["age=x"], "is not COLUMN=EDGE"),
        (["=1"], "is not COLUMN=EDGE"),
        (["age=50,30"], "each above the last"),
        (["age=1,1"], "each above the last"),
        (["age=1", "age=2"], "binned twice"),
    ],
)
def test_bad_bins_are_refused(items, message):
    with pytest.raises(ValueError, match=message):
        parse_bins(items)


def test_bins_are_parsed_with_commas_or_bars():
    assert parse_bins(["age=30|50,65", " w = -1.5e2 "]) == {"age": EDGES, "w": (-150.0,)}


def test_spark_bins_a_cell_as_python_does(spark):
    """Text cells (a CSV's) and a double column (a Parquet table's), through ``bin_expressions``:
    each bin, empty cell and refusal as ``bin_cell`` gives it."""
    from nbspark.density.count import bin_expressions

    cells = list(CELLS)
    numbers = [30.0, 64.5, None, float("nan"), float("inf"), -1.0]
    df = spark.createDataFrame(
        [(c, numbers[i] if i < len(numbers) else None) for i, c in enumerate(cells)], "t STRING, x DOUBLE"
    )
    exprs, ok = bin_expressions(df, {"t": EDGES, "x": EDGES})
    rows = df.select(exprs["t"].alias("t"), exprs["x"].alias("x"), ok.alias("ok")).collect()

    def python(cell):
        try:
            return bin_cell(cell, EDGES), True
        except ValueError:
            return None, False

    for i, (cell, row) in enumerate(zip(cells, rows)):
        t, t_ok = python(cell)
        x, x_ok = python(numbers[i] if i < len(numbers) else None)
        assert (row["t"], row["x"], row["ok"]) == (t, x, t_ok and x_ok), (cell, row)
