"""``nbspark classify`` of a naive Bayes model of text in process (``spark`` None): the Spark job's
results (metrics, report, predictions row for row) without a JVM, and what stays with Spark."""

import json

import pyarrow.parquet as pq
import pytest

from nbspark.errors import ConfigError
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import plan_nb_classify, run_nb_classify, train_nb_in_process
from nbspark.settings.config import load_config
from tests.conftest import FIXTURES, classify_results, command_alone, failures_in_spark_and_here

CHINA = {"task": "naive_bayes", "nb.tokenizer": "words", "train.format": "tsv", "test.format": "tsv"}
WEATHER = {"task": "naive_bayes", "nb.label_column": "play", "nb.model": "mixed", "train.format": "csv"}
WEATHER |= {
    "train.path": str(FIXTURES / "weather.csv"),
    "test.format": "csv",
    "test.path": str(FIXTURES / "weather.csv"),
}
SMS = "ham\tsee you at noon\nspam\tWIN cash now, call 0800\nham\tcall me at noon\nspam\twin a prize now\n"


def _both(spark, tmp_path, settings: dict, train: dict | None = None) -> tuple:
    """The model of ``train`` (default: ``settings``) counted in process, then its classify runs
    planned for Spark and in process, run: their ``_results``."""
    train_nb_in_process(load_config(None, train or settings), tmp_path / "m")
    cfg = load_config(None, settings)
    out = []
    for where, session in (("spark", spark), ("here", None)):
        inputs = resolve_input(cfg.test, None)
        plan = plan_nb_classify(cfg, tmp_path / "m", inputs, tmp_path / where, frozenset(), False, where)
        assert plan.in_process == (session is None)
        run_nb_classify(session, plan)
        out.append(classify_results(tmp_path / where))
    return tuple(out)


def _sms(tmp_path) -> str:
    (tmp_path / "sms.txt").write_text(SMS * 5)
    return str(tmp_path / "sms.txt")


@pytest.mark.spark
@pytest.mark.parametrize(
    "name, settings",
    [
        ("tsv, the arrow scorer", {"test.path": "china_test.tsv"}),
        ("malformed lines", {"test.path": "china_test_dirty.tsv"}),
        ("the broadcast scorer", {"test.path": "china_test_dirty.tsv", "scoring": "broadcast"}),
        ("two labels a document", {"test.path": "china_test.tsv", "nb.top_k": "2"}),
        (
            "Bernoulli, every posterior",
            {"test.path": "china_test.tsv", "nb.model": "bernoulli", "nb.posteriors": "all"},
        ),
        ("complement", {"test.path": "china_test.tsv", "nb.model": "complement", "nb.norm": "true"}),
        (
            "a binary decision, its threshold and curve",
            {"test.path": "china_test_dirty.tsv", "nb.positive_label": "j", "nb.decision_threshold": "0.2"},
        ),
    ],
)
def test_a_text_model_scored_in_process_is_the_spark_jobs(spark, tmp_path, name, settings):
    settings = {**CHINA, "train.path": str(FIXTURES / "china_train.tsv"), **settings}
    settings["test.path"] = str(FIXTURES / settings["test.path"])
    scoring = ("test.", "scoring", "nb.top_k", "nb.positive_label", "nb.decision_threshold")
    train = {k: v for k, v in settings.items() if not k.startswith(scoring)}
    in_spark, here = _both(spark, tmp_path, settings, train)
    assert here == in_spark
    assert here[0]["documents"] > 0
    if "nb.positive_label" in settings:  # the curve, its file and its plot
        pr = here[0]["pr_curve"]
        assert pr["positive_label"] == "j" and pr["decision_threshold"] == 0.2 and len(pr["thresholds"]) > 1
        assert json.loads((tmp_path / "here" / "pr.json").read_text()) == pr
        assert (tmp_path / "here" / "pr.png").stat().st_size > 0


@pytest.mark.spark
def test_a_binary_decision_in_process_is_the_spark_jobs_on_one_label_columns(spark, tmp_path):
    """An sms hold-out (gold and predicted written as strings, ``Scored.scalars``) with a binary
    decision: the threshold moves the predictions, in process as in Spark."""
    sms = {"task": "naive_bayes", "train.format": "sms", "train.path": _sms(tmp_path), "train.holdout": "0.4"}
    sms |= {"train.splits": "train", "test.format": "sms", "test.path": _sms(tmp_path), "test.holdout": "0.4"}
    decided = {**sms, "test.splits": "test", "nb.positive_label": "spam"}
    in_spark, here = _both(spark, tmp_path / "half", decided, sms)
    assert here == in_spark and here[3].field("predicted").type == "string"
    strict = {**decided, "nb.decision_threshold": "0.999999"}
    in_spark, strict_here = _both(spark, tmp_path / "strict", strict, sms)
    assert strict_here == in_spark
    spam = [json.loads(r)["predicted"] for r in strict_here[4]].count("spam")
    assert spam < [json.loads(r)["predicted"] for r in here[4]].count("spam")


