"""Training a density model: Spark and in process count the same table; the lecture's truth table
read as a CSV with a weight column gives its own numbers back; bad input is one line."""

import json
import math
from collections import Counter

import pandas as pd
import pyarrow.parquet as pq
import pytest

import nbspark
from nbspark.app.command import main
from nbspark.density.jobs import classify_density, train_density, train_density_in_process
from nbspark.errors import ConfigError, InputError
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from tests.conftest import FIXTURES, command_alone
from tests.density.test_model import TABLE

TRUTH = "A,B,C,weight\n" + "".join(f"{a},{b},{c},{p:.2f}\n" for (a, b, c), p in TABLE.items())


def _cfg(path, **more):
    return load_config(None, {"task": "density", "train.format": "csv", "train.path": str(path), **more})


def _rows(model) -> list[tuple]:
    rows = [tuple(r.values()) for r in pq.read_table(str(model / "counts")).to_pylist()]
    return sorted(rows, key=lambda r: tuple(map(str, r)))  # a null cell is None: sorted as text


def test_the_truth_table_in_process_gives_its_numbers_back(tmp_path, capsys):
    """No spark mark: no JVM."""
    (tmp_path / "abc.csv").write_text(TRUTH)
    manifest = train_density_in_process(
        _cfg(tmp_path / "abc.csv", **{"density.weight_column": "weight"}), tmp_path / "m"
    )
    assert (
        manifest["total"] == 1.0 and manifest["distinct_rows"] == 8 and manifest["columns"] == ["A", "B", "C"]
    )
    model = nbspark.load(tmp_path / "m")
    for (a, b, c), p in TABLE.items():
        assert model.probability({"A": a, "B": b, "C": c}) == p
    assert model.probability({"A": "1", "B": "0", "C": "1"}, model="naive") == pytest.approx(0.075)
    assert nbspark.load(tmp_path / "m", m=1.0).m == 1.0
    # nbspark predict answers each row's density, the truth table's own number (0: no log)
    (a, b, c), p = next(iter(TABLE.items()))
    assert (
        main(["predict", "--model", str(tmp_path / "m"), "--json", json.dumps({"A": a, "B": b, "C": c})]) == 0
    )
    (said,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert said["density"] == pytest.approx(p) and said["log_density"] == pytest.approx(math.log(p))
    assert said["unseen"] == {}
    # a row whose density is 0 says which of its cells were never counted in their column ("" is
    # not the empty cell, null is)
    row = json.dumps({"A": "7", "B": "", "C": c})
    assert main(["predict", "--model", str(tmp_path / "m"), row]) == 0
    assert capsys.readouterr().out == 'density 0  (never counted in their column: A=7, B="")\n'
    (tmp_path / "text.txt").write_text("It would not effect it.")
    assert main(["check", "--model", str(tmp_path / "m"), str(tmp_path / "text.txt")]) == 2
    assert "a density model; nbspark check needs a backoff model" in capsys.readouterr().err
    for one in ("abc", {"A": "1", "B": "0", "C": "1"}):  # one row is not rows: not its letters or keys
        with pytest.raises(TypeError, match="log_density takes a list of rows, got one (str|dict)"):
            model.log_density(one)


def test_spark_counts_the_table_that_the_process_counts(spark, tmp_path):
    (tmp_path / "abc.csv").write_text(TRUTH)
    cfg = _cfg(tmp_path / "abc.csv", **{"density.weight_column": "weight"})
    train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    train_density_in_process(cfg, tmp_path / "local")
    spark_rows, local_rows = _rows(tmp_path / "spark"), _rows(tmp_path / "local")
    assert [r[:3] for r in spark_rows] == [r[:3] for r in local_rows]
    assert all(math.isclose(a[3], b[3], rel_tol=1e-12) for a, b in zip(spark_rows, local_rows))
    model = nbspark.load(tmp_path / "spark")
    assert model.probability({"A": "1"}, {"B": "1"}) == pytest.approx(0.7)
    manifest = json.loads((tmp_path / "spark" / "manifest.json").read_text())
    assert manifest["kind"] == "nbspark.density-counts" and manifest["engine"] == "arrow"


def test_columns_named_with_a_dot_or_a_backtick_count_and_score_in_spark(spark, tmp_path):
    """Spark reads ``F.col("col.a")`` as a field of a column ``col``: a CSV header naming ``col.a``
    (or a weight ``w.t``) stopped the Spark count with UNRESOLVED_COLUMN, where the count in process
    ran; and scoring a table whose other column is so named stopped in pyspark's mapInArrow. Both
    count the same table now, and the predictions give the names back."""
    (tmp_path / "t.csv").write_text("col.a,col`b,w.t,id.x\nx,1,2,r1\nx,2,1,r2\ny,1,1,r3\n")
    settings = {"density.weight_column": "w.t", "density.columns": "col.a,col`b", "test.format": "csv"}
    cfg = _cfg(tmp_path / "t.csv", **settings, **{"test.path": str(tmp_path / "t.csv")})
    train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    train_density_in_process(cfg, tmp_path / "local")
    assert _rows(tmp_path / "spark") == _rows(tmp_path / "local")
    p_x = nbspark.load(tmp_path / "spark").probability({"col.a": "x"})
    assert p_x == pytest.approx(3 / 4)  # weights 2 + 1 of 4
    classify_density(spark, cfg, tmp_path / "spark", resolve_input(cfg.test, None), tmp_path / "r")
    scored = pq.read_table(tmp_path / "r" / "predictions")
    assert scored.column_names[:4] == ["col.a", "col`b", "id.x", "weight"]
    assert scored.column("id.x").to_pylist() == ["r1", "r2", "r3"]


def test_an_awkward_csv_counts_in_process_as_sparks_csv_reader_reads_it(spark, tmp_path):
    """Gzipped, ragged, an open quote, a quoted line end, an empty file (``_awkward_csv``): the
    cells Spark's reader gives, counted in process, make the table Spark makes."""
    from tests.naive_bayes.test_in_process import _awkward_csv

    _awkward_csv(tmp_path / "in")
    cfg = _cfg(tmp_path / "in")
    train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    train_density_in_process(cfg, tmp_path / "local")
    assert _rows(tmp_path / "local") == _rows(tmp_path / "spark") and len(_rows(tmp_path / "spark")) > 10
    values = {r[2] for r in _rows(tmp_path / "spark") if r[0] == "X"}
    assert {'say "hi" now', '"'} <= values  # d.csv's cells, quotes undoubled as RFC 4180 reads them


def test_a_weight_written_oddly_is_read_alike_in_spark_and_in_process(spark, tmp_path):
    """A weight is a decimal number (``WEIGHT_TEXT``): '0x10' stopped the Spark job with a cast error,
    and '1_000' weighed 1000 in process only. By hand: 5 of the 11 rows have no weight."""
    weights = ["1e3", " 2 ", "inf", "-0", "NaN", "0x10", "1_000", "+3", ".5", "5.", "5d"]
    (tmp_path / "w.csv").write_text("A,w\n" + "".join(f"{'xyz'[i % 3]},{w}\n" for i, w in enumerate(weights)))
    cfg = _cfg(tmp_path / "w.csv", **{"density.weight_column": "w"})
    train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    local = train_density_in_process(cfg, tmp_path / "local")
    assert _rows(tmp_path / "local") == _rows(tmp_path / "spark")
    assert local["stats"]["malformed.weight"] == 5 and local["total"] == 1000 + 2 + 0 + 3 + 0.5 + 5


def test_an_unweighted_table_counts_its_rows_as_a_plain_count(spark, tmp_path):
    """weather.csv, every column modelled as text: the joint is a Counter of the rows."""
    cfg = _cfg(FIXTURES / "weather.csv", **{"density.columns": "outlook,windy,play"})
    train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    lines = (FIXTURES / "weather.csv").read_text().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","))) for line in lines[1:] if line]
    joint = Counter((r["outlook"], r["windy"], r["play"]) for r in rows)
    model = nbspark.load(tmp_path / "m")
    for (o, w, p), n in joint.items():
        assert model.probability({"outlook": o, "windy": w, "play": p}) == pytest.approx(n / len(rows))
    plays = Counter(r["play"] for r in rows)
    assert model.probability({"play": "yes"}, model="naive") == pytest.approx(plays["yes"] / len(rows))


