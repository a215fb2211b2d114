"""A table's rows reach the one row rule (``naive_bayes.tables.table_partition``) two ways in Spark:
as ``Row``s (the ``pairs`` engine, and scoring) and in Arrow batches (the ``combine`` engine,
``TableRows.map_partitions``). Both, and training in process, give one table and manifest; a
column that Arrow hands over otherwise than a ``Row`` (a timestamp) keeps the ``Row``s."""

import json
import math
from datetime import datetime

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import train_nb, train_nb_in_process
from nbspark.settings.config import load_config

pytestmark = pytest.mark.spark

#: what a run records of itself (its engine among its settings), not of the model
VOLATILE = ("created", "seconds", "engine", "updates", "config")


def _table(model) -> list[tuple]:
    return sorted(tuple(r.values()) for r in pq.read_table(str(model / "counts")).to_pylist())


def _manifest(model) -> dict:
    manifest = json.loads((model / "manifest.json").read_text())
    return {k: v for k, v in manifest.items() if k not in VOLATILE}


def _same(a: list[tuple], b: list[tuple]) -> bool:
    """Equal counts; a Gaussian's sums of x and x² equal up to the order of the additions."""
    return [r[:5] for r in a] == [r[:5] for r in b] and all(
        x == y if x is None or y is None else math.isclose(x, y, rel_tol=1e-12)
        for r, q in zip(a, b)
        for x, y in zip(r[5:], q[5:])
    )


def _trained(spark, tmp_path, settings: dict, in_process: bool = True) -> dict:
    """The model of every engine (and in process): ``{name: (table, manifest)}``."""
    out = {}
    for engine in ("pairs", "combine"):
        cfg = load_config(None, {**settings, "engine": engine})
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / engine)
        out[engine] = _table(tmp_path / engine), _manifest(tmp_path / engine)
    if in_process:
        train_nb_in_process(load_config(None, settings), tmp_path / "local")
        out["local"] = _table(tmp_path / "local"), _manifest(tmp_path / "local")
    return out


def _awkward_rows(n: int) -> str:
    """``n`` rows of a CSV: numbers, categories, a Bernoulli column, and now and then a missing or
    infinite cell, a row without its label, a cell that is no number, one written with a decimal
    comma, a Bernoulli cell that is neither 0 nor 1."""
    lines = ["x,y,colour,flag,label"]
    for i in range(n):
        x = ["", "inf", "nan", " 7 ", '"1,5"', "abc"][i % 6] if i % 7 == 0 else f"{(i * 37) % 101 / 7:.4f}"
        y = "" if i % 11 == 0 else str((i * 13) % 17 - 8)
        colour = ["red", "green", "", "blue"][i % 4]
        flag = ["0", "1", "TRUE", "false", "2" if i % 50 == 4 else "1"][i % 5]
        label = "" if i % 23 == 5 else ("a", "b", "c")[i % 3]
        lines.append(f"{x},{y},{colour},{flag},{label}")
    return "\n".join(lines) + "\n"


def _awkward_settings(path) -> dict:
    """A mixed model of ``_awkward_rows``' columns, trained on ``path``."""
    return {
        "task": "naive_bayes",
        "nb.model": "mixed",
        "nb.label_column": "label",
        "nb.numeric_columns": "x,y",
        "nb.categorical_columns": "colour",
        "nb.bernoulli_columns": "flag",
        "train.format": "csv",
        "train.path": str(path),
    }


@pytest.mark.parametrize("holdout", [None, "0.3"])
def test_a_table_through_arrow_is_the_table_through_rows_and_in_process(spark, tmp_path, holdout):
    """Every malformed reason, missing and non-finite cells, over two files read in pieces of 2 KB
    and in Arrow batches of 7 rows: a hold-out reads each row's index (the rows numbered first);
    without one, the malformed rows are named in their files from each piece's rows afterwards."""
    (tmp_path / "in").mkdir()
    text = _awkward_rows(300).splitlines(keepends=True)
    (tmp_path / "in" / "a.csv").write_text("".join(text[:200]))
    (tmp_path / "in" / "b.csv").write_text(text[0] + "".join(text[200:]))
    settings = {**_awkward_settings(tmp_path / "in"), "max_bad_examples": "100"}
    if holdout:
        settings |= {"train.holdout": holdout, "train.seed": "7", "train.splits": "test"}
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "7")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "2000")
    try:
        models = _trained(spark, tmp_path, settings)
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    table, manifest = models["combine"]
    for other in ("pairs", "local"):
        assert _same(models[other][0], table) and models[other][1] == manifest, other
    stats = manifest["stats"]
    # the rows counted from _awkward_rows' rule: no label, else x "1,5" (a decimal comma) or "abc",
    # else a Bernoulli "2"
    assert stats["rows_read"] == 300
    assert stats["malformed.label"] == sum(i % 23 == 5 for i in range(300)) == 13
    assert stats["malformed"] == sum(
        i % 23 == 5 or (i % 7 == 0 and i % 6 in (4, 5)) or i % 50 == 4 for i in range(300)
    )
    assert stats["malformed.decimal_comma"] == sum(i % 42 == 28 and i % 23 != 5 for i in range(300))
    bad = manifest["malformed_examples"]
    named = [
        (b["source"].rsplit("/", 1)[1], b["offset"]) for b in bad
    ]  # row i is a.csv's i + 2, b.csv's i - 197
    assert named[:2] == [("a.csv", 6), ("a.csv", 7)] and ("b.csv", 280 - 197) in named
    if holdout:  # the hold-out's part of the rest, and what it held out: every row is one of the three
        assert 0 < stats["documents"] < 300 - stats["malformed"]
        assert stats["documents"] + stats["held_out"] == 300 - stats["malformed"]
    else:
        assert stats["documents"] == 300 - stats["malformed"] and "held_out" not in stats


