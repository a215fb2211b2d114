"""Naive Bayes jobs in local mode on hand-made fixtures (tests/data/README.md)."""

import json
import math

import numpy as np
import pytest
from pyspark.testing import assertDataFrameEqual

import nbspark
from nbspark.errors import ConfigError, InputError
from nbspark.inputs.decoding import JVM_REPLACE
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.jobs import NAIVE_BAYES, classify_nb, load_nb_manifest, train_nb
from nbspark.naive_bayes.model import build_nb_model
from nbspark.settings.config import load_config
from nbspark.spine.training import read_counts
from nbspark.storage.tables import read_parquet_checked
from tests.inputs.test_lines import HOSTILE_LINES, expected_parse

pytestmark = pytest.mark.spark


def _model(spark, model_dir, cfg):
    """The broadcast model of a trained model directory, as classify builds it."""
    manifest = load_nb_manifest(model_dir)
    counts = read_counts(spark, model_dir, NAIVE_BAYES, manifest).collect()
    return build_nb_model(counts, manifest["model"], cfg.nb.alpha, cfg.nb.var_smoothing)


def china_cfg(fixtures, tmp_path, **extra):
    return load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "train.format": "tsv",
            "train.path": str(fixtures / "china_train.tsv"),
            "test.format": "tsv",
            "test.path": str(fixtures / "china_test.tsv"),
            "model_dir": str(tmp_path / "model"),
            **extra,
        },
    )


def fit(spark, cfg, out):
    return train_nb(spark, cfg, resolve_input(cfg.train, None), out)


def test_china_multinomial_counts_and_scores(spark, fixtures, tmp_path):
    cfg = china_cfg(fixtures, tmp_path)
    manifest = fit(spark, cfg, tmp_path / "model")
    stats = manifest["stats"]
    assert stats["lines_read"] == 8 and stats["documents"] == 5 and stats["blank_lines"] == 1
    assert (stats["malformed"], stats["malformed.fields"], stats["malformed.labels"]) == (2, 1, 1)
    assert manifest["label_counts"] == {"c": 4, "j": 2}  # d8 counts once for c and once for j
    model = _model(spark, tmp_path / "model", cfg)
    p = {
        c: dict(zip(sorted(model.vocab, key=model.vocab.get), np.exp(model.weights[i])))
        for i, c in enumerate(model.classes)
    }
    # c: chinese 6+1, 11 tokens; j: chinese 1+1, tokyo 1, 6 tokens; |V| = 8 (quoted and tab from d8)
    assert p["c"]["chinese"] == pytest.approx(7 / 19) and p["c"]["tokyo"] == pytest.approx(1 / 19)
    assert p["j"]["chinese"] == pytest.approx(3 / 14) and p["j"]["tokyo"] == pytest.approx(2 / 14)
    assert np.exp(model.class_log_prior) == pytest.approx([4 / 6, 2 / 6])

    metrics = classify_nb(spark, cfg, tmp_path / "model", resolve_input(cfg.test, None), tmp_path / "r")
    assert metrics["documents"] == 3 and metrics["accuracy"] == pytest.approx(1 / 3)
    assert metrics["unknown_label_count"] == 1 and metrics["unseen_gold_labels"] == ["k"]
    assert metrics["unknown_features"] == 1  # "osaka"
    assert metrics["input_stats"]["empty_documents"] == 1
    preds = {r["id"]: r for r in spark.read.parquet(str(tmp_path / "r" / "predictions")).collect()}
    d5 = preds["d5"]
    c = math.log(4 / 6) + 3 * math.log(7 / 19) + 2 * math.log(1 / 19)
    j = math.log(2 / 6) + 3 * math.log(3 / 14) + 2 * math.log(2 / 14)
    assert d5["predicted"] == ["c"] and d5["probability"] == pytest.approx(1 / (1 + math.exp(j - c)))
    assert d5["ranked_labels"] == ["c", "j"] and sum(d5["ranked_probabilities"]) == pytest.approx(1.0)
    assert preds["d9"]["predicted"] == ["c"]  # empty document: the prior decides


def test_one_partition_equals_many(spark, fixtures, tmp_path):
    fit(spark, china_cfg(fixtures, tmp_path, partitions="1"), tmp_path / "one")
    fit(spark, china_cfg(fixtures, tmp_path, partitions="3"), tmp_path / "three")
    one = read_parquet_checked(spark, tmp_path / "one" / "counts", COUNT_DDL)
    three = read_parquet_checked(spark, tmp_path / "three" / "counts", COUNT_DDL)
    assertDataFrameEqual(one, three, checkRowOrder=False)


@pytest.mark.parametrize("piece_bytes", [None, "256"])
def test_table_rows_are_numbered_in_file_order_whatever_the_pieces(spark, tmp_path, piece_bytes):
    """A table's records are named, and held out, by their position in the files in path order.
    In pieces of 256 bytes, Spark's partitions put b.csv's pieces before a.csv's last, shorter
    one: zipWithIndex numbered the rows otherwise, so the hold-out moved with the cores."""
    from nbspark.inputs.stats import is_stat
    from nbspark.naive_bayes.inputs import records_rdd

    (tmp_path / "t").mkdir()
    names = []
    for name, n in (("a.csv", 140), ("b.csv", 70)):
        lines = [f"{name[0]}{i},{'yes' if i % 3 else 'no'}" for i in range(n)]
        (tmp_path / "t" / name).write_text("x,label\n" + "\n".join(lines) + "\n")
        names += [line.split(",")[0] for line in lines]
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "categorical",
            "nb.label_column": "label",
            "train.format": "csv",
            "train.path": str(tmp_path / "t"),
        },
    )
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", piece_bytes or before)
    try:
        mixed, _, _ = records_rdd(spark, resolve_input(cfg.train, None), cfg)
        got = sorted((int(r.id), r.categorical["x"]) for r in mixed.collect() if not is_stat(r))
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", before)
    assert got == list(enumerate(names))


@pytest.mark.parametrize("engine", ["auto", "arrow", "dataframe"])
def test_failfast_and_wrong_input_kind(spark, fixtures, tmp_path, engine):
    with pytest.raises(InputError, match=r"china_train.tsv:5: malformed line \(fields\)"):
        fit(spark, china_cfg(fixtures, tmp_path, mode="failfast", engine=engine), tmp_path / "m")
    with pytest.raises(ConfigError, match="needs a table"):  # refused before anything is counted
        fit(spark, china_cfg(fixtures, tmp_path, **{"nb.model": "gaussian"}), tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_weather_mixed_table(spark, fixtures, tmp_path):
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "mixed",
            "nb.label_column": "play",
            "nb.numeric_columns": "temperature,humidity",
            "nb.categorical_columns": "outlook,windy",
            "train.format": "csv",
            "train.path": str(fixtures / "weather.csv"),
        },
    )
    manifest = fit(spark, cfg, tmp_path / "w")
    assert manifest["stats"]["documents"] == 14 and manifest["stats"]["malformed.numeric"] == 1
    model = _model(spark, tmp_path / "w", cfg)
    assert model.classes == ("no", "yes") and model.numeric == ("humidity", "temperature")
    # Witten & Frank: temperature mean 73 (yes) and 74.6 (no); humidity 79.1 and 86.2; sample sd
    assert model.theta[:, 1] == pytest.approx([74.6, 73.0])
    assert model.theta[:, 0] == pytest.approx([86.2, 79.1], abs=0.05)
    sample_sd = np.sqrt((model.var - model.epsilon) * np.array([[5 / 4], [9 / 8]]))
    assert sample_sd[:, 1] == pytest.approx([7.9, 6.2], abs=0.05)
    assert sample_sd[:, 0] == pytest.approx([9.7, 10.2], abs=0.05)
    # categorical part: P(outlook=sunny | yes) = (2+1)/(9+3)
    i = model.vocab[("outlook", "sunny")]
    assert math.exp(model.weights[1, i]) == pytest.approx(3 / 12)