def test_bad_weights_are_skipped_and_counted_or_stop_the_run(tmp_path):
    (tmp_path / "w.csv").write_text("a,w\nx,1\ny,-2\nz,lots\nx,3\n")
    manifest = train_density_in_process(
        _cfg(tmp_path / "w.csv", **{"density.weight_column": "w"}), tmp_path / "m"
    )
    assert manifest["stats"]["malformed.weight"] == 2 and manifest["total"] == 4.0
    cfg = _cfg(tmp_path / "w.csv", **{"density.weight_column": "w", "mode": "failfast"})
    with pytest.raises(InputError, match="a row whose weight \\(w\\) is not a number >= 0"):
        train_density_in_process(cfg, tmp_path / "f")
    assert not (tmp_path / "f").exists()


def test_what_a_density_task_cannot_do_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("a,b\nx,y\n")
    with pytest.raises(ConfigError, match="density.m must be >= 0.0"):
        _cfg(tmp_path / "t.csv", **{"density.m": "-1"})
    with pytest.raises(ConfigError, match="nb.alpha applies to naive Bayes tasks, not to task = 'density'"):
        _cfg(tmp_path / "t.csv", **{"nb.alpha": "2"})
    with pytest.raises(InputError, match="no column\\(s\\) c"):
        train_density_in_process(_cfg(tmp_path / "t.csv", **{"density.columns": "a,c"}), tmp_path / "m")
    (tmp_path / "e.csv").write_text("")  # said "no column to model"
    with pytest.raises(InputError, match="e.csv: no header line: the table's files are empty$"):
        train_density_in_process(_cfg(tmp_path / "e.csv"), tmp_path / "m")
    code = main(["classify", "--set", "task=density", "--model", str(tmp_path / "m")])
    assert code == 2 and "test.format 'reuters' is not a density input" in capsys.readouterr().err


