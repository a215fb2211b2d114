"""The textbook variants through the jobs: a binary decision threshold with its precision/recall
curve and log-loss on a table worked by hand, and the ``mllib`` preset against MLlib's NaiveBayes."""

import json
import math

import pytest

from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import classify_nb, train_nb
from nbspark.settings.config import load_config

pytestmark = pytest.mark.spark

# x = a in 3 of 4 "pos" rows and 1 of 4 "neg" rows: P(a|pos) = (3+1)/(4+2) = 2/3, P(a|neg) = 1/3,
# equal priors -> P(pos | a) = 2/3, P(pos | b) = 1/3.
TRAIN = "label,x\n" + "pos,a\n" * 3 + "pos,b\n" + "neg,a\n" + "neg,b\n" * 3
TEST = "label,x\npos,a\npos,a\npos,b\nneg,b\nneg,a\n"


def run(spark, tmp_path, name, **settings):
    (tmp_path / "train.csv").write_text(TRAIN)
    (tmp_path / "test.csv").write_text(TEST)
    base = {
        "task": "naive_bayes",
        "nb.model": "categorical",
        "train.format": "csv",
        "train.path": str(tmp_path / "train.csv"),
        "test.format": "csv",
        "test.path": str(tmp_path / "test.csv"),
    }
    cfg = load_config(None, {**base, **settings})
    if not (tmp_path / "m").exists():
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    return classify_nb(
        spark,
        cfg,
        tmp_path / "m",
        resolve_input(cfg.test, None),
        tmp_path / name,
        overrides=frozenset(f"nb.{k}" for k in settings if k.startswith("nb.")),
    )


def test_binary_decision_threshold_pr_curve_and_log_loss(spark, tmp_path):
    at_half = run(spark, tmp_path, "r1", **{"nb.positive_label": "pos", "nb.decision_threshold": "0.5"})
    # t = 0.5: the three a rows are positive: tp 2, fp 1, fn 1
    assert at_half["confusion"] == {"pos": {"pos": 2, "neg": 1}, "neg": {"pos": 1, "neg": 1}}
    pr = at_half["pr_curve"]
    assert (pr["precision_at_threshold"], pr["recall_at_threshold"]) == pytest.approx((2 / 3, 2 / 3))
    assert pr["average_precision"] == pytest.approx(2 / 3 * 2 / 3 + 1 / 3 * 3 / 5)
    # P(gold): 2/3, 2/3, 1/3, 2/3, 1/3
    assert at_half["log_loss"] == pytest.approx(-(3 * math.log(2 / 3) + 2 * math.log(1 / 3)) / 5)
    assert json.loads((tmp_path / "r1" / "pr.json").read_text())["recall"] == pytest.approx([2 / 3, 1.0])
    assert (tmp_path / "r1" / "pr.png").stat().st_size > 0
    # t = 0.3: every row is positive (1/3 > 0.3); the predicted class's posterior is written
    low = run(spark, tmp_path, "r2", **{"nb.positive_label": "pos", "nb.decision_threshold": "0.3"})
    assert low["confusion"] == {"pos": {"pos": 3}, "neg": {"pos": 2}}
    probs = sorted(
        r["probability"] for r in spark.read.parquet(str(tmp_path / "r2" / "predictions")).collect()
    )
    assert probs == pytest.approx([1 / 3, 1 / 3, 2 / 3, 2 / 3, 2 / 3])


@pytest.mark.realdata
@pytest.mark.parametrize("model_type", ["multinomial", "bernoulli"])
def test_the_mllib_preset_is_mllib(spark, data_dir, tmp_path, model_type):
    """Train and classify jobs with nb.preset = mllib (λ = 1) against RegexTokenizer +
    CountVectorizer + NaiveBayes on the same SMS split: the same predictions, probabilities within 1e-9."""
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.feature import CountVectorizer, RegexTokenizer, StringIndexer

    lines = (data_dir / "smsspam" / "SMSSpamCollection").read_text(encoding="utf-8").splitlines()
    rows = [(str(i), *line.split("\t", 1)) for i, line in enumerate(lines) if "\t" in line]
    for name, part in (("train.tsv", rows[:4000]), ("test.tsv", rows[4000:])):
        (tmp_path / name).write_text("".join(f"{i}\t{y}\t{t}\n" for i, y, t in part), encoding="utf-8")
    settings = {
        "task": "naive_bayes",
        "nb.model": model_type,
        "nb.tokenizer": "words",
        "nb.preset": "mllib",
        "nb.posteriors": "all",
        "train.format": "tsv",
        "train.path": str(tmp_path / "train.tsv"),
        "test.format": "tsv",
        "test.path": str(tmp_path / "test.tsv"),
    }
    cfg = load_config(None, settings)
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    classify_nb(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r")
    ours = {
        r["id"]: (r["predicted"][0], dict(zip(r["ranked_labels"], r["ranked_probabilities"])))
        for r in spark.read.parquet(str(tmp_path / "r" / "predictions")).collect()
    }

    frame = spark.createDataFrame([(i, y, t) for i, y, t in rows], "id STRING, category STRING, text STRING")
    train, test = frame.where(frame.id.cast("int") < 4000), frame.where(frame.id.cast("int") >= 4000)
    idx = StringIndexer(inputCol="category", outputCol="label")
    pipe = Pipeline(
        stages=[
            RegexTokenizer(inputCol="text", outputCol="tokens", pattern="(?U)\\W+"),
            idx,
            CountVectorizer(inputCol="tokens", outputCol="features", binary=model_type == "bernoulli"),
            NaiveBayes(smoothing=1.0, modelType=model_type),
        ]
    )
    fitted = pipe.fit(train)
    labels = fitted.stages[1].labels
    theirs = {
        r["id"]: (labels[int(r["prediction"])], dict(zip(labels, r["probability"].toArray())))
        for r in fitted.transform(test).select("id", "prediction", "probability").collect()
    }
    assert ours.keys() == theirs.keys() and len(ours) > 1000
    assert [ours[i][0] for i in sorted(ours)] == [theirs[i][0] for i in sorted(ours)]
    worst = max(abs(ours[i][1][c] - theirs[i][1][c]) for i in ours for c in labels)
    assert worst < 1e-9, worst
