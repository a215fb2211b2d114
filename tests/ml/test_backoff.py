"""Counting from DataFrames (``nbspark.spine.frames``) and the backoff Estimator
(``nbspark.ml.CountingBackoff``).

The windows below are the valid lines of tests/data/ngrams.txt, counted by hand: ABDE ``would not
_ the outcome`` = affect 6, effect 1; ``the cumulative _ of the`` = effect 10, affect 2; B ``not``
= affect 9, effect 1; the prior = affect 11, effect 11 (a tie: the label that sorts first)."""

from collections import Counter

import pytest

import nbspark
from nbspark.backoff.events import Example, example_events
from nbspark.errors import OutputError
from nbspark.inputs.parsers import MalformedLine, parse_ngram_line

pytestmark = pytest.mark.spark

WINDOWS = [
    ("the cumulative effect of the", 10),
    ("the cumulative affect of the", 2),
    ("would not affect the outcome", 6),
    ("would not effect the outcome", 1),
    ("does not affect the ratio", 3),
]


@pytest.fixture(scope="module")
def windows(spark):
    return spark.createDataFrame([(w.split(), n) for w, n in WINDOWS], "window ARRAY<STRING>, n BIGINT")


@pytest.fixture(scope="module")
def fitted(windows):
    from nbspark.ml import CountingBackoff

    return CountingBackoff(weightCol="n").fit(windows)


def decide(model, spark, patterns):
    df = spark.createDataFrame([(p.split(),) for p in patterns], "window ARRAY<STRING>")
    return [(r["prediction"], r["probability"], r["level"]) for r in model.transform(df).collect()]


def test_the_backoff_estimator_decides_as_counted_by_hand(fitted, spark):
    got = decide(
        fitted,
        spark,
        [
            "would not _ the outcome",
            "the cumulative _ of the",
            "it not _ here now",
            "a b _ c d",
            "would not effect the outcome",
        ],
    )
    assert got[0] == ("affect", pytest.approx(6 / 7), "ABDE")
    assert got[1] == ("effect", pytest.approx(10 / 12), "ABDE")
    assert got[2] == ("affect", pytest.approx(9 / 10), "B")
    assert got[3] == ("affect", pytest.approx(0.5), "")
    assert got[4] == ("affect", pytest.approx(6 / 7), "ABDE")  # the written centre competes within its set


def test_an_output_column_the_frame_has_is_refused_as_mllib_refuses_it(fitted, spark):
    df = spark.createDataFrame(
        [(["would", "not", "_", "the", "outcome"], "mine")], "window ARRAY<STRING>, level STRING"
    )
    with pytest.raises(ValueError, match="^CountingBackoffModel: the DataFrame has a column 'level' already"):
        fitted.transform(df)  # the user's column was replaced in silence
    assert fitted.copy({fitted.levelCol: "how"}).transform(df).first()["level"] == "mine"


def test_a_new_chain_reuses_the_counts(fitted, spark):
    shorter = fitted.copy().setBackoff(["B", ""])
    assert decide(shorter, spark, ["would not _ the outcome"]) == [("affect", pytest.approx(9 / 10), "B")]
    with pytest.raises(OutputError, match="did not count"):  # at once, not at the first transform
        fitted.copy().setBackoff(["AE", ""])
    with pytest.raises(TypeError, match="chain is a list of subsets"):
        fitted.copy().setBackoff("ABDE")  # not the subsets A, B, D and E


def test_count_windows_equals_the_train_job_and_a_plain_python_count(spark, tmp_path, fixtures):
    from nbspark.backoff.frames import count_windows
    from nbspark.backoff.jobs import train
    from nbspark.inputs.resolve import resolve_input
    from nbspark.settings.config import load_config

    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    job = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "m" / "counts")).collect())

    examples = []
    for line in (fixtures / "ngrams.txt").read_text().splitlines():
        try:
            tokens, count = parse_ngram_line(line, 5)
        except MalformedLine:
            continue
        tokens = tuple(t.lower() for t in tokens)
        if tokens[2] in cfg.confusion_set:
            examples.append(Example("x", tokens, count))
    plain: Counter = Counter()
    for ex in examples:
        for key, n in example_events(ex, cfg.counted_subsets, cfg.letters):
            plain[key] += n
    df = spark.createDataFrame(
        [(list(e.window), e.weight) for e in examples], "window ARRAY<STRING>, n BIGINT"
    )
    ours = sorted(tuple(r) for r in count_windows(df, "window", "n", subsets=cfg.counted_subsets).collect())
    assert ours == sorted((*k, n) for k, n in plain.items())
    assert ours == job


