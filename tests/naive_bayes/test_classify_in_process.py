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
        (
            {**WEATHER, "test.format": "parquet"},
            "a naive Bayes model scores a table's rows \\(parquet\\) with Spark",
        ),
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