def test_a_parquet_table_counts_as_its_csv(spark, fixtures, tmp_path):
    """The weather table as typed Parquet, in two files, gives the CSV's model (its malformed row
    left out of both): the same Gaussian statistics and outlook probabilities."""
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    with open(fixtures / "weather.csv", newline="") as f:
        good = [r for r in csv.DictReader(f) if r["temperature"].isdigit() and r["humidity"].isdigit()]
    (tmp_path / "pq").mkdir()
    for name, part in (("a.parquet", good[:6]), ("b.parquet", good[6:])):
        pq.write_table(
            pa.table(
                {
                    "outlook": [r["outlook"] for r in part],
                    "temperature": [int(r["temperature"]) for r in part],
                    "humidity": [float(r["humidity"]) for r in part],
                    "play": [r["play"] for r in part],
                }
            ),
            tmp_path / "pq" / name,
        )
    models = []
    for fmt, path in (("csv", fixtures / "weather.csv"), ("parquet", tmp_path / "pq")):
        cfg = load_config(
            None,
            {
                "task": "naive_bayes",
                "nb.model": "mixed",
                "nb.label_column": "play",
                "nb.numeric_columns": "temperature,humidity",
                "nb.categorical_columns": "outlook",
                "train.format": fmt,
                "train.path": str(path),
            },
        )
        assert fit(spark, cfg, tmp_path / fmt)["stats"]["documents"] == 14
        models.append(_model(spark, tmp_path / fmt, cfg))
    csv_model, parquet_model = models
    assert parquet_model.classes == csv_model.classes and parquet_model.numeric == csv_model.numeric
    assert parquet_model.theta == pytest.approx(csv_model.theta) and parquet_model.var == pytest.approx(
        csv_model.var
    )
    assert parquet_model.vocab == csv_model.vocab and parquet_model.weights == pytest.approx(
        csv_model.weights
    )
    # a list column (an embedding, say) was a category whose values were its rows' reprs: refused
    # unless the feature columns are named without it
    pq.write_table(
        pa.table({"outlook": ["sunny", "rain"], "vec": [[0.1, 0.2], [0.3]], "play": ["yes", "no"]}),
        tmp_path / "vec.parquet",
    )
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "mixed",
            "nb.label_column": "play",
            "train.format": "parquet",
            "train.path": str(tmp_path / "vec.parquet"),
        },
    )
    with pytest.raises(
        InputError,
        match="column 'vec' is array<double>, which cannot be a label or a table feature; name the feature",
    ):
        fit(spark, cfg, tmp_path / "vec")
    named = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "mixed",
            "nb.label_column": "play",
            "train.format": "parquet",
            "train.path": str(tmp_path / "vec.parquet"),
            "nb.categorical_columns": "outlook",
        },
    )
    assert fit(spark, named, tmp_path / "vec")["columns"] == {"numeric": [], "categorical": ["outlook"]}


def test_csv_files_whose_headers_differ_are_refused(spark, tmp_path, capfd):
    """Spark reads every CSV file of an input by the first file's header, by position: b.csv's
    columns in another order made its colours labels and its labels colours, with a WARN in the
    log only (4 classes: blue, no, red, yes). Now the run fails, naming the file and both headers,
    before Spark's reader runs a task (whose failure its loggers printed, 160 lines, above the line)."""
    from nbspark.app.cli import train_main

    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.csv").write_text("colour,label\nred,yes\nred,yes\nblue,no\n")
    (tmp_path / "t" / "b.csv").write_text("label,colour\nno,blue\nyes,red\n")
    args = [
        "--set",
        "task=naive_bayes",
        "--set",
        "nb.model=categorical",
        "--set",
        "nb.label_column=label",
        "--set",
        "train.format=csv",
        "--set",
        f"train.path={tmp_path / 't'}",
        "--out",
        str(tmp_path / "m"),
    ]
    capfd.readouterr()
    assert train_main(args) == 1
    said = capfd.readouterr().err  # the JVM's loggers write to the process's stderr
    assert said.strip().splitlines()[-1] == (
        f"train.py: error: {tmp_path}/t/b.csv: its header (label, colour) is not a.csv's "
        "(colour, label); the CSV files of one input share one header"
    )
    assert "CSV header does not conform" not in said and "ERROR Executor" not in said
    assert not (tmp_path / "m").exists()
    (tmp_path / "t" / "b.csv").write_text(
        "colour,label\nblue,no\nred,yes\n"
    )  # the same order: read as one table
    assert train_main(args) == 0
    assert load_nb_manifest(tmp_path / "m")["label_counts"] == {"no": 2, "yes": 3}