def test_a_timestamp_column_keeps_the_rows_path(spark, tmp_path):
    """A timestamp category is its ``Row``'s text (Arrow's carries the zone): the rows are not read
    through Arrow, and both engines agree."""
    from nbspark.naive_bayes.tables import arrow_columns

    (tmp_path / "t").mkdir()
    pq.write_table(
        pa.table(
            {
                "when": [datetime(2024, 1, d % 3 + 1, 12) for d in range(9)],
                "size": [float(d) for d in range(9)],
                "label": ["a", "b"] * 4 + ["a"],
            }
        ),
        str(tmp_path / "t" / "p.parquet"),
    )
    assert not arrow_columns(spark.read.parquet(str(tmp_path / "t")).schema)
    settings = {
        "task": "naive_bayes",
        "nb.model": "mixed",
        "nb.label_column": "label",
        "train.format": "parquet",
        "train.path": str(tmp_path / "t"),
    }
    models = _trained(spark, tmp_path, settings, in_process=False)
    assert _same(models["pairs"][0], models["combine"][0]) and models["pairs"][1] == models["combine"][1]
    assert len([r for r in models["combine"][0] if r[0] == "YX" and r[2] == "when"]) == 6  # 3 days × 2 labels


def test_failfast_names_a_tables_first_malformed_row_in_arrow_batches(spark, tmp_path):
    from nbspark.errors import InputError

    (tmp_path / "t.csv").write_text("x,label\n1,a\n2,b\nabc,a\n4,b\n")
    settings = {
        "task": "naive_bayes",
        "nb.model": "gaussian",
        "nb.label_column": "label",
        "train.format": "csv",
        "train.path": str(tmp_path / "t.csv"),
        "mode": "failfast",
        "engine": "combine",
    }
    cfg = load_config(None, settings)
    with pytest.raises(InputError, match=r"t\.csv row 4: malformed line \(numeric\): 'x=abc, label=a'$"):
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_a_tables_classify_job_in_arrow_batches_is_its_job_through_rows(spark, tmp_path, monkeypatch):
    """The awkward table scored by a model trained on it: in Arrow batches of 7 rows (plain rows by
    columns, the rest by the row rule) and as ``Row``s, record by record, the same predictions
    (a note column riding along, a hold-out's part), statistics, malformed rows and scoring counts."""
    import pandas as pd

    from nbspark.naive_bayes import tables
    from nbspark.naive_bayes.jobs import classify_nb

    (tmp_path / "in").mkdir()
    text = _awkward_rows(300).splitlines(keepends=True)
    (tmp_path / "in" / "a.csv").write_text(
        text[0].rstrip("\n")
        + ",note\n"
        + "".join(line.rstrip("\n") + f",n{i}\n" for i, line in enumerate(text[1:]))
    )
    settings = {
        **_awkward_settings(tmp_path / "in"),
        "train.holdout": "0.3",
        "train.seed": "7",
        "train.splits": "train",
        "test.format": "csv",
        "test.path": str(tmp_path / "in"),
        "test.holdout": "0.3",
        "test.seed": "7",
        "test.splits": "test",
        "max_bad_examples": "100",
    }
    cfg = load_config(None, settings)
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "model")
    out = {}
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "7")
    try:
        for way in ("arrow", "rows"):
            if way == "rows":
                monkeypatch.setattr(tables, "arrow_columns", lambda schema: False)
            metrics = classify_nb(
                spark, cfg, tmp_path / "model", resolve_input(cfg.test, None), tmp_path / way
            )
            frame = pd.read_parquet(tmp_path / way / "predictions")
            out[way] = metrics, frame.sort_values("id", key=lambda c: c.astype(int)).reset_index(drop=True)
    finally:
        spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
    (m_arrow, arrow), (m_rows, rows) = out["arrow"], out["rows"]
    assert list(arrow.columns) == list(rows.columns) and list(arrow.columns)[:2] == ["id", "note"]
    pd.testing.assert_frame_equal(arrow, rows, check_exact=False, rtol=1e-12)
    for key in ("input_stats", "malformed_examples", "unknown_features", "accuracy"):
        assert m_arrow[key] == m_rows[key], key
    assert 0 < len(arrow) < 300 and m_arrow["input_stats"]["malformed"] > 0