def test_the_query_command_asks_a_density_model(tmp_path, capsys, monkeypatch):
    (tmp_path / "abc.csv").write_text(TRUTH)
    train_density_in_process(
        _cfg(tmp_path / "abc.csv", **{"density.weight_column": "weight"}), tmp_path / "m"
    )
    model = str(tmp_path / "m")
    assert (
        main(
            [
                "query",
                "--model",
                model,
                "--value",
                "A=1",
                "--given",
                "B=1",
                "--json",
                str(tmp_path / "a.json"),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.strip() == "P(A=1 | B=1) = 0.7   (joint, m = 0)"
    answer = json.loads((tmp_path / "a.json").read_text())
    assert answer["probability"] == pytest.approx(0.7) and answer["given"] == {"B": "1"}
    assert (
        main(
            [
                "query",
                "--model",
                model,
                "--value",
                "A=1",
                "--value",
                "B=0",
                "--value",
                "C=1",
                "--estimator",
                "naive",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("P(A=1, B=0, C=1) = 0.075   (naive, m = 0)")
    # a given value never counted: undefined unless smoothed, and the refusal names it
    assert main(["query", "--model", model, "--value", "A=1", "--given", "B=7"]) == 1
    assert "P(given) = 0 under the joint model (never counted in its column: B=7)" in capsys.readouterr().err
    # a value never counted: 0, and the answer says which (JSON: unseen)
    asked = ["--value", "A=7", "--value", "B=1", "--json", str(tmp_path / "z.json")]
    assert main(["query", "--model", model, *asked]) == 0
    assert (
        capsys.readouterr().out.strip()
        == "P(A=7, B=1) = 0   (joint, m = 0; never counted in their column: A=7)"
    )
    assert json.loads((tmp_path / "z.json").read_text())["unseen"] == {"A": "7"}
    # --json -: the JSON alone on stdout, for a pipe (it wrote a file named '-' before)
    monkeypatch.chdir(tmp_path)
    assert main(["query", "--model", model, "--value", "A=7", "--value", "B=1", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads((tmp_path / "z.json").read_text())
    assert not (tmp_path / "-").exists()
    assert main(["query", "--model", model, "--value", "A=1", "--given", "B=7", "--m", "1"]) == 0
    assert capsys.readouterr().out.startswith("P(A=1 | B=7) = 0.5   (joint, m = 1)")  # (1/4 / 2) / (1/2 / 2)
    assert main(["query", "--model", model, "--B", "_"]) == 2  # a backoff question of a density model
    assert "--A … --E ask a backoff model" in capsys.readouterr().err
    # options the query would ignore are refused: --top (one probability), --fold-case (no --ngrams)
    assert main(["query", "--model", model, "--value", "A=1", "--top", "3"]) == 2
    assert "--top picks how many bindings a backoff query prints" in capsys.readouterr().err
    # settings the command refuses as it refuses a bad option (exit 2), before reading the model
    for argv, said in (
        (["--value", "A=1", "--m", "-1"], "--m must be >= 0, got -1.0"),
        (["--value", "A=1", "--m", "nan"], "--m must be a finite number, got nan"),
        # a row holds one cell per column: the later A=0 replaced A=1 in silence (P(A=0) = 0.5)
        (["--value", "A=1", "--value", "A=0"], "--value names column 'A' twice"),
        (["--value", "A=1", "--given", "B=1", "--given", "B=0"], "--given names column 'B' twice"),
        (["--value", "A=1", "--fold-case"], "--fold-case lower-cases the words of --ngrams files"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["query", "--model", model, *argv])
        assert exit_.value.code == 2 and said in capsys.readouterr().err
    # a naive Bayes model is not queried: said so, with where its questions go (it said "a model of
    # kind 'nbspark.nb-counts', expected …")
    (tmp_path / "nb.tsv").write_text("spam\tcheap pills\nham\tlunch\n")
    nb = {"task": "naive_bayes", "train.format": "sms", "train.path": str(tmp_path / "nb.tsv")}
    nbspark.fit(None, tmp_path / "nb", settings=nb)
    assert main(["query", "--model", str(tmp_path / "nb"), "--value", "A=1"]) == 2
    said = "nb: a naive Bayes model; query asks backoff and density models (nbspark predict scores"
    assert said in capsys.readouterr().err


@pytest.mark.spark
def test_an_ngram_file_is_a_table_of_its_positions(spark, tmp_path):
    """tests/data/ngrams.txt: 8 n-grams that parse (weight 43: their counts), 3 lines that do not
    (skipped and counted); columns A..E as written (no lower-casing); Spark and in process alike."""
    cfg = _cfg(FIXTURES / "ngrams.txt", **{"train.format": "ngrams"})
    local = train_density_in_process(cfg, tmp_path / "local")
    train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    assert local["columns"] == ["A", "B", "C", "D", "E"] and local["total"] == 43.0
    assert (local["stats"]["rows"], local["stats"]["malformed"]) == (8, 3)
    spark_rows, local_rows = _rows(tmp_path / "spark"), _rows(tmp_path / "local")
    assert spark_rows == local_rows
    model = nbspark.load(tmp_path / "spark")
    assert model.probability({"C": "affect"}, {"B": "not"}) == pytest.approx(9 / 10)  # 6 + 3 of 10
    assert model.probability({"C": "EFFECT"}) == pytest.approx(4 / 43)
    assert model.probability({"E": ""}, {"C": "effect"}) == pytest.approx(8 / 19)  # ": the effect is "


def test_a_density_model_answers_in_scikit_learns_shapes(tmp_path):
    """``score_samples`` and ``score`` as ``KernelDensity`` names them: the truth table's own log P of
    each row (the naive estimator's by hand), ``-inf`` for a row never seen, and their sum; the
    settings and columns as scikit-learn's estimators give them; ``clone`` refused. No JVM."""
    import numpy as np
    import pandas as pd
    from sklearn.base import clone

    (tmp_path / "abc.csv").write_text(TRUTH)
    train_density_in_process(
        _cfg(tmp_path / "abc.csv", **{"density.weight_column": "weight"}), tmp_path / "m"
    )
    model = nbspark.load(tmp_path / "m")
    rows = [{"A": a, "B": b, "C": c} for a, b, c in TABLE]
    logs = model.score_samples(rows)
    assert isinstance(logs, np.ndarray) and logs.dtype == np.float64 and logs.shape == (8,)
    assert logs.tolist() == pytest.approx([math.log(p) for p in TABLE.values()])
    assert model.score(rows) == pytest.approx(math.log(0.3 * 0.05 * 0.1 * 0.05 * 0.05 * 0.1 * 0.25 * 0.1))
    assert model.score_samples(pd.DataFrame(rows)).tolist() == logs.tolist()
    # naive: P(A) P(¬B) P(C) = 0.5 · 0.5 · 0.3
    assert model.score_samples([rows[5]], model="naive")[0] == pytest.approx(math.log(0.075))
    unseen = [{"A": "2", "B": "0", "C": "1"}, rows[0]]
    assert model.score_samples(unseen)[0] == -math.inf and model.score(unseen) == -math.inf
    assert model.score_samples([{**rows[0], "id": "7"}], extra_columns=["id"])[0] == pytest.approx(
        math.log(0.3)
    )
    assert model.get_params() == {"model": "joint", "m": 0.0}
    assert model.feature_names_in_.tolist() == ["A", "B", "C"] and model.n_features_in_ == 3
    classifier = model.classifier("C", model="naive", alpha=2)
    assert classifier.get_params() == {
        "target": "C",
        "model": "naive",
        "alpha": 2.0,
        "positive": None,
        "threshold": 0.5,
    }
    assert classifier.feature_names_in_.tolist() == ["A", "B"]
    for one, end in ((model, "copy.deepcopy, learn more with partial_fit"), (classifier, "copy.deepcopy")):
        with pytest.raises(TypeError, match=f"not an estimator to clone and fit: .* {end}$"):
            clone(one)


@pytest.mark.parametrize("how", ["--in-process", pytest.param("--spark", marks=pytest.mark.spark)])
def test_an_update_equals_training_on_everything(tmp_path, request, caplog, capsys, how):
    """``nbspark train --update`` of a density model adds the new rows' counts to the model's (a row in
    both files counted twice, as one train on both counts it): the count table and the manifest's
    total, distinct rows and values are those of one train on everything. The update counts the
    model's columns (a column the new file adds is left out, and said); a config naming other
    columns, or a file counted already, is refused."""
    if how == "--spark":
        request.getfixturevalue("spark")  # the session the command then uses
    lines = TRUTH.splitlines(keepends=True)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("".join(lines[:6]))  # the header and rows 0-4
    (tmp_path / "in" / "b.csv").write_text(lines[0] + "".join(lines[4:]))  # rows 3-7
    (tmp_path / "c.csv").write_text(
        lines[0].strip() + ",note\n" + "".join(line.strip() + f",n{i}\n" for i, line in enumerate(lines[4:]))
    )
    sets = ["--set=task=density", "--set=train.format=csv", "--set=density.weight_column=weight"]

    def train(path, *more):
        return main(["train", how, *sets, f"--set=train.path={path}", *more])

    assert train(tmp_path / "in", "--out", str(tmp_path / "all")) == 0
    assert train(tmp_path / "in" / "a.csv", "--out", str(tmp_path / "m")) == 0
    assert train(tmp_path / "in" / "b.csv", "--update", str(tmp_path / "m")) == 0
    assert train(tmp_path / "in" / "a.csv", "--out", str(tmp_path / "n")) == 0
    caplog.set_level("INFO", logger="nbspark")
    assert train(tmp_path / "c.csv", "--update", str(tmp_path / "n")) == 0
    assert "c.csv: column(s) note not modelled" in caplog.text
    everything = json.loads((tmp_path / "all" / "manifest.json").read_text())
    for model in ("m", "n"):
        mine, theirs = _rows(tmp_path / model), _rows(tmp_path / "all")
        assert [r[:3] for r in mine] == [r[:3] for r in theirs], model
        assert [r[3] for r in mine] == pytest.approx([r[3] for r in theirs], abs=1e-12), model
        updated = json.loads((tmp_path / model / "manifest.json").read_text())
        for key in ("columns", "total", "distinct_rows", "values", "count_rows"):
            assert updated[key] == pytest.approx(everything[key]), (model, key)
        assert updated["version"] == 2
    # by hand: rows 3 and 4 are in both files, each counted twice; the total is 1 + their weights
    assert everything["total"] == pytest.approx(1.0 + 0.05 + 0.05)
    assert nbspark.load(tmp_path / "m").probability({"A": "0", "B": "1", "C": "1"}) == pytest.approx(
        0.1 / 1.1
    )
    capsys.readouterr()
    assert train(tmp_path / "in" / "b.csv", "--update", str(tmp_path / "m")) == 1
    assert "b.csv was already counted into this model" in capsys.readouterr().err
    assert train(tmp_path / "c.csv", "--update", str(tmp_path / "m"), "--set=density.columns=A,B") == 1
    assert (
        "the model was counted with density.columns = [], this run has ['A', 'B']" in capsys.readouterr().err
    )


def _trained(tmp_path, name, lines):
    (tmp_path / f"{name}.csv").write_text("".join(lines))
    settings = {"density.weight_column": "weight"}
    train_density_in_process(_cfg(tmp_path / f"{name}.csv", **settings), tmp_path / name)
    return tmp_path / name


def test_partial_fit_row_by_row_counts_and_builds_the_densities_once_when_next_used(tmp_path, monkeypatch):
    """Rows counted one call at a time, as they arrive, equal the batch: each call counts its row,
    and what was counted is added to the densities when they next score, once (they were built at
    every call, from a copy of everything). No JVM."""
    from nbspark.density.model import DensityModel

    lines = TRUTH.splitlines(keepends=True)
    later = [dict(zip("ABC", line.split(",")[:3])) for line in lines[4:]]
    weights = [float(line.split(",")[3]) for line in lines[4:]]
    batch = nbspark.load(_trained(tmp_path, "b", lines[:6])).partial_fit(later, sample_weight=weights)
    rows = [dict(zip("ABC", key)) for key in TABLE]
    expected = batch.score_samples(rows).tolist()
    model = nbspark.load(_trained(tmp_path, "m", lines[:6]))
    builds = []
    real = DensityModel.with_rows
    monkeypatch.setattr(DensityModel, "with_rows", lambda self, rows: builds.append(1) or real(self, rows))
    for row, weight in zip(later, weights):
        model.partial_fit([row], sample_weight=[weight])
    assert builds == []
    assert model.score_samples(rows).tolist() == pytest.approx(expected) and len(builds) == 1
    assert model.score_samples(rows).tolist() == pytest.approx(expected) and len(builds) == 1


def test_partial_fit_then_save_equals_training_on_everything(tmp_path):
    """``partial_fit`` counts rows as training counts a table's, the model scores with them at once,
    and ``save()`` commits them as the next version: read again, the model is the one trained on
    every row (the two rows in both parts counted twice). Its manifest sums the totals exactly and
    marks the distinct rows and values as upper bounds. A row that cannot be counted is refused,
    naming it, and nothing of its batch is counted. No JVM."""
    lines = TRUTH.splitlines(keepends=True)
    everything = _trained(tmp_path, "all", [*lines, *lines[4:6]])  # rows 3 and 4 twice
    model = nbspark.load(_trained(tmp_path, "m", lines[:6]))  # the header and rows 0-4
    later = [dict(zip("ABC", line.split(",")[:3])) for line in lines[4:]]
    weights = [float(line.split(",")[3]) for line in lines[4:]]
    for bad, why in (
        ([{"A": "1", "B": "1"}], r"row 1 lacks column\(s\) C"),
        ([{"A": "1", "B": "1", "C": 1}], r"row 1: a cell is text .* got 1 for 'C'"),
        ([{"A": "1", "B": "1", "C": "0", "D": "x"}], r"column\(s\) the model does not know: 'D'"),
        ([{"A": "1", "B": "1", "C": "\ud83d"}], "row 1, column 'C' holds a lone surrogate"),
    ):
        with pytest.raises(ValueError, match=why):
            model.partial_fit(later[:1] + bad)
    with pytest.raises(ValueError, match=r"weight 1: -1.0 is not a finite number >= 0"):
        model.partial_fit(later[:2], sample_weight=[1.0, -1.0])
    assert model.probability({"A": "1", "B": "1", "C": "1"}) == 0.0  # row 7: none of the above counted
    model.partial_fit(later, sample_weight=weights)
    whole = nbspark.load(everything)
    rows = [dict(zip("ABC", key)) for key in TABLE]
    assert model.score_samples(rows).tolist() == pytest.approx(whole.score_samples(rows).tolist())
    assert model.save() == 2 and model.save() == 2  # nothing new: no version
    again = nbspark.load(tmp_path / "m")
    assert again.score_samples(rows).tolist() == pytest.approx(whole.score_samples(rows).tolist())
    manifest, reference = again.manifest, whole.manifest
    assert manifest["version"] == 2 and manifest["total"] == pytest.approx(reference["total"]) == 1.1
    assert manifest["bounds"] == ["distinct_rows", "values"]
    assert manifest["distinct_rows"] == 5 + 5 > reference["distinct_rows"] == 8  # a bound: 2 rows in both
    # an --update rewrites the model whole: its fields counted again, exact
    from nbspark.density.jobs import DENSITY
    from nbspark.spine.training import plan_training, train_model

    (tmp_path / "zero.csv").write_text(lines[0] + "0,0,0,0\n")  # a row that weighs nothing
    cfg = _cfg(tmp_path / "zero.csv", **{"density.weight_column": "weight"})
    plan = plan_training(cfg, resolve_input(cfg.train, None), tmp_path / "m", DENSITY, True, in_process=True)
    train_model(None, plan, DENSITY)
    folded = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert "parts" not in folded and folded["version"] == 3
    assert (folded["distinct_rows"], folded["values"]) == (8, {"A": 2, "B": 2, "C": 2})
    mine, theirs = _rows(tmp_path / "m"), _rows(everything)
    assert [r[:3] for r in mine] == [r[:3] for r in theirs]
    assert [r[3] for r in mine] == pytest.approx([r[3] for r in theirs], abs=1e-12)


@pytest.mark.spark
def test_a_saved_density_version_compacts_exact(spark, tmp_path):
    """``nbspark stream --compact`` folds a density model's deltas into one table, its distinct rows
    and values counted again (upper bounds before), the table the one of a train on every row."""
    from nbspark.app.stream import stream_main

    lines = TRUTH.splitlines(keepends=True)
    everything = _trained(tmp_path, "all", [*lines, *lines[4:6]])
    model = nbspark.load(_trained(tmp_path, "m", lines[:6]))
    model.partial_fit(
        [dict(zip("ABC", line.split(",")[:3])) for line in lines[4:]],
        sample_weight=[float(line.split(",")[3]) for line in lines[4:]],
    )
    assert model.save() == 2 and nbspark.load(tmp_path / "m").manifest["distinct_rows"] == 10
    sets = ["--set=task=density", "--set=train.format=csv", "--set=density.weight_column=weight"]
    assert stream_main([*sets, "--model", str(tmp_path / "m"), "--compact"]) == 0
    folded = json.loads((tmp_path / "m" / "manifest.json").read_text())
    reference = json.loads((everything / "manifest.json").read_text())
    assert "parts" not in folded and "bounds" not in folded and folded["version"] == 2
    for key in ("columns", "distinct_rows", "values", "count_rows"):
        assert folded[key] == reference[key], key
    assert folded["total"] == pytest.approx(reference["total"])
    mine, theirs = _rows(tmp_path / "m"), _rows(everything)
    assert [r[:3] for r in mine] == [r[:3] for r in theirs]
    assert [r[3] for r in mine] == pytest.approx([r[3] for r in theirs], abs=1e-12)


def test_the_command_scores_a_density_model_in_process_by_itself(tmp_path, capsys):
    """No JVM; counted by hand: 4 training rows, 3 outlooks, m = 1: the joint gives a row seen once
    (1 + 1/6) / 5, the naive model the product of each column's (count + 1/k) / 5."""
    (tmp_path / "t.csv").write_text("outlook,windy\nsunny,no\nsunny,yes\nrainy,no\novercast,no\n")
    settings = [
        "--set",
        "task=density",
        "--set",
        "train.format=csv",
        "--set",
        f"train.path={tmp_path / 't.csv'}",
    ]
    settings += [
        "--set",
        "test.format=csv",
        "--set",
        f"test.path={tmp_path / 't.csv'}",
        "--set",
        "density.m=1",
    ]
    assert main(["train", "--in-process", *settings, "--out", str(tmp_path / "m")]) == 0
    status, no_jvm, err = command_alone(
        ["classify", *settings, "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r")]
    )
    assert (status, no_jvm) == (0, True), err
    assert "scoring in process (--spark scores with Spark)" in err
    scored = pd.read_parquet(tmp_path / "r" / "predictions")
    first = scored.iloc[0]
    assert (first["outlook"], first["windy"]) == ("sunny", "no")
    assert first["log_density_joint"] == pytest.approx(math.log((1 + 1 / 6) / 5))
    naive = (2 + 1 / 3) / 5 * (3 + 1 / 2) / 5
    assert first["log_density_naive"] == pytest.approx(math.log(naive))
    pd.read_csv(tmp_path / "t.csv").astype("category").to_parquet(tmp_path / "t.parquet")
    parquet = ["--set", "test.format=parquet", "--set", f"test.path={tmp_path / 't.parquet'}"]
    code = main(
        [
            "classify",
            "--in-process",
            *settings,
            *parquet,
            "--model",
            str(tmp_path / "m"),
            "--out",
            str(tmp_path / "p"),
        ]
    )
    said = capsys.readouterr().err  # pandas' categories are Parquet dictionaries: Spark reads strings
    assert (
        code == 2 and "cannot score in process: " in said and "column 'outlook' of type dictionary" in said
    ), said