def test_a_table_model_outside_spark(spark, fixtures, tmp_path, capsys, caplog):
    """nbspark.load and ``nbspark predict`` score rows of a mixed model; what is not a row is refused in one
    line."""
    import json

    import nbspark
    from nbspark.app.command import main

    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "mixed",
            "nb.label_column": "play",
            "nb.numeric_columns": "temperature,humidity",
            "nb.categorical_columns": "outlook,windy",
            "train.format": "csv",
            "train.path": str(fixtures / "weather.csv"),
        },
    )
    fit(spark, cfg, tmp_path / "w")
    loaded = nbspark.load(tmp_path / "w")
    assert (
        nbspark.load(tmp_path / "w", alpha=0.5, var_smoothing=1e-3).alpha == 0.5
    )  # a mixed model takes both
    day = {
        "outlook": "sunny",
        "temperature": 66,
        "humidity": 90,
        "windy": "TRUE",
    }  # Witten & Frank's new day: play = no
    assert loaded.predict([day]).tolist() == ["no"]
    # a missing key, None or NaN leaves that feature out, as a missing cell in the classify job
    part = {"outlook": "sunny", "windy": "TRUE"}
    assert loaded.predict_proba([part])[0] == pytest.approx(
        loaded.predict_proba([{**part, "humidity": None, "temperature": float("nan")}])[0]
    )
    # so does a number past a double's range, an int's as a float's (10**400 was an OverflowError)
    for huge in (10**400, -(10**400), float("inf")):
        assert loaded.predict_proba([{**part, "humidity": huge}])[0] == pytest.approx(
            loaded.predict_proba([part])[0]
        )
    assert main(["predict", "--model", str(tmp_path / "w"), "--json", json.dumps(day)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["label"] == "no" and result["probabilities"]["no"] == pytest.approx(
        loaded.predict_proba([day])[0][0]
    )
    with pytest.raises(TypeError, match="scores rows, each a mapping of column -> value"):
        loaded.predict(["sunny,66,90,TRUE"])
    with pytest.raises(TypeError, match="expected a list of rows, got one dict"):
        loaded.predict(day)
    import pandas as pd

    frame = pd.DataFrame(
        [day, {"outlook": "rainy", "temperature": 70.0, "humidity": None, "windy": "FALSE"}]
    )  # None: NaN
    assert loaded.predict_proba(frame) == pytest.approx(
        loaded.predict_proba([day, {"outlook": "rainy", "temperature": 70.0, "windy": "FALSE"}])
    )
    with pytest.raises(ValueError, match="row 1 has none of the model's columns") as refused:
        loaded.predict(
            [day, {"Outlook": "sunny", "Windy\n": "TRUE"}]
        )  # misspelt keys: not the prior alone, silently
    assert str(refused.value).endswith("its keys: 'Outlook', 'Windy\\n'")  # quoted: one line
    # one key misspelt among known ones would be a missing cell in every row: refused, naming it and the
    # model's columns (the label column is not a feature, and may be there); an extra column declared is
    # left out
    with pytest.raises(ValueError, match="column\\(s\\) the model does not know: 'humidty'; its columns: "):
        loaded.predict([{**day, "humidty": 90, "play": "no"}, day])
    both = loaded.predict([{**day, "id": 7, "play": "no"}, day], extra_columns=["id"])
    assert both.tolist() == ["no", "no"]
    capsys.readouterr()  # the command above set up the nbspark logger's handler on stderr
    with pytest.raises(ValueError, match="row 0, column 'humidity': 'high' is not a number"):
        loaded.predict([{**day, "humidity": "high"}])
    assert main(["predict", "--model", str(tmp_path / "w"), "sunny,66,90,TRUE"]) == 1
    assert capsys.readouterr().err.strip() == (
        "nbspark predict: error: a table model scores rows: give each as a JSON object of column -> "
        "value, or a JSON array of its cells in the model's column order, got 'sunny,66,90,TRUE'"
    )


def test_a_csv_cell_is_its_text_in_training_as_in_classify(spark, tmp_path, capsys):
    """Schema inference only finds the numeric columns: a label or category keeps the file's text
    ("01", "TRUE"), as classify reads it, never what inference made of it (1, True)."""
    import csv

    import nbspark
    from nbspark.report.format import format_nb_train_report

    rows = [
        ("TRUE", "1.50", "01"),
        ("TRUE", "2.00", "01"),
        ("FALSE", "9.25", "02"),
        ("TRUE", "8.75", "02"),
        ("FALSE", "", "01"),
    ]
    table = tmp_path / "t.csv"
    table.write_text("flag,size,grade\n" + "".join(",".join(r) + "\n" for r in rows))
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "mixed",
            "nb.label_column": "grade",
            "train.format": "csv",
            "train.path": str(table),
            "test.format": "csv",
            "test.path": str(table),
        },
    )
    manifest = fit(spark, cfg, tmp_path / "m")
    assert manifest["columns"] == {"numeric": ["size"], "categorical": ["flag"]}
    report = format_nb_train_report(manifest, tmp_path / "m")
    assert (
        "numeric columns: size   categorical columns: flag" in report
        and "missing cells (feature left out): 1" in report
    )
    assert (
        "\ndocuments per class: 01=3, 02=2\n" in report
    )  # a header read as a row would show as a class of 1
    loaded = nbspark.load(tmp_path / "m")
    assert loaded.classes_ == ("01", "02")
    # P(flag = TRUE | 01) = (2 + 1) / (3 + 2), P(flag = FALSE | 02) = (1 + 1) / (2 + 2), by hand
    weights = dict(
        zip(sorted(loaded.model.vocab, key=loaded.model.vocab.get), np.exp(loaded.model.weights.T))
    )
    assert weights[("flag", "TRUE")][0] == pytest.approx(3 / 5) and weights[("flag", "FALSE")][
        1
    ] == pytest.approx(2 / 4)
    metrics = classify_nb(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r")
    assert (
        metrics["documents"] == 5 and metrics["unknown_features"] == 0 and metrics["unknown_label_count"] == 0
    )
    # the test rows are the training rows: allowed, and the report says so
    assert (
        metrics["test_is_training_data"]
        and "figures are on the training data" in (tmp_path / "r" / "report.txt").read_text()
    )
    with table.open() as f:
        records = list(csv.DictReader(f))
    right = sum(p == r["grade"] for p, r in zip(loaded.predict(records), records))
    assert metrics["accuracy"] == pytest.approx(right / 5)
    # a Python value that is no category the model saw is refused, not scored as unseen
    with pytest.raises(
        ValueError, match=r"row 0, column 'flag': True is not a value the model saw there \('FALSE', 'TRUE'\)"
    ):
        loaded.predict([{"flag": True, "size": 2}])
    assert loaded.predict_proba([{"flag": "TRUE", "size": 2}]) == pytest.approx(
        loaded.predict_proba([{"flag": "TRUE", "size": "2"}])
    )


def test_classify_refuses_a_test_part_that_holds_training_records(spark, fixtures, tmp_path, capsys):
    """Trained on the seeded part "train" of china_train.tsv, tested on its part "test" under
    another seed: refused before any work, in one line (exit 2); the same seed runs."""
    from nbspark.app.cli import classify_main

    path = fixtures / "china_train.tsv"
    split = {"train.path": str(path), "train.holdout": "0.5", "train.seed": "1", "train.splits": "train"}
    cfg = china_cfg(fixtures, tmp_path, **split)
    trained = fit(spark, cfg, tmp_path / "model")
    # of its five documents, d1 and d4 fall in part "test" under seed 1 (parsers.holdout_part), d2, d3
    # and d8 in "train": the training counts 3 and says it held 2 out
    assert (trained["stats"]["documents"], trained["stats"]["held_out"]) == (3, 2)
    test = [
        "--set",
        "task=naive_bayes",
        "--set",
        "nb.tokenizer=words",
        "--set",
        "test.format=tsv",
        "--set",
        f"test.path={path}",
        "--set",
        "test.holdout=0.5",
        "--set",
        "test.splits=test",
        "--model",
        str(tmp_path / "model"),
    ]
    assert classify_main([*test, "--set", "test.seed=2", "--out", str(tmp_path / "r")]) == 2
    err = (
        capsys.readouterr().err.strip().splitlines()[-1:]
    )  # after the training's log lines, where a command set up logging
    assert err == [
        f"classify.py: error: the test input reads records the model was trained on ({path}): test.holdout, "
        "test.seed = 0.5, 2 split it otherwise than the model's training did (0.5, 1): use the same "
        "holdout and seed"
    ]
    assert not (tmp_path / "r").exists()
    # the same split runs; the command leaves a session it did not start (the tests') running, its
    # settings as they were (the jobs' defaults were set on it, and changed later tests' part files)
    key = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"
    before = spark.conf.get(key, None)
    assert classify_main([*test, "--set", "test.seed=1", "--out", str(tmp_path / "r")]) == 0
    assert spark.range(3).count() == 3 and spark.conf.get(key, None) == before
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (metrics["input_stats"]["documents"], metrics["input_stats"]["held_out"]) == (2, 3)
    report = (tmp_path / "r" / "report.txt").read_text()
    assert "held out: 3 records (test.holdout's other part, not in test.splits)" in report


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
def test_all_engines_give_the_same_table(spark, fixtures, tmp_path, model):
    tables, stats, manifests = [], [], []
    for engine in ("pairs", "combine", "dataframe", "arrow", "arrow-small-batches"):
        cfg = china_cfg(fixtures, tmp_path, engine=engine.split("-")[0], **{"nb.model": model})
        # two rows per Arrow batch: the in-task combining must sum across batches
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "2" if "small" in engine else "10000")
        try:
            manifests.append(fit(spark, cfg, tmp_path / engine))
        finally:
            spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")
        stats.append(manifests[-1]["stats"])
        tables.append(read_parquet_checked(spark, tmp_path / engine / "counts", COUNT_DDL))
    for table in tables[1:]:
        assertDataFrameEqual(table, tables[0], checkRowOrder=False)
    keys = ("lines_read", "documents", "blank_lines", "malformed", "malformed.fields", "malformed.labels")
    assert [{k: s.get(k) for k in keys} for s in stats[1:]] == [{k: stats[0].get(k) for k in keys}] * 4
    # the SQL engines take these from the aggregate, the others read the written table back
    assert {(tuple(m["label_counts"].items()), m["features"]) for m in manifests} == {
        (tuple(manifests[0]["label_counts"].items()), manifests[0]["features"])
    }
    # the SQL engines find the first malformed lines after counting; the same ones, by file and line
    assert [b["line_number"] for b in manifests[0]["malformed_examples"]] == [5, 6]
    for m in manifests[1:]:
        assert m["malformed_examples"] == manifests[0]["malformed_examples"]


def test_every_engine_and_scorer_tokenizes_any_script_as_python(spark, tmp_path):
    """Python's ``\\w+`` after ``str.lower``: a word-final Σ is ς, İ splits its word, combining marks
    and connector punctuation split words. The arrow tokenizer (utf8proc's lower case) and the
    dataframe engine (Java's ``(?U)\\W``) each differed on some of these."""
    import re
    from collections import Counter

    texts = [
        "ΟΔΟΣ ΣΟΦΟΣ Σ",
        "İstanbul İİ",
        "cafe\u0301 cafe",
        "हिन्दी भाषा",
        "a\u203fb",
        "ǅemal",
        "東京 タワー",
        "Ⅻ ①",
        "ﬁne ŉ",
        "plain ascii",
    ]
    path = tmp_path / "scripts.tsv"
    path.write_text("".join(f"d{i}\t{'ab'[i % 2]}\t{t}\n" for i, t in enumerate(texts)), encoding="utf-8")
    expected = Counter(("ab"[i % 2], w) for i, t in enumerate(texts) for w in re.findall(r"\w+", t.lower()))
    assert expected[("a", "οδος")] == 1 and expected[("b", "i")] == 3  # what the plain count says of them
    base = {
        "task": "naive_bayes",
        "nb.tokenizer": "words",
        "train.format": "tsv",
        "train.path": str(path),
        "test.format": "tsv",
        "test.path": str(path),
    }
    for engine in ("combine", "dataframe", "arrow"):
        cfg = load_config(None, {**base, "engine": engine})
        fit(spark, cfg, tmp_path / engine)
        rows = read_parquet_checked(spark, tmp_path / engine / "counts", COUNT_DDL).collect()
        assert {(r["label"], r["feature"]): r["n"] for r in rows if r["event"] == "YX"} == dict(expected), (
            engine
        )
    predictions = {}
    for scoring in ("broadcast", "arrow", "join"):
        cfg = load_config(None, {**base, "scoring": scoring})
        metrics = classify_nb(
            spark, cfg, tmp_path / "combine", resolve_input(cfg.test, None), tmp_path / f"r-{scoring}"
        )
        assert metrics["unknown_features"] == 0, scoring
        rows = spark.read.parquet(str(tmp_path / f"r-{scoring}" / "predictions")).collect()
        predictions[scoring] = sorted((r["id"], r["predicted"][0], round(r["probability"], 12)) for r in rows)
    assert predictions["arrow"] == predictions["broadcast"] == predictions["join"]


