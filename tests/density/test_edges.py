"""``density.edges``: the quantile edges Spark settles from a frame, gathered in the driver or, past
``GATHERED`` distinct numbers, sorted and cut a range to a task: the same edges as
``inputs.bins.quantile_edges`` of the same numbers in memory."""

import random

import pytest

from nbspark.density import edges
from nbspark.inputs.bins import quantile_edges

pytestmark = pytest.mark.spark


def test_spark_cuts_a_column_by_ranges_as_python_cuts_it_whole(spark, monkeypatch):
    """600 weighted rows over 8 partitions, a number repeated with weights to sum, rows of no weight
    or a bad weight and empty cells that weigh in no edge, an infinity in no edge: the edges of
    ``frame_edges`` cut by ranges (``GATHERED`` 7: about 90 distinct numbers) for every K equal those
    of the rows' numbers in memory (the gathered path: tests/density/test_bins.py, Spark against
    the process)."""
    monkeypatch.setattr(edges, "GATHERED", 7)
    rnd = random.Random(5)
    rows = [(str(rnd.randint(0, 90) / 4), rnd.choice(["1", "2", "0.5", "0.25"])) for _ in range(600)]
    rows += [("1e400", "5"), ("", "3"), ("12.5", "0"), ("80", "-1"), ("n/a", "1")]
    df = spark.createDataFrame(rows, "age string, w string").repartition(8)
    kept = [(float(a), float(w)) for a, w in rows if a not in ("", "n/a", "1e400") and float(w) > 0]
    for k in (2, 4, 10, 40):
        assert edges.frame_edges(df, "w", {"age": k}) == {"age": quantile_edges(kept, k)}, k
    dominated = spark.createDataFrame(
        [(str(i), "1") for i in range(20)] + [("99", "1000")], "age string, w string"
    )
    with pytest.raises(ValueError, match="'age' holds nearly all its weight on its largest number \\(99\\)"):
        edges.frame_edges(dominated, "w", {"age": 2})