@pytest.mark.spark
def test_sms_and_reuters_topics_scored_in_process_are_the_spark_jobs(spark, tmp_path):
    """The formats the arrow scorer does not read (the broadcast scorer's records in process): an
    sms file split by a seeded hold-out (gold and predicted written as strings), Reuters' topics."""
    sms = {"task": "naive_bayes", "train.format": "sms", "train.path": _sms(tmp_path), "train.holdout": "0.4"}
    sms |= {"train.splits": "train", "test.format": "sms", "test.path": _sms(tmp_path), "test.holdout": "0.4"}
    sms |= {"test.splits": "test"}
    in_spark, here = _both(spark, tmp_path / "sms", sms)
    assert here == in_spark and here[3].field("gold").type == "string"
    topics = {
        "task": "naive_bayes",
        "train.format": "reuters_topics",
        "train.path": str(FIXTURES / "mini.sgm"),
    }
    topics |= {"test.format": "reuters_topics", "test.path": str(FIXTURES / "mini.sgm")}
    in_spark, here = _both(spark, tmp_path / "topics", topics)
    assert here == in_spark and here[0]["test_is_training_data"]


@pytest.mark.spark
def test_failfast_in_process_stops_as_the_spark_job_does(spark, tmp_path):
    train_nb_in_process(
        load_config(None, {**CHINA, "train.path": str(FIXTURES / "china_train.tsv")}), tmp_path / "m"
    )
    cfg = load_config(
        None, {**CHINA, "test.path": str(FIXTURES / "china_test_dirty.tsv"), "mode": "failfast"}
    )
    test = resolve_input(cfg.test, None)
    errors = failures_in_spark_and_here(
        spark,
        tmp_path,
        lambda out, where: plan_nb_classify(cfg, tmp_path / "m", test, out, where=where),
        run_nb_classify,
    )
    assert errors[0] == errors[1] and "china_test_dirty.tsv:3: malformed line (fields)" in errors[0]


def test_the_command_scores_a_text_model_in_process_by_itself(tmp_path):
    """No JVM (no spark mark; none in the command's process), and the report says it scored in
    process. Counted by hand from the fixture (tests/data/README.md): class c has 4 documents and 11
    tokens (chinese 6), j has 2 and 6 (chinese 2, tokyo 1, japan 1), 8 words; d5 "Chinese Chinese
    Chinese Tokyo Japan" under alpha 1. d7's label k is one the model never saw; d9 is empty."""
    train_nb_in_process(
        load_config(None, {**CHINA, "train.path": str(FIXTURES / "china_train.tsv")}), tmp_path / "m"
    )
    args = ["classify", "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r")]
    for key, value in {**CHINA, "test.path": str(FIXTURES / "china_test.tsv")}.items():
        args += ["--set", f"{key}={value}"]
    status, no_jvm, err = command_alone(args)
    assert (status, no_jvm) == (0, True), err
    assert "scoring in process (--spark scores with Spark)" in err
    c = 4 / 6 * (7 / 19) ** 3 * (1 / 19) ** 2
    j = 2 / 6 * (3 / 14) ** 3 * (2 / 14) ** 2
    rows = {r["id"]: r for r in pq.read_table(str(tmp_path / "r" / "predictions")).to_pylist()}
    assert rows["d5"]["predicted"] == ["c"] and rows["d5"]["probability"] == pytest.approx(c / (c + j))
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (
        metrics["documents"],
        metrics["unknown_label_count"],
        metrics["input_stats"]["empty_documents"],
    ) == (3, 1, 1)


def _weather_to_score(path) -> str:
    """weather.csv with columns the model does not know (an id; a name with a dot; ``probability``,
    which the predictions name: ``table_probability`` there), a row cut short and a label never seen."""
    lines = (FIXTURES / "weather.csv").read_text().splitlines()
    rows = [f"id,{lines[0]},note.x,probability"]
    rows += [f"r{i},{line},n{i},{i / 10}" for i, line in enumerate(lines[1:])]
    path.write_text("\n".join([*rows, "bad,sunny,oops", "r99,rainy,70,96,TRUE,maybe,x,0"]) + "\n")
    return str(path)