@pytest.mark.parametrize("kind", ["multinomial", "bernoulli"])
def test_a_class_of_no_example_yet_is_scored_alike_by_every_scorer_and_stage(spark, tmp_path, kind):
    """A model saved by ``partial_fit`` with a class named in ``classes`` and never counted (a count
    table row of 0): the classify job's scorers and the pyspark.ml stage give each test document the
    posteriors of ``nbspark.load`` (the join scorer stopped on math.log(0), the prior of that class)."""
    from nbspark.ml import CountingNaiveBayesModel

    nbspark.NaiveBayes(model=kind, tokenizer="words").partial_fit(
        ["a b a", "c d", "a c"], ["x", "y", "x"], classes=["x", "y", "z"]
    ).save(tmp_path / "m")
    texts = ["a b a", "c d", "a c e"]
    (tmp_path / "t.tsv").write_text(
        "".join(f"d{i}\t{y}\t{t}\n" for i, (y, t) in enumerate(zip("xyx", texts)))
    )
    want = nbspark.load(tmp_path / "m").predict_proba(texts)
    assert want[:, 2].tolist() == [0.0, 0.0, 0.0]
    settings = {"task": "naive_bayes", "nb.model": kind, "nb.tokenizer": "words", "test.format": "tsv"}
    for scoring in ("broadcast", "arrow", "join"):
        cfg = load_config(None, {**settings, "test.path": str(tmp_path / "t.tsv"), "scoring": scoring})
        classify_nb(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / f"r-{scoring}")
        rows = sorted(spark.read.parquet(str(tmp_path / f"r-{scoring}" / "predictions")).collect())
        got = [(r["predicted"][0], r["probability"]) for r in rows]
        assert got == [("xyx"[i], pytest.approx(want[i].max(), abs=1e-12)) for i in range(3)], scoring
    stage = CountingNaiveBayesModel.fromModelDir(str(tmp_path / "m")).setFeaturesCol("text")
    frame = spark.createDataFrame([(t,) for t in texts], ["text"])
    probabilities = [r["probability"].toArray() for r in stage.transform(frame).collect()]
    np.testing.assert_allclose(probabilities, want, atol=1e-12)


@pytest.mark.parametrize("fmt", ["tsv", "sms"])
def test_undecodable_bytes_are_counted_and_reported_by_every_engine_and_scorer(spark, tmp_path, fmt):
    """Latin-1 bytes in a UTF-8 read: the Python engines counted them, the SQL engines and the arrow
    scorer did not, and no naive Bayes report said so. By hand: one U+FFFD per lone byte here
    (\\xe9, \\xff, \\xc3 before a space), one for an encoded surrogate (\\xed\\xa0\\x80: the JVM's
    rule; Python's ``replace`` makes three), and the U+FFFD the file itself holds."""
    from nbspark.report.format import format_nb_train_report
    from nbspark.spine.classifying import results_report

    lines = [b"caf\xe9 ok", b"free \xff prize", b"caf\xc3 x \xef\xbf\xbd y", b"plain", b"x \xed\xa0\x80 y"]
    head = [
        b"d%d\t%s\t" % (i, b"ab"[i % 2 : i % 2 + 1]) if fmt == "tsv" else b"%s\t" % b"ab"[i % 2 : i % 2 + 1]
        for i in range(len(lines))
    ]
    path = tmp_path / f"latin.{fmt}"
    path.write_bytes(
        b"".join(h + t + b"\n" for h, t in zip(head, lines))
        + (b"d9\tb\xe9\tlabel\n" if fmt == "tsv" else b"b\xe9\tlabel\n")
    )
    base = {
        "task": "naive_bayes",
        "nb.tokenizer": "words",
        "train.format": fmt,
        "train.path": str(path),
        "test.format": fmt,
        "test.path": str(path),
    }
    for engine in ("combine", "dataframe", "arrow"):
        manifest = fit(spark, load_config(None, {**base, "engine": engine}), tmp_path / engine)
        assert manifest["stats"]["decode_replacements"] == 6, engine
        assert (
            "undecodable bytes replaced by U+FFFD: 6 (is the input UTF-8?)"
            in format_nb_train_report(manifest, "m").splitlines()
        ), engine
    for scoring in ("broadcast", "arrow") if fmt == "tsv" else ("broadcast",):  # the arrow scorer reads tsv
        cfg = load_config(None, {**base, "scoring": scoring})
        metrics = classify_nb(
            spark, cfg, tmp_path / "combine", resolve_input(cfg.test, None), tmp_path / f"r-{scoring}"
        )
        assert metrics["input_stats"]["decode_replacements"] == 6, scoring
        assert (
            "undecodable bytes replaced by U+FFFD: 6 (is the input UTF-8?)"
            in results_report(lambda m: "", metrics).splitlines()
        )


@pytest.mark.parametrize("fmt", ["tsv", "sms"])
def test_a_utf16_file_among_utf8_ones_is_malformed_lines_not_classes(spark, tmp_path, fmt):
    """An Excel "Unicode Text" export (UTF-16 with a byte-order mark) beside UTF-8 files: read as
    UTF-8 its labels were spaced out with NULs, so each became a class of its own, and with the SQL
    engines a label opening with NUL passed for a statistics row (a document counted, its class
    gone). Now its lines are malformed (nul) in every engine and scorer. By hand: the UTF-16 file's
    two lines end at its two \n bytes, each followed by the \x00 that opens the next line, and the
    lone \x00 after the last \n is a third line: 3 malformed, 4 documents, the UTF-8 file's."""
    from nbspark.report.format import format_nb_train_report

    head = (lambda i: f"d{i}\t") if fmt == "tsv" else (lambda i: "")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text(
        "".join(
            f"{head(i)}{y}\t{t}\n" for i, (y, t) in enumerate([("ham", "see you"), ("spam", "win cash")] * 2)
        )
    )
    (tmp_path / "in" / "b.txt").write_bytes(
        f"{head(7)}ham\thello again\n{head(8)}spam\tclaim your prize\n".encode("utf-16")
    )
    base = {
        "task": "naive_bayes",
        "nb.tokenizer": "words",
        "train.format": fmt,
        "train.path": str(tmp_path / "in"),
        "test.format": fmt,
        "test.path": str(tmp_path / "in"),
    }
    for engine in ("pairs", "combine", "dataframe", "arrow"):
        manifest = fit(spark, load_config(None, {**base, "engine": engine}), tmp_path / engine)
        assert manifest["label_counts"] == {"ham": 2, "spam": 2}, engine
        stats = manifest["stats"]
        assert (stats["documents"], stats["malformed"], stats["malformed.nul"]) == (4, 3, 3), engine
        assert (
            f"  {tmp_path}/in/b.txt:1 (nul: a NUL character before its text: a UTF-16 file? nbspark reads "
            "UTF-8 (iconv -f UTF-16 -t UTF-8)): "
            in "\n".join(format_nb_train_report(manifest, "m").splitlines())
        ), engine
    with pytest.raises(InputError, match=r"b\.txt:1: malformed line \(nul: a NUL character before its text"):
        fit(spark, load_config(None, {**base, "mode": "failfast", "engine": "arrow"}), tmp_path / "ff")
    for scoring in ("broadcast", "arrow") if fmt == "tsv" else ("broadcast",):  # the arrow scorer reads tsv
        cfg = load_config(None, {**base, "scoring": scoring})
        metrics = classify_nb(
            spark, cfg, tmp_path / "combine", resolve_input(cfg.test, None), tmp_path / f"r-{scoring}"
        )
        assert metrics["input_stats"]["malformed.nul"] == 3, scoring
        assert metrics["documents"] == 4, scoring