def test_round_trip_in_a_pipeline_and_nbspark_load(fitted, windows, spark, tmp_path):
    from pyspark.ml import Pipeline, PipelineModel

    from nbspark.ml import CountingBackoff

    model = Pipeline(stages=[CountingBackoff(weightCol="n")]).fit(windows)
    model.save(str(tmp_path / "pm"))
    again = PipelineModel.load(str(tmp_path / "pm"))
    cols = ["prediction", "probability", "level"]
    assert again.transform(windows).select(cols).collect() == model.transform(windows).select(cols).collect()
    (stage,) = (tmp_path / "pm" / "stages").iterdir()
    loaded = nbspark.load(stage / "nbspark")
    p = loaded.explain(["would not _ the outcome"])[0]
    assert (p["label"], p["probability"], p["level"]) == ("affect", pytest.approx(6 / 7), "ABDE")


def test_bad_windows_and_weights_are_refused(spark):
    from nbspark.ml import CountingBackoff

    short = spark.createDataFrame([(["a", "b", "c"], 1)], "window ARRAY<STRING>, n BIGINT")
    with pytest.raises(Exception, match="has not 5 tokens"):
        CountingBackoff(weightCol="n").fit(short)
    for window in (
        ["a", "b", None, "d", "e"],
        ["a", None, "affect", "d", "e"],
    ):  # a label None; a wildcard context
        holed = spark.createDataFrame(
            [(["x", "y", "effect", "z", "w"], 1), (window, 1)], "window ARRAY<STRING>, n BIGINT"
        )
        with pytest.raises(Exception, match="has a null token"):
            CountingBackoff().fit(holed)
    # a null window was counted with a label None ("a confusion set needs two distinct words, got [None]")
    nothing = spark.createDataFrame(
        [(["x", "y", "effect", "z", "w"], 1), (None, 1)], "window ARRAY<STRING>, n BIGINT"
    )
    with pytest.raises(Exception, match="column 'window' holds a null window"):
        CountingBackoff().fit(nothing)
    # no windows, or one word only: refused at fit (it failed at transform, on the confusion set)
    one = spark.createDataFrame([(["x", "y", "effect", "z", "w"], 1)], "window ARRAY<STRING>, n BIGINT")
    with pytest.raises(ValueError, match="^CountingBackoff: the dataset has no windows to fit$"):
        CountingBackoff().fit(spark.createDataFrame([], "window ARRAY<STRING>, n BIGINT"))
    with pytest.raises(
        ValueError, match="^CountingBackoff: every window is centred on 'effect'; .* confusionSets$"
    ):
        CountingBackoff().fit(one)
    model = CountingBackoff(confusionSets=["affect effect"]).fit(one)  # the other word named: a model
    assert model.predictor().predict(["x y _ z w"]).tolist() == ["effect"]
    # scoring refuses a null window or token, as fitting does (a TypeError; a token None was a context)
    for window in (None, ["x", None, "effect", "z", "w"]):
        with pytest.raises(Exception, match="a window is a string or a sequence of strings"):
            model.transform(spark.createDataFrame([(window, 1)], "window ARRAY<STRING>, n BIGINT")).collect()
    negative = spark.createDataFrame([(["a", "b", "affect", "d", "e"], -1)], "window ARRAY<STRING>, n BIGINT")
    with pytest.raises(Exception, match="negative"):
        CountingBackoff(weightCol="n").fit(negative)
    with pytest.raises(ValueError, match="must be array<string>"):
        CountingBackoff(windowsCol="n").fit(negative)


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
def test_count_documents_equals_a_plain_python_count(spark, model):
    from nbspark.naive_bayes.events import doc_events
    from nbspark.naive_bayes.frames import count_documents

    docs = [
        ("c", "chinese beijing chinese"),
        ("c", "chinese chinese shanghai"),
        ("c", "chinese macao"),
        ("j", "tokyo japan chinese"),
    ]
    plain: Counter = Counter()
    for label, text in docs:
        for key, n in doc_events([label], text.split(), model):
            plain[key] += n
    df = spark.createDataFrame([(y, t.split()) for y, t in docs], "label STRING, tokens ARRAY<STRING>")
    got = sorted(
        (r["event"], r["label"] or "", r["feature"] or "", r["n"])
        for r in count_documents(df, model=model).collect()
    )
    assert got == sorted((e, y or "", w or "", n) for (e, y, w, _), n in plain.items())