@pytest.mark.spark
@pytest.mark.parametrize("model", ["mixed", "categorical", "gaussian"])
def test_a_csv_table_scored_in_process_is_the_spark_jobs(spark, tmp_path, model):
    """The table scorer's batches in process: the same predictions (the columns that ride along, each
    row in its place), malformed rows and their numbers, metrics and report as Spark's; on a table
    with columns the model does not know, and on CSV files as people leave them (gzipped, ragged
    rows, quotes, a byte that is not UTF-8: ``_awkward_csv``)."""
    from tests.naive_bayes.test_in_process import _awkward_csv

    columns = {"gaussian": {"nb.numeric_columns": "temperature,humidity"}}.get(model, {})
    settings = {**WEATHER, "nb.model": model, **columns, "test.path": _weather_to_score(tmp_path / "t.csv")}
    in_spark, here = _both(spark, tmp_path / "weather", settings)
    assert here == in_spark and "table_probability" in here[3].names and here[0]["documents"] > 10
    if model != "gaussian":
        _awkward_csv(tmp_path / "in")
        awkward = {
            **WEATHER,
            "nb.model": model,
            "nb.label_column": "label",
            "train.path": str(tmp_path / "in"),
        }
        in_spark, here = _both(spark, tmp_path / "awkward", {**awkward, "test.path": str(tmp_path / "in")})
        assert here == in_spark and here[0]["test_is_training_data"]


@pytest.mark.spark
def test_a_scikit_learn_dataset_scored_in_process_is_the_spark_jobs(spark, tmp_path):
    """A dataset scikit-learn ships (iris), split by a seeded hold-out: the rows read as a train in
    process reads them, scored by the table scorer's batches, as Spark scores them."""
    iris = {"task": "naive_bayes", "nb.model": "gaussian", "train.format": "sklearn", "train.path": "iris"}
    iris |= {"train.holdout": "0.3", "train.splits": "train"}
    iris |= {"test.format": "sklearn", "test.path": "iris", "test.holdout": "0.3", "test.splits": "test"}
    in_spark, here = _both(spark, tmp_path, iris)
    assert here == in_spark and 30 < here[0]["documents"] < 60 and here[0]["accuracy"] > 0.8


#: weather's features named: the other columns of ``_parquet_weather`` ride along
PARQUET_FEATURES = {"nb.numeric_columns": "temperature,humidity", "nb.categorical_columns": "outlook,windy"}


def _parquet_weather(where, **more) -> None:
    """weather.csv's rows as two Parquet files, with columns of every type that Spark reads as
    pyarrow writes it riding along (and ``more``: name -> pyarrow array of 14 values)."""
    import datetime
    import decimal

    import pyarrow as pa
    import pyarrow.csv as pcsv

    table = pcsv.read_csv(FIXTURES / "weather.csv").slice(0, 14)  # its last row is malformed
    n = table.num_rows
    riding = {
        "i8": pa.array(range(n), pa.int8()),
        "i16": pa.array(range(n), pa.int16()),
        "f32": pa.array([0.5] * n, pa.float32()),
        "day": pa.array([datetime.date(2020, 1, 2)] * n),
        "at": pa.array([datetime.datetime(2020, 1, 1, 12, 0, 0, 123456)] * n, pa.timestamp("us")),
        "price": pa.array([decimal.Decimal("1.25")] * n, pa.decimal128(5, 2)),
        "raw": pa.array([b"x"] * n),
        "tags": pa.array([["a"], [], None, *[["b", "c"]] * (n - 3)]),
        "st": pa.array([{"x": 1, "y": "a"}] * n),
        "m": pa.array([[("k", 1)]] * n, pa.map_(pa.string(), pa.int64())),
        **more,
    }
    for name, values in riding.items():
        table = table.append_column(name, values)
    where.mkdir()
    pq.write_table(table.slice(0, 6), where / "a.parquet")
    pq.write_table(table.slice(6), where / "b.parquet")


@pytest.mark.spark
def test_a_parquet_table_scored_in_process_is_the_spark_jobs(spark, tmp_path):
    """A Parquet test table of two files, columns of every type both read alike riding along: the
    predictions' schema and rows, metrics and report, in process as in Spark."""
    _parquet_weather(tmp_path / "t")
    settings = {**WEATHER, "train.format": "parquet", "train.path": str(tmp_path / "t"), **PARQUET_FEATURES}
    settings |= {"test.format": "parquet", "test.path": str(tmp_path / "t")}
    in_spark, here = _both(spark, tmp_path, settings)
    assert here == in_spark and here[0]["documents"] == 14 and here[3].field("i8").type == "int8"