def test_python_decodes_bad_utf8_as_the_jvm_does(spark, tmp_path):
    """The arrow paths decode Spark's unchecked bytes in Python (``inputs.lines.jvm_decoded``); the
    Python engines get lines the JVM decoded (Hadoop's line reader), the SQL parse decodes them in
    Spark. On 20,000 random lines made mostly of the bytes UTF-8's rules turn on (leads,
    continuations, C0, C1, E0, ED, F0, F4, F5, FF, cut-off sequences) all give the same strings,
    where Python's own ``replace`` differs on some."""
    import random

    import pyarrow as pa

    from nbspark.inputs.decoding import JVM_REPLACE
    from nbspark.inputs.files import ngram_lines
    from nbspark.inputs.lines import jvm_decoded
    from nbspark.naive_bayes.inputs import decoded_lines
    from nbspark.storage.locations import location

    rng = random.Random(5)
    pool = [
        0x41,
        0x20,
        0x09,
        0x80,
        0x8F,
        0x90,
        0x9F,
        0xA0,
        0xBF,
        0xC0,
        0xC1,
        0xC2,
        0xDF,
        0xE0,
        0xE1,
        0xEC,
        0xED,
        0xEE,
        0xEF,
        0xF0,
        0xF1,
        0xF3,
        0xF4,
        0xF5,
        0xF7,
        0xF8,
        0xFF,
    ]
    lines = [
        bytes(
            rng.choice(pool) if rng.random() < 0.9 else rng.choice(b"abc\x00\x7f\xce\xe2\xf0")
            for _ in range(rng.randrange(1, 9))
        )
        for _ in range(20_000)
    ]
    path = tmp_path / "bytes.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    frame = spark.read.text(str(path))
    jvm = [r.value for r in frame.collect()]
    sql = [r.value for r in decoded_lines(frame).collect()]
    arrow = [
        r.value
        for r in frame.mapInArrow(
            lambda batches: (
                pa.RecordBatch.from_arrays([jvm_decoded(b.column("value"))], ["value"]) for b in batches
            ),
            "value STRING",
        ).collect()
    ]
    assert len(jvm) == len(lines)
    hadoop = [
        line
        for _, _, line in sorted(
            ngram_lines(spark.sparkContext, [location(str(path))]).collect(), key=lambda r: r[1]
        )
    ]
    assert hadoop == jvm  # the Python engines' reader
    assert sql == jvm
    assert arrow == jvm
    assert [b.decode("utf-8", JVM_REPLACE) for b in lines] == jvm
    assert sum(b.decode("utf-8", "replace") != j for b, j in zip(lines, jvm)) > 50  # the rules differ


def _arrow_parse(lines, fmt: str):
    """The arrow engine's and the arrow scorer's parse of a text DataFrame: Spark's lines, their
    bytes unchecked, decoded and cut by ``inputs.lines`` in a Python task."""
    from nbspark.inputs.lines import jvm_decoded, parse_lines

    ddl = "id STRING, labels ARRAY<STRING>, text STRING, category STRING"
    return lines.mapInArrow(
        lambda batches: (parse_lines(jvm_decoded(b.column("value")), fmt) for b in batches), ddl
    )


@pytest.mark.parametrize("parse", ["sql", "arrow"])
@pytest.mark.parametrize("fmt", ["tsv", "sms"])
def test_the_sql_and_arrow_parses_of_spark_lines_are_the_rule_line_by_line(spark, tmp_path, fmt, parse):
    """``naive_bayes.inputs.text_lines`` (the SQL engine's parse, a twin) and ``inputs.lines.parse_lines``
    on Spark's lines (the arrow engine's and scorer's, their bytes decoded in Python) against the
    plain-Python statement of the rule (``tests.inputs.test_lines.expected_parse``), line by line:
    TABs in the text, white space Python strips and SQL's trim does not, missing fields, ids and
    labels, blank lines that hold TABs, non-ASCII and undecodable bytes."""
    from nbspark.naive_bayes.inputs import text_lines

    lines = HOSTILE_LINES[fmt]
    path = tmp_path / f"hostile.{fmt}"
    path.write_bytes(b"\n".join(lines) + b"\n")
    expected = [expected_parse(raw.decode("utf-8", JVM_REPLACE), fmt) for raw in lines]
    rows = (text_lines if parse == "sql" else _arrow_parse)(spark.read.text(str(path)), fmt).collect()
    got = [
        (r["category"], r["id"] if fmt == "tsv" else None, r["labels"], r["text"])
        if r["category"] == "documents"
        else (r["category"], None, None, None)
        for r in rows
    ]
    assert got == expected


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
def test_multilabel_documents_count_once_per_label_in_every_engine(spark, tmp_path, model):
    """Documents with several labels (a repeated one counts twice, as the Python parser keeps it),
    empty ones, and lines that are not documents: every engine's table equals a plain-Python count."""
    import random
    import re
    from collections import Counter

    rng = random.Random(11)
    words = ["Alpha", "beta", "GAMMA", "delta_1", "é", "x9"]
    lines, expected, docs = [], Counter(), Counter()
    for i in range(300):
        labels = [rng.choice("abc") for _ in range(rng.choice([1, 1, 2, 3]))]
        text = " ".join(rng.choice(words) for _ in range(rng.randrange(6))) + rng.choice(["", "!", " ..."])
        # labels stripped of any white space Python's str.strip takes (SQL's trim took only the space)
        comma = rng.choice([",", ", ", ",\u00a0", "\u3000,\x0b"])
        lines.append(f"d{i}\t{comma.join(labels)}\t{text}")
        tokens = re.findall(r"\w+", text.lower())
        for y in labels:
            docs[y] += 1
            expected.update((y, w) for w in (set(tokens) if model == "bernoulli" else tokens))
        if i % 50 == 7:
            lines += [
                "",
                f"d{i}x\t \tno label",
                "no tabs",
                "\t\t",
                " \x0c",
            ]  # the last two are blank to Python
    path = tmp_path / "multi.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for engine in ("combine", "dataframe", "arrow"):
        cfg = load_config(
            None,
            {
                "task": "naive_bayes",
                "nb.tokenizer": "words",
                "nb.model": model,
                "engine": engine,
                "train.format": "tsv",
                "train.path": str(path),
                "partitions": "3",
            },
        )
        manifest = fit(spark, cfg, tmp_path / engine)
        rows = read_parquet_checked(spark, tmp_path / engine / "counts", COUNT_DDL).collect()
        assert {(r["label"], r["feature"]): r["n"] for r in rows if r["event"] == "YX"} == dict(expected), (
            engine
        )
        assert {r["label"]: r["n"] for r in rows if r["event"] == "Y"} == dict(docs), engine
        assert manifest["stats"]["documents"] == 300 and manifest["stats"]["malformed"] == 12, engine
        assert manifest["stats"]["blank_lines"] == 18, engine


def test_log_loss_needs_every_gold_posterior_kept(spark, tmp_path):
    """Seven classes, one word each (add-one, |V| = 7): the text "wa" gives P(a) = 2/8 and every
    other class 1/8. The five kept posteriors are a, b, c, d, e (ties in class order), so a gold
    g is not among them: no log-loss unless nb.posteriors = all, and then it is log 8."""
    classes = "abcdefg"
    (tmp_path / "train.tsv").write_text("".join(f"t{c}\t{c}\tw{c}\n" for c in classes))
    (tmp_path / "test.tsv").write_text("x1\ta\twa\nx2\tg\twa\n")
    settings = {
        "task": "naive_bayes",
        "nb.tokenizer": "words",
        "train.format": "tsv",
        "train.path": str(tmp_path / "train.tsv"),
        "test.format": "tsv",
        "test.path": str(tmp_path / "test.tsv"),
    }
    fit(spark, load_config(None, settings), tmp_path / "model")
    out = {}
    for posteriors in ("top", "all"):
        cfg = load_config(None, {**settings, "nb.posteriors": posteriors, "scoring": "arrow"})
        out[posteriors] = classify_nb(
            spark, cfg, tmp_path / "model", resolve_input(cfg.test, None), tmp_path / posteriors
        )
    assert out["top"]["log_loss"] is None and "nb.posteriors = all" in out["top"]["log_loss_note"]
    assert out["all"]["log_loss"] == pytest.approx((math.log(4) + math.log(8)) / 2)
    preds = {r["id"]: r for r in spark.read.parquet(str(tmp_path / "top" / "predictions")).collect()}
    assert preds["x2"]["ranked_labels"] == ["a", "b", "c", "d", "e"]
    assert preds["x2"]["ranked_probabilities"] == pytest.approx([0.25] + [0.125] * 4)


