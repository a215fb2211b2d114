"""``inputs.bins``: a number's bin, by hand, and the same bins from Spark SQL's twin of the rule
(``density.count.bin_expressions``) on awkward cells; quantile edges by hand and against numpy's
weighted quantiles."""

import math

import numpy as np
import pytest

from nbspark.inputs.bins import (
    bin_cell,
    bin_labels,
    bins_text,
    crossings,
    edges_crossed,
    parse_bins,
    quantile_edges,
    quantile_thresholds,
    quantiles_asked,
    quantiles_settled,
)

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
        (["age=quantiles:1"], "asks for 2 to 1000 quantile bins"),
        (["age=quantiles:1001"], "asks for 2 to 1000 quantile bins"),
        (["age=quantiles"], "or COLUMN=quantiles:K"),
        (["age=quantiles:4=9,3"], "each above the last"),
        (["age=quantiles:4", "age=3"], "binned twice"),
    ],
)
def test_bad_bins_are_refused(items, message):
    with pytest.raises(ValueError, match=message):
        parse_bins(items)


def test_bins_are_parsed_with_commas_or_bars():
    assert parse_bins(["age=30|50,65", " w = -1.5e2 "]) == {"age": EDGES, "w": (-150.0,)}


def test_quantiles_are_asked_and_their_settled_edges_read_back():
    bins = parse_bins(["age=quantiles:4", "w=quantiles: 3 =1.5,2e3", "x=1|2"])
    assert bins == {"age": 4, "w": (1.5, 2000.0), "x": (1.0, 2.0)}
    assert quantiles_asked(bins) == {"age": 4}
    assert quantiles_settled(["age=quantiles:4", "w=quantiles: 3 =1.5,2e3", "x=1|2"]) == {"w": 3}
    text = bins_text({"age": (0.1 + 0.2, 26.0, 1e20), "x": (1.0,)}, {"age": 4})
    assert text == ["age=quantiles:4=0.30000000000000004,26,1e+20", "x=1"]
    assert parse_bins(text) == {"age": (0.1 + 0.2, 26.0, 1e20), "x": (1.0,)}  # the same floats back
    assert quantiles_settled(text) == {"age": 4}


def test_quantile_edges_by_hand():
    """1 … 100 in four bins: 25 numbers below 26, 25 in [26, 51), [51, 76) and >= 76. Ties: 1, 2
    (weight 6), 3 over a total of 8: every quarter is reached only below 3, so one edge. Weights move
    the edges; infinities weigh in none; one number, or none of positive weight, cuts nothing."""
    assert quantile_edges([(float(i), 1.0) for i in range(1, 101)], 4) == (26.0, 51.0, 76.0)
    assert quantile_edges([(1.0, 1), (2.0, 1), (2.0, 5), (3.0, 1)], 4) == (3.0,)
    assert quantile_edges([(1.0, 3.0), (2.0, 1.0), (3.0, 1.0), (4.0, 1.0)], 2) == (2.0,)
    assert quantile_edges([(1.0, 1.0), (2.0, 1.0), (math.inf, 5.0), (-math.inf, 5.0)], 2) == (2.0,)
    assert quantile_edges([(0.1, 0.1)] * 3 + [(0.2, 0.1)] * 3, 2) == (0.2,)  # 0.3 of 0.6, summed in floats
    with pytest.raises(ValueError, match="'age' holds one number \\(7\\)"):
        quantile_edges([(7.0, 1.0), (7.0, 2.0), (8.0, 0.0)], 4, "age")
    with pytest.raises(ValueError, match="'age' holds no number"):
        quantile_edges([], 4, "age")
    # 1 of weight 0.01 below 2 of 0.99: no half of the weight lies below any number
    with pytest.raises(ValueError, match="'age' holds nearly all its weight on its largest number \\(2\\)"):
        quantile_edges([(1.0, 0.01), (2.0, 0.99)], 2, "age")


@pytest.mark.parametrize("seed", range(4))
def test_edges_cut_range_by_range_are_the_edges_of_the_whole(seed):
    """What Spark does past ``density.edges.GATHERED`` numbers: the sorted numbers cut into ranges at
    random, each range's weight summed, each range's ``crossings`` from the weight below it, the
    first range to reach a threshold deciding: the edges ``quantile_edges`` gives all at once (ties
    of weight, ranges of one number, an empty range, edges on range boundaries included)."""
    rng = np.random.default_rng(seed)
    x = np.unique(rng.integers(0, 60, 200)).astype(float)
    w = rng.choice([0.25, 0.5, 1.0, 3.0], len(x))
    pairs = list(zip(x.tolist(), w.tolist()))
    cuts = sorted({0, len(pairs), *rng.integers(0, len(pairs), 6).tolist(), 1, 2})
    ranges = [pairs[a:b] for a, b in zip(cuts, cuts[1:])] + [[]]
    sums = [math.fsum(w for _, w in r) for r in ranges]
    for k in (2, 3, 4, 7, 10, 50):
        thresholds = quantile_thresholds(math.fsum(sums), k)
        crossed = [
            c for i, r in enumerate(ranges) for c in crossings(iter(r), thresholds, math.fsum(sums[:i]))
        ]
        assert edges_crossed(crossed) == quantile_edges(pairs, k)


@pytest.mark.parametrize("seed", range(6))
def test_quantile_edges_agree_with_numpys_weighted_inverted_cdf(seed):
    """The j-th edge is the smallest number above numpy's inverted-CDF quantile at j/k (the smallest
    number whose weight at or below it reaches j/k of the total), equal edges merged: integer and
    real numbers, whole weights (exact sums both ways)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 40, 300).astype(float) if seed % 2 else rng.normal(50, 10, 300).round(2)
    w = rng.integers(1, 5, 300).astype(float)
    k = [2, 3, 4, 5, 7, 10][seed]
    distinct = np.unique(x)
    expected = []
    for j in range(1, k):
        q = np.quantile(x, j / k, weights=w, method="inverted_cdf")
        above = distinct[distinct > q]
        if len(above) and above[0] not in expected:
            expected.append(float(above[0]))
    assert quantile_edges(zip(x.tolist(), w.tolist()), k) == tuple(expected)


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