@pytest.mark.parametrize(
    "kind, says",
    [
        ("uint32", "column 'odd' of type uint32 is read with Spark"),
        ("dictionary", "column 'odd' of type dictionary<values=string"),
        ("large_string", "column 'odd' of type large_string is read with Spark"),
        ("timestamp_tz", "column 'odd' of type timestamp\\[us, tz=UTC\\] is read with Spark"),
        ("list_of_uint8", "column 'odd' of type list<.*uint8>"),
        ("partitioned", "a table in partition directories \\(part\\) is read with Spark"),
    ],
)
def test_a_parquet_table_typed_otherwise_by_spark_is_scored_with_spark(tmp_path, kind, says):
    """Decided before any JVM: where the process would type a column otherwise than Spark's reader
    (or Spark infers a partition column's type), ``auto`` scores with Spark and ``--in-process`` is
    refused in one line naming the column."""
    import datetime

    import pyarrow as pa

    n = 14
    odd = {
        "uint32": pa.array(range(n), pa.uint32()),
        "dictionary": pa.array(["x", "y"] * 7).dictionary_encode(),
        "large_string": pa.array(["x"] * n, pa.large_string()),
        "timestamp_tz": pa.array([datetime.datetime(2020, 1, 1)] * n, pa.timestamp("us", tz="UTC")),
        "list_of_uint8": pa.array([[1]] * n, pa.list_(pa.uint8())),
    }
    if kind == "partitioned":
        _parquet_weather(tmp_path / "flat")
        (tmp_path / "t" / "part=1").mkdir(parents=True)
        (tmp_path / "flat" / "a.parquet").rename(tmp_path / "t" / "part=1" / "a.parquet")
    else:
        _parquet_weather(tmp_path / "t", odd=odd[kind])
    settings = {**WEATHER, "train.format": "parquet", "train.path": str(tmp_path / "t"), **PARQUET_FEATURES}
    settings |= {"test.format": "parquet", "test.path": str(tmp_path / "t")}
    train_nb_in_process(load_config(None, settings), tmp_path / "m")
    cfg = load_config(None, settings)
    test = resolve_input(cfg.test, None)
    assert not plan_nb_classify(cfg, tmp_path / "m", test, tmp_path / "r", where="auto").in_process
    with pytest.raises(ConfigError, match=f"cannot score in process: .*{says}"):
        plan_nb_classify(cfg, tmp_path / "m", test, tmp_path / "r", where="here")


@pytest.mark.spark
@pytest.mark.parametrize("model", ["mixed", "gaussian"])
def test_a_csv_table_in_failfast_mode_stops_in_process_as_in_spark(spark, tmp_path, model):
    """Failfast in process: the first malformed row (in file order, whichever of the scorer's two
    readers, by columns or by rows, meets it) stops the run with the Spark job's one line and writes
    nothing; a table with none is scored as Spark scores it."""
    columns = {"nb.numeric_columns": "temperature,humidity"}  # (inferred, "warm" makes it categorical)
    settings = {**WEATHER, "nb.model": model, **columns, "mode": "failfast"}
    lines = (FIXTURES / "weather.csv").read_text().splitlines()[:15]  # its last row is malformed
    (tmp_path / "clean.csv").write_text("\n".join(lines) + "\n")
    train = {**WEATHER, "nb.model": model, **columns}
    in_spark, here = _both(
        spark, tmp_path / "clean", {**settings, "test.path": str(tmp_path / "clean.csv")}, train
    )
    assert here == in_spark and here[0]["documents"] == 14
    train_nb_in_process(load_config(None, train), tmp_path / "m")
    for name, bad in [("cut short", "sunny,70"), ("not a number", "rainy,warm,96,TRUE,no")]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "t.csv").write_text("\n".join([*lines[:4], bad, *lines[4:]]) + "\n")
        cfg = load_config(None, {**settings, "test.path": str(tmp_path / name / "t.csv")})
        test = resolve_input(cfg.test, None)
        errors = failures_in_spark_and_here(
            spark,
            tmp_path / name,
            lambda out, where: plan_nb_classify(cfg, tmp_path / "m", test, out, where=where),
            run_nb_classify,
        )
        assert errors[0] == errors[1] and "t.csv row 5: malformed line" in errors[0], errors


@pytest.mark.parametrize(
    "settings, says",
    [
        ({**CHINA, "scoring": "join"}, "a model over broadcast_limit_mb is scored by the join scorer"),
    ],
)
def test_what_scores_only_with_spark_is_refused_in_process(tmp_path, settings, says):
    train_nb_in_process(
        load_config(None, {"train.path": str(FIXTURES / "china_train.tsv"), **settings}), tmp_path / "m"
    )
    cfg = load_config(None, {"test.path": str(FIXTURES / "china_test.tsv"), **settings})
    with pytest.raises(ConfigError, match=f"cannot score in process: {says}"):
        plan_nb_classify(cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r", where="here")
    assert not (tmp_path / "r").exists()