def test_dataframe_engine_refuses_what_it_cannot_count(spark, fixtures, tmp_path):
    cfg = china_cfg(fixtures, tmp_path, engine="dataframe", **{"nb.tokenizer": "nbspark"})
    with pytest.raises(ConfigError, match="engine dataframe reads tsv or sms input .* nb.tokenizer = words"):
        fit(spark, cfg, tmp_path / "m")


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
def test_other_scoring_paths_equal_broadcast_scoring(spark, fixtures, tmp_path, model):
    """The join and arrow scorers, and auto where the model is too large to broadcast, against the
    broadcast scorer, on one model: the same predictions and statistics."""
    cfg = china_cfg(fixtures, tmp_path, **{"nb.model": model})
    fit(spark, cfg, tmp_path / "model")
    results, stats = {}, {}
    others = ("join", "arrow", "auto-join")
    for path in ("broadcast", *others):
        # auto with a limit of 0 MB: every model is too large to broadcast, so it joins
        run = china_cfg(
            fixtures,
            tmp_path,
            scoring=path.split("-")[0],
            broadcast_limit_mb="0" if path == "auto-join" else "512",
            **{"test.path": str(fixtures / "china_test_dirty.tsv")},
        )
        metrics = classify_nb(spark, run, tmp_path / "model", resolve_input(run.test, None), tmp_path / path)
        assert metrics["scoring"] == path.split("-")[-1] and metrics["documents"] == 3
        results[path] = {
            r["id"]: r for r in spark.read.parquet(str(tmp_path / path / "predictions")).collect()
        }
        stats[path] = {k: metrics[k] for k in ("input_stats", "malformed_examples", "unknown_features")}
    assert stats["broadcast"]["unknown_features"] == 1  # osaka
    assert stats["broadcast"]["input_stats"] == {  # counted by hand: tests/data/README.md
        "blank_lines": 1,
        "documents": 3,
        "empty_documents": 1,
        "lines_read": 7,
        "malformed": 3,
        "malformed.fields": 1,
        "malformed.id": 1,
        "malformed.labels": 1,
    }
    assert [(b["line_number"], b["reason"]) for b in stats["broadcast"]["malformed_examples"]] == [
        (3, "fields"),
        (4, "id"),
        (6, "labels"),
    ]
    assert sorted(results["broadcast"]) == ["d5", "d7", "d9"]
    for scoring in others:
        # the same statistics from every scorer: lines, malformed lines (and the first ones), unknown tokens
        assert stats[scoring] == stats["broadcast"], scoring
        assert sorted(results[scoring]) == sorted(results["broadcast"]), scoring
        for doc_id, b in results["broadcast"].items():
            other = results[scoring][doc_id]
            assert (other["predicted"], other["ranked_labels"], other["gold"]) == (
                b["predicted"],
                b["ranked_labels"],
                b["gold"],
            ), scoring
            assert other["ranked_probabilities"] == pytest.approx(b["ranked_probabilities"], abs=1e-12), (
                scoring
            )


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
def test_documents_sharing_an_id_are_scored_apart_by_every_scorer(spark, fixtures, tmp_path, model):
    """A tsv's ids are the user's, and may repeat: the join scorer grouped by id, so three documents
    under one id were scored as one (in the binary case, a top class at p = 0.27)."""
    cfg = china_cfg(fixtures, tmp_path, **{"nb.model": model})
    fit(spark, cfg, tmp_path / "model")
    test = tmp_path / "dup.tsv"
    test.write_text(
        "x\tc\tChinese Chinese Chinese Tokyo Japan\nx\tj\tTokyo Japan Tokyo\nx\tc\tChinese "
        "Beijing\ny\tj\tJapan\n"
    )
    got = {}
    for scoring in ("broadcast", "join"):
        run = china_cfg(fixtures, tmp_path, scoring=scoring, **{"nb.model": model, "test.path": str(test)})
        assert (
            classify_nb(spark, run, tmp_path / "model", resolve_input(run.test, None), tmp_path / scoring)[
                "documents"
            ]
            == 4
        )
        rows = spark.read.parquet(str(tmp_path / scoring / "predictions")).collect()
        got[scoring] = sorted(
            (
                r["id"],
                r["gold"],
                r["predicted"],
                r["ranked_labels"],
                tuple(round(p, 9) for p in r["ranked_probabilities"]),
            )
            for r in rows
        )
    assert got["join"] == got["broadcast"] and len(got["join"]) == 4
    assert all(max(p) > 0.5 for *_, p in got["join"])


def test_schema_of_is_the_jvm_reading_of_the_same_ddl(spark):
    from nbspark.backoff.events import count_ddl
    from nbspark.naive_bayes.events import COUNT_DDL
    from nbspark.spine.frames import schema_of

    for ddl in (COUNT_DDL, count_ddl("ABCDE"), "id STRING NOT NULL, tokens ARRAY<STRING>, line INT NOT NULL"):
        assert schema_of(ddl) == spark.createDataFrame([], ddl).schema
    with pytest.raises(ValueError, match="cannot read"):
        schema_of("x MAP<STRING,INT>")


def test_local_frame_is_create_data_frame_without_a_python_rdd(spark):
    """The few rows the jobs make in the driver reach the JVM as Arrow: the same rows and schema
    as spark.createDataFrame of the list (nulls, non-ASCII, 64-bit, infinity, lists), read by a
    LocalTableScan, not from a Python RDD that costs a Python task in every job over them."""
    from nbspark.spine.frames import local_frame

    ddl = "a STRING, b BIGINT, c DOUBLE, d ARRAY<STRING>"
    rows = [("x", 1, 0.5, ["p", None]), (None, None, None, None), ("é日", -(2**62), float("inf"), [])]
    got, want = local_frame(spark, rows, ddl), spark.createDataFrame(rows, ddl)
    assert got.collect() == want.collect() and got.schema == want.schema
    assert "LocalTableScan" in got._jdf.queryExecution().executedPlan().toString()
    assert local_frame(spark, [], ddl).collect() == [] and local_frame(spark, [], ddl).schema == want.schema
    with pytest.raises((TypeError, ValueError)):  # pyarrow's ArrowTypeError, ArrowInvalid
        local_frame(spark, [("x", "not a number", 0.5, [])], ddl)


@pytest.mark.parametrize("engine", ["dataframe", "arrow"])
def test_sql_engines_know_the_rows_they_write(spark, tmp_path, engine):
    # hand-counted: label e has a document but no word, so it has no YX and no YX=ANY row
    (tmp_path / "t.tsv").write_text(
        "d1\tc\tChinese Beijing Chinese\nd2\tc\tChinese Chinese Shanghai\nd3\tj\tTokyo Japan "
        "Chinese\nd4\te\t!!! ...\n"
    )
    written = {}
    for model in ("multinomial", "bernoulli"):
        cfg = load_config(
            None,
            {
                "task": "naive_bayes",
                "nb.tokenizer": "words",
                "nb.model": model,
                "engine": engine,
                "train.format": "tsv",
                "train.path": str(tmp_path / "t.tsv"),
            },
        )
        manifest = fit(spark, cfg, tmp_path / model)
        written[model] = manifest["count_rows"]
        from nbspark.naive_bayes.count import count_nb

        counted = count_nb(spark, cfg, resolve_input(cfg.train, None), engine)
        try:
            assert (
                counted.known["rows"] == {"multinomial": 13, "bernoulli": 10}[model]
            )  # Y=ANY, 3 Y, 6 YX (+ 3 YX=ANY at most)
        finally:
            counted.release()
    # Y=ANY, Y for c, j, e, YX: chinese beijing shanghai | tokyo japan chinese, YX=ANY for c and j
    assert written == {"multinomial": 12, "bernoulli": 10}


def test_alpha_zero_documents_no_class_can_explain_are_counted_by_every_scorer(spark, tmp_path, caplog):
    """With nb.alpha = 0, "beijing tokyo" has a word of probability 0 in each class (beijing never in
    j, tokyo never in c): both classes score −inf. Such a document gets equal posteriors and the first
    class, and is counted and reported, not passed off as a confident answer (hand-counted)."""
    (tmp_path / "train.tsv").write_text("d1\tc\tBeijing Shanghai\nd2\tj\tTokyo Osaka\nd3\tc\tBeijing\n")
    (tmp_path / "test.tsv").write_text("t1\tc\tBeijing Tokyo\nt2\tj\tTokyo\nt3\tc\tShanghai\n")
    base = {
        "task": "naive_bayes",
        "nb.tokenizer": "words",
        "nb.alpha": "0",
        "train.format": "tsv",
        "train.path": str(tmp_path / "train.tsv"),
        "test.format": "tsv",
        "test.path": str(tmp_path / "test.tsv"),
    }
    cfg = load_config(None, base)
    fit(spark, cfg, tmp_path / "m")
    for scoring in ("broadcast", "arrow"):
        cfg = load_config(None, {**base, "scoring": scoring})
        metrics = classify_nb(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / scoring)
        assert metrics["unexplained_documents"] == 1 and metrics["unknown_features"] == 0, scoring
        rows = {r["id"]: r for r in spark.read.parquet(str(tmp_path / scoring / "predictions")).collect()}
        assert rows["t1"]["ranked_probabilities"] == [0.5, 0.5] and rows["t1"]["predicted"] == ["c"]
        assert rows["t2"]["ranked_probabilities"] == [1.0, 0.0]
        report = (tmp_path / scoring / "report.txt").read_text()
        assert (
            "documents no class can explain (every class has probability 0: nb.alpha = 0 gives a class a "
            "zero factor, or a value lies so far from every class's mean that its density is 0 in floating "
            "point): 1;" in report
        )
    with caplog.at_level("WARNING", logger="nbspark.naive_bayes.predictor"):
        proba = nbspark.load(tmp_path / "m").predict_proba(["Beijing Tokyo", "Tokyo"])
    assert proba.tolist() == [[0.5, 0.5], [0.0, 1.0]]
    assert [r.getMessage() for r in caplog.records if r.name == "nbspark.naive_bayes.predictor"] == [
        "1 of 2 texts: no class can explain them (every class has probability 0: nb.alpha = 0 gives a class "
        "a zero factor, or a value lies so far from every class's mean that its density is 0 in floating "
        "point); each got equal posteriors and the first class"
    ]
    cfg = load_config(None, {**base, "nb.alpha": "1"})
    metrics = classify_nb(
        spark,
        cfg,
        tmp_path / "m",
        resolve_input(cfg.test, None),
        tmp_path / "alpha1",
        frozenset({"nb.alpha"}),
    )
    assert (
        metrics["unexplained_documents"] == 0
        and "no class can explain" not in (tmp_path / "alpha1" / "report.txt").read_text()
    )


def test_a_scorers_partition_count_is_its_predictions(spark, fixtures, tmp_path):
    """write_results sizes the predictions' files by the scorer's count of their partitions (it
    no longer plans them to count them); the count must be the planned one, for each scorer. Six
    input files, a few predictions: more partitions than local[2] has cores (the SQL text source
    packs small files into as many partitions as cores, unless its partitions are small), so AQE
    rebalances them into one file."""
    from nbspark.naive_bayes.scoring import score

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(6):
        (corpus / f"{i}.tsv").write_text(
            (fixtures / "china_test.tsv").read_text(encoding="utf-8"), encoding="utf-8"
        )
    fit(spark, china_cfg(fixtures, tmp_path, **{"test.path": str(corpus)}), tmp_path / "model")
    for scoring in ("arrow", "broadcast", "join"):
        cfg = china_cfg(fixtures, tmp_path, scoring=scoring, **{"test.path": str(corpus)})
        inputs = resolve_input(cfg.test, None)
        model = _model(spark, tmp_path / "model", cfg) if scoring != "join" else None
        counts = (
            read_counts(spark, tmp_path / "model", NAIVE_BAYES, load_nb_manifest(tmp_path / "model"))
            if scoring == "join"
            else None
        )
        spark.conf.set("spark.sql.files.maxPartitionBytes", "1k")
        try:
            scored = score(spark, cfg, inputs, scoring, counts, model, 2)
            try:
                planned = scored.predictions.rdd.getNumPartitions()
                if scoring == "join":
                    assert scored.partitions is None
                else:
                    assert scored.partitions() == planned > 2, scoring
            finally:
                scored.release()
            classify_nb(spark, cfg, tmp_path / "model", inputs, tmp_path / f"r-{scoring}")
        finally:
            spark.conf.unset("spark.sql.files.maxPartitionBytes")
        assert len(list((tmp_path / f"r-{scoring}" / "predictions").glob("part-*.parquet"))) == 1, scoring


def test_written_log_loss_totals_are_the_same_in_the_driver_and_in_spark(spark, tmp_path):
    """Log-loss reads the written predictions: a small table in the driver with pyarrow, a larger
    one with a Spark aggregate. Both take a row's first gold label, its first match among the
    ranked labels, and that match's probability; a null or missing one counts as 0 (clipped to
    LOG_EPS), NaN and values above 1 as 1, in several part files. Hand-counted: n = 12, multi = 2
    (two labels, none; a null list has no size under ANSI SQL), missing = 5 (b not ranked, no
    gold label, a null one, a null list, a null probability)."""
    from nbspark.naive_bayes.jobs import _arrow_losses, _spark_losses
    from nbspark.report.metrics import LOG_EPS
    from nbspark.spine.classifying import Written
    from nbspark.storage.locations import location

    rows = [
        (["a"], ["a", "b"], [0.7, 0.3]),
        (["b"], ["a", "b"], [0.6, 0.4]),
        (["b"], ["a", "c"], [0.6, 0.4]),
        (["a", "b"], ["b", "a"], [0.5, 0.5]),
        ([], ["a"], [1.0]),
        ([None], ["a"], [1.0]),
        (None, ["a"], [1.0]),
        (["c"], ["c"], [None]),
        (["d"], ["d"], [float("nan")]),
        (["e"], ["e", "e"], [0.2, 0.9]),
        (["f"], ["f"], [0.0]),
        (["g"], ["g"], [1.5]),
    ]
    schema = "gold ARRAY<STRING>, ranked_labels ARRAY<STRING>, ranked_probabilities ARRAY<DOUBLE>"
    spark.createDataFrame(rows, schema).repartition(3).write.parquet(str(tmp_path / "p"))
    table = location(tmp_path / "p")
    parts = table.files(skip=lambda name: name.startswith(("_", ".")))
    columns = ["gold", "ranked_labels", "ranked_probabilities"]
    in_spark = Written(spark, table, spark.read.parquet(table.uri).schema, parts, False).totals(
        columns, _arrow_losses, _spark_losses
    )
    in_driver = Written(spark, table, None, parts, True).totals(columns, _arrow_losses, _spark_losses)
    loss = -math.log(0.7) - math.log(0.4) - math.log(0.5) - math.log(0.2) - 6 * math.log(LOG_EPS)
    assert len(parts) == 3
    assert (
        {k: in_driver[k] for k in ("n", "multi", "missing")}
        == {k: in_spark[k] for k in ("n", "multi", "missing")}
        == {"n": 12, "multi": 2, "missing": 5}
    )
    assert in_driver["loss"] == pytest.approx(in_spark["loss"], rel=1e-12) and in_driver[
        "loss"
    ] == pytest.approx(loss, rel=1e-12)
    assert _arrow_losses(Written(spark, table, None, [], True).totals(columns, lambda t: t, None)) == {
        "n": 0,
        "multi": 0,
        "missing": 0,
        "loss": 0.0,
    }


def test_written_counts_are_the_same_in_the_driver_and_in_spark(spark, tmp_path):
    """The metrics count the written predictions by (gold, predicted): a small table in the driver
    with pyarrow, a larger one with Spark's group-by. The two must group alike: lists by their
    elements in order (["a", "bc"] is not ["ab", "c"], nor is a label that spells a length prefix
    another list), an empty list apart from a null one and from [null], nulls as one group, in
    several part files."""
    from nbspark.spine.classifying import Written
    from nbspark.storage.locations import location

    rows = [
        (["a", "b"], "x"),
        (["ab"], "x"),
        (["a", "bc"], None),
        (["ab", "c"], None),
        ([], "x"),
        (None, "x"),
        ([None], "x"),
        (["a", "b"], "x"),
        ([], "x"),
        (None, "x"),
        (["é", "12"], "y"),
        (["S0000000001a"], "y"),
        (["a"], "y"),
    ]
    spark.createDataFrame(rows, "gold ARRAY<STRING>, predicted STRING").repartition(3).write.parquet(
        str(tmp_path / "p")
    )
    table = location(tmp_path / "p")
    parts = table.files(skip=lambda name: name.startswith(("_", ".")))
    schema = spark.read.parquet(table.uri).schema
    in_spark = sorted(Written(spark, table, schema, parts, False).counts(["gold", "predicted"]), key=repr)
    small = Written(spark, table, schema, parts, True)
    small.preload(["gold", "predicted"])
    assert len(parts) == 3
    for part in parts:  # read once, by preload
        (tmp_path / "p" / part.name).unlink()
    in_driver = sorted(small.counts(["gold", "predicted"]), key=repr)
    assert (
        in_driver
        == in_spark
        == sorted(
            [
                (("a", "b"), "x", 2),
                (("ab",), "x", 1),
                (("a", "bc"), None, 1),
                (("ab", "c"), None, 1),
                ((), "x", 2),
                (None, "x", 2),
                ((None,), "x", 1),
                (("é", "12"), "y", 1),
                (("S0000000001a",), "y", 1),
                (("a",), "y", 1),
            ],
            key=repr,
        )
    )


def test_written_distinct_rows_are_the_same_in_the_driver_and_in_spark(spark, tmp_path):
    """``Written.distinct`` (a backoff run's distinct examples) by pyarrow, as a run in process and a
    small table count them, and by Spark's ``distinct``: nulls equal to each other, not to "", in
    several part files."""
    from nbspark.spine.classifying import Written
    from nbspark.storage.locations import location

    rows = [
        ("a", "b"),
        ("a", "b"),
        ("a", None),
        ("a", None),
        ("a", ""),
        (None, None),
        (None, None),
        ("b", "a"),
    ]
    spark.createDataFrame(rows, "a STRING, b STRING").repartition(3).write.parquet(str(tmp_path / "p"))
    table = location(tmp_path / "p")
    parts = table.files(skip=lambda name: name.startswith(("_", ".")))
    schema = spark.read.parquet(table.uri).schema
    in_spark = Written(spark, table, schema, parts, False).distinct(["a", "b"])
    assert Written(None, table, None, parts, True).distinct(["a", "b"]) == in_spark == 5
    assert Written(None, table, None, parts, True).distinct(["a"]) == 3


def test_complement_reads_the_multinomial_counts_and_matches_sklearn(spark, fixtures, tmp_path):
    """A complement model writes the multinomial count table; a multinomial model classified with
    ``--set nb.model=complement`` gives the complement model's predictions, and the reverse; every
    prediction equals scikit-learn's ComplementNB on the same counts; the join scorer refuses it."""
    import json
    import re

    from sklearn.naive_bayes import ComplementNB

    from nbspark.app.command import main

    multi = fit(spark, china_cfg(fixtures, tmp_path), tmp_path / "multi")
    comp = fit(spark, china_cfg(fixtures, tmp_path, **{"nb.model": "complement"}), tmp_path / "comp")
    assert comp["model"] == "complement" and comp["count_rows"] == multi["count_rows"]
    assert sorted(spark.read.parquet(str(tmp_path / "comp" / "counts")).collect()) == sorted(
        spark.read.parquet(str(tmp_path / "multi" / "counts")).collect()
    )
    run = china_cfg(fixtures, tmp_path, **{"nb.model": "complement", "nb.norm": "true"})
    results = {}
    for name, model, overrides in (
        ("as_complement", "multi", {"nb.model", "nb.norm"}),
        ("complement", "comp", {"nb.norm"}),
    ):
        metrics = classify_nb(
            spark, run, tmp_path / model, resolve_input(run.test, None), tmp_path / name, frozenset(overrides)
        )
        assert metrics["kind"] == "complement" and metrics["smoothing"]["norm"] is True
        rows = spark.read.parquet(str(tmp_path / name / "predictions")).collect()
        results[name] = sorted((r["id"], r["predicted"], r["probability"]) for r in rows)
    assert results["as_complement"] == results["complement"]

    # scikit-learn on the same documents, parsed by the rule and tokenized by the words tokenizer
    # (lower-cased runs of \w); a document of two labels counts for each, as nbspark counts it
    def docs(name):
        lines = (fixtures / name).read_text().splitlines()
        parsed = [expected_parse(line, "tsv") for line in lines]
        return [
            (p[1], label, re.findall(r"\w+", p[3].lower()))
            for p in parsed
            if p[0] == "documents"
            for label in p[2]
        ]

    train, test = docs("china_train.tsv"), docs("china_test.tsv")
    vocab = sorted({w for _, _, words in train for w in words})

    def dense(rows):
        X = np.zeros((len(rows), len(vocab)))
        for i, (_, _, words) in enumerate(rows):
            for w in words:
                if w in vocab:
                    X[i, vocab.index(w)] += 1
        return X

    ref = ComplementNB(alpha=1.0, norm=True).fit(dense(train), [label for _, label, _ in train])
    proba = ref.predict_proba(dense(test))
    want = sorted((doc_id, [ref.classes_[p.argmax()]], p.max()) for (doc_id, _, _), p in zip(test, proba))
    assert [r[:2] for r in results["complement"]] == [w[:2] for w in want]
    assert [r[2] for r in results["complement"]] == pytest.approx([w[2] for w in want], abs=1e-12)
    # nbspark.load and nbspark predict read it alike: a multinomial model read as complement too
    texts = [" ".join(words) for _, _, words in test]
    loaded = nbspark.load(tmp_path / "multi", model="complement", norm=True)
    assert loaded.kind == "complement"
    np.testing.assert_allclose(loaded.predict_proba(texts), proba, rtol=0, atol=1e-12)
    assert main(["predict", "--model", str(tmp_path / "comp"), "--json", texts[0]]) == 0
    # back: the complement model read as multinomial is the multinomial model
    back = china_cfg(fixtures, tmp_path)
    classify_nb(
        spark,
        back,
        tmp_path / "comp",
        resolve_input(back.test, None),
        tmp_path / "back",
        frozenset({"nb.model"}),
    )
    classify_nb(spark, back, tmp_path / "multi", resolve_input(back.test, None), tmp_path / "plain")
    read = {
        k: sorted(map(tuple, spark.read.parquet(str(tmp_path / k / "predictions")).collect()))
        for k in ("back", "plain")
    }
    assert read["back"] == read["plain"]
    assert json.loads((tmp_path / "back" / "metrics.json").read_text())["kind"] == "multinomial"
    # the join scorer is multinomial and Bernoulli only: refused before Spark runs a job
    joined = china_cfg(fixtures, tmp_path, **{"nb.model": "complement", "scoring": "join"})
    with pytest.raises(
        ConfigError, match="join scoring is for multinomial and Bernoulli models, not complement"
    ):
        classify_nb(spark, joined, tmp_path / "comp", resolve_input(joined.test, None), tmp_path / "j")
    # no class prior: a prior setting is refused, at training and at classify
    with pytest.raises(ConfigError, match="nb.prior_alpha"):
        fit(
            spark,
            china_cfg(fixtures, tmp_path, **{"nb.model": "complement", "nb.prior_alpha": "1"}),
            tmp_path / "p",
        )


@pytest.mark.parametrize("engine", ["arrow", "dataframe", "combine", "pairs"])
def test_an_empty_input_is_refused_in_one_line_by_every_engine(spark, fixtures, tmp_path, engine):
    """The arrow engine (the default) stopped with KeyError: 'lines_read' on an empty file."""
    (tmp_path / "empty.tsv").write_text("")
    cfg = china_cfg(fixtures, tmp_path, engine=engine, **{"train.path": str(tmp_path / "empty.tsv")})
    with pytest.raises(InputError) as info:
        fit(spark, cfg, tmp_path / "m")
    assert str(info.value) == (
        f"{tmp_path}/empty.tsv: no training documents (no valid document or row; its files are empty); "
        "nothing written"
    )
    assert not (tmp_path / "m").exists()
