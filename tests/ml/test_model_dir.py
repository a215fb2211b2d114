"""One model, every tool: a model trained by the command line (``nbspark.fit``, the train job) as a
pyspark.ml Pipeline stage (``fromModelDir``), scoring as ``nbspark.load`` scores it; and a model
fitted in a Pipeline read back by ``nbspark.load`` with the ``StringIndexer``'s label names."""

import numpy as np
import pytest

import nbspark

pytestmark = pytest.mark.spark


def _trained(tmp_path, fixtures, **settings):
    out = tmp_path / "model"
    nbspark.fit(
        settings={
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "train.format": "tsv",
            "train.path": str(fixtures / "china_train.tsv"),
            **settings,
        },
        out=out,
    )
    return out


def _texts(fixtures):
    return [line.split("\t")[2] for line in (fixtures / "china_test.tsv").read_text().splitlines()] + [
        "Tokyo Japan Chinese",
        "Beijing Beijing",
        "nothing seen here",
    ]


@pytest.mark.parametrize(
    ("model", "alpha"), [("multinomial", "1.0"), ("multinomial", "0.5"), ("bernoulli", "1.0")]
)
def test_a_command_line_model_is_a_pipeline_stage_that_scores_as_nbspark_load(
    spark, tmp_path, fixtures, model, alpha
):
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.feature import IndexToString

    from nbspark.ml import CountingNaiveBayesModel

    model_dir = _trained(tmp_path, fixtures, **{"nb.model": model, "nb.alpha": alpha})
    loaded = nbspark.load(model_dir)
    stage = CountingNaiveBayesModel.fromModelDir(str(model_dir)).setFeaturesCol("text")
    assert stage.labels == list(loaded.classes_) == ["c", "j"]
    assert (stage.getModelType(), stage.getSmoothing()) == (model, float(alpha))
    texts = _texts(fixtures)
    df = spark.createDataFrame([(t,) for t in texts], "text STRING")
    names = IndexToString(inputCol="prediction", outputCol="predictedLabel", labels=stage.labels)
    pipeline = Pipeline(stages=[stage, names]).fit(df)  # a Pipeline of fitted stages fits nothing
    pipeline.save(str(tmp_path / "pipe"))
    for fitted in (pipeline, PipelineModel.load(str(tmp_path / "pipe"))):
        rows = fitted.transform(df).collect()
        assert [r["predictedLabel"] for r in rows] == loaded.predict(texts).tolist()
        got = np.array([r["probability"].toArray() for r in rows])
        np.testing.assert_allclose(got, loaded.predict_proba(texts), rtol=0, atol=1e-12)


def test_a_model_dir_a_stage_cannot_score_as_nbspark_load_is_refused_in_one_line(spark, tmp_path, fixtures):
    from nbspark.ml import CountingNaiveBayesModel

    smooth = _trained(tmp_path / "a", fixtures, **{"nb.unseen": "smooth"})
    with pytest.raises(ValueError, match=r"^fromModelDir scores as MLlib does .*unseen='smooth'"):
        CountingNaiveBayesModel.fromModelDir(str(smooth))
    table = tmp_path / "weather"
    nbspark.fit(
        settings={
            "task": "naive_bayes",
            "nb.model": "categorical",
            "train.format": "csv",
            "train.path": str(fixtures / "weather.csv"),
            "nb.label_column": "play",
        },
        out=table,
    )
    with pytest.raises(
        ValueError,
        match=r"^fromModelDir takes a multinomial or Bernoulli text model; .* categorical model "
        r"\(nbspark.load scores it; CountingTableNaiveBayesModel.fromModelDir makes it a stage\)$",
    ):
        CountingNaiveBayesModel.fromModelDir(str(table))
    with pytest.raises(Exception, match="nothing-here: no such model directory"):
        CountingNaiveBayesModel.fromModelDir(str(tmp_path / "nothing-here"))
    # a model of another family names the stage that reads it (it said "--set task=", a job's hint)
    from nbspark.ml import CountingBackoffModel, CountingDensityModel

    density = tmp_path / "density"
    nbspark.fit(
        settings={"task": "density", "train.format": "csv", "train.path": str(fixtures / "weather.csv")},
        out=density,
    )
    with pytest.raises(
        ValueError,
        match=r"density: a density model, which CountingDensityModel.fromModelDir reads; "
        r"CountingNaiveBayesModel reads a naive_bayes one$",
    ):
        CountingNaiveBayesModel.fromModelDir(str(density))
    with pytest.raises(
        ValueError, match=r"a naive_bayes model, which CountingNaiveBayesModel.fromModelDir reads"
    ):
        CountingBackoffModel.fromModelDir(str(table))
    with pytest.raises(
        ValueError, match=r"a naive_bayes model, which CountingNaiveBayesModel.fromModelDir reads"
    ):
        CountingDensityModel.fromModelDir(str(table))


def test_a_pipeline_model_keeps_the_indexers_label_names_for_nbspark_load(spark, tmp_path):
    """StringIndexer orders labels by frequency (spam, the commoner here, is 0.0); the saved counts
    speak names, so nbspark.load's classes_ are names and its columns follow them, not the index."""
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.feature import RegexTokenizer, StringIndexer

    from nbspark.ml import CountingNaiveBayes, CountingNaiveBayesModel

    rows = [
        ("spam", "win a free prize now"),
        ("spam", "prize prize now"),
        ("spam", "free entry win"),
        ("ham", "see you at six"),
        ("ham", "free at six"),
    ]
    df = spark.createDataFrame(rows, "category STRING, text STRING")
    pipe = Pipeline(
        stages=[
            RegexTokenizer(inputCol="text", outputCol="tokens", pattern="(?U)\\W+"),
            StringIndexer(inputCol="category", outputCol="label"),
            CountingNaiveBayes(featuresCol="tokens"),
        ]
    ).fit(df)
    indexer_labels = pipe.stages[1].labels
    assert indexer_labels == ["spam", "ham"]
    assert pipe.stages[2].labels == indexer_labels
    pipe.save(str(tmp_path / "pipe"))
    stage_dir = next((tmp_path / "pipe" / "stages").glob("2_*"))
    loaded = nbspark.load(stage_dir / "nbspark")
    assert loaded.classes_ == ("ham", "spam")
    texts = [t for _, t in rows] + ["a free day at six"]
    scored = pipe.transform(
        spark.createDataFrame([(t, "ham") for t in texts], "text STRING, category STRING")
    )
    got = loaded.predict_proba(texts)
    for r, ours in zip(scored.collect(), got):
        theirs = r["probability"].toArray()  # by index: spam, ham
        assert ours.tolist() == pytest.approx([theirs[1], theirs[0]], abs=1e-12)
        assert loaded.classes_[int(ours.argmax())] == indexer_labels[int(r["prediction"])]
    again = PipelineModel.load(str(tmp_path / "pipe")).stages[2]  # and back: names -> their values
    assert isinstance(again, CountingNaiveBayesModel) and again.labels == indexer_labels
    assert again.counts.classes == (0.0, 1.0)


def test_a_command_line_backoff_model_is_a_pipeline_stage_that_decides_as_nbspark_load(
    spark, tmp_path, fixtures
):
    from nbspark.backoff.jobs import train
    from nbspark.inputs.resolve import resolve_input
    from nbspark.ml import CountingBackoffModel
    from nbspark.settings.config import load_config

    cfg = load_config(
        None, {"train.path": str(fixtures / "ngrams.txt"), "test.path": str(fixtures / "mini.sgm")}
    )
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    stage = CountingBackoffModel.fromModelDir(str(tmp_path / "m"))
    loaded = nbspark.load(tmp_path / "m")
    windows = [
        "Would NOT _ the outcome",
        "could not _ the ratio",
        "the cumulative effect of the",
        "a b _ c d",
    ]
    df = spark.createDataFrame([(w.split(),) for w in windows], "window ARRAY<STRING>")
    got = [(r["prediction"], r["probability"], r["level"]) for r in stage.transform(df).collect()]
    assert got == [(e["label"], e["probability"], e["level"]) for e in loaded.explain(windows)]
    assert got[0][0] == "affect" and got[0][2] == "ABDE"  # lower-cased as the model was trained


@pytest.mark.realdata
def test_a_command_line_sms_model_in_a_pipeline_against_mllibs(spark, data_dir, tmp_path, capsys):
    """The newcomer's third task: an SMS model trained by nbspark (in process, from a tsv) used in a
    Pipeline on the held-out messages, next to MLlib's NaiveBayes fitted on the same messages."""
    import time

    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from pyspark.ml.feature import IndexToString
    from pyspark.sql import functions as F

    from nbspark.ml import CountingNaiveBayesModel
    from tests.ml.test_naive_bayes import pipelines, sms_frame

    df = sms_frame(spark, data_dir / "smsspam" / "SMSSpamCollection").where(F.col("category").isNotNull())
    train, test = df.randomSplit([0.8, 0.2], seed=7)
    rows = train.collect()
    (tmp_path / "train.tsv").write_text(
        "".join(f"m{i}\t{r['category']}\t{r['text'].replace(chr(9), ' ')}\n" for i, r in enumerate(rows))
    )
    model_dir = _trained(tmp_path, tmp_path, **{"train.path": str(tmp_path / "train.tsv")})
    stage = CountingNaiveBayesModel.fromModelDir(str(model_dir)).setFeaturesCol("text")
    names = IndexToString(inputCol="prediction", outputCol="predicted", labels=stage.labels)
    start = time.perf_counter()
    ours = names.transform(stage.transform(test)).select("text", "category", "predicted").collect()
    seconds = time.perf_counter() - start
    loaded = nbspark.load(model_dir)
    assert [r["predicted"] for r in ours] == loaded.predict([r["text"] for r in ours]).tolist()
    _, mllib = pipelines("multinomial")
    mllib_model = mllib.fit(train)
    labels = mllib_model.stages[1].labels
    theirs = mllib_model.transform(test).select("text", "prediction").collect()
    accuracy = sum(r["predicted"] == r["category"] for r in ours) / len(ours)
    mllib_accuracy = MulticlassClassificationEvaluator(metricName="accuracy").evaluate(
        mllib_model.transform(test)
    )
    agree = sum(a["predicted"] == labels[int(b["prediction"])] for a, b in zip(ours, theirs)) / len(ours)
    with capsys.disabled():
        print(
            f"\nSMS held out ({len(ours)} messages): nbspark model in a Pipeline {accuracy:.4f} "
            f"({seconds:.2f} s to score), MLlib {mllib_accuracy:.4f}, the same label {agree:.4f}"
        )
    assert accuracy > 0.95 and abs(accuracy - mllib_accuracy) < 0.01 and agree > 0.99


def test_an_estimator_fitted_in_python_is_a_pipeline_stage(spark, tmp_path, fixtures):
    """nbspark.NaiveBayes fitted on texts in memory and saved: the stage scores as the estimator."""
    from nbspark.ml import CountingNaiveBayesModel

    lines = [line.split("\t") for line in (fixtures / "china_train.tsv").read_text().splitlines()]
    documents = [(labels, text) for _, labels, text in (x for x in lines if len(x) == 3 and x[1])]
    estimator = nbspark.NaiveBayes(tokenizer="words").fit(
        [t for _, t in documents], [y for y, _ in documents]
    )
    estimator.save(tmp_path / "fitted")
    stage = CountingNaiveBayesModel.fromModelDir(str(tmp_path / "fitted")).setFeaturesCol("text")
    texts = _texts(fixtures)
    rows = stage.transform(spark.createDataFrame([(t,) for t in texts], "text STRING")).collect()
    assert [stage.labels[int(r["prediction"])] for r in rows] == estimator.predict(texts).tolist()
    got = np.array([r["probability"].toArray() for r in rows])
    np.testing.assert_allclose(got, estimator.predict_proba(texts), rtol=0, atol=1e-12)


def test_a_pipeline_model_of_label_values_gives_nbspark_load_those_numbers(spark, tmp_path):
    """Label values with no names (0, 2, 10: no StringIndexer): the saved counts keep them as numbers
    (``label_numbers``), so nbspark.load's classes_ are 0.0, 2.0, 10.0 in that order, and its
    predictions are the stage's prediction column, its probabilities the stage's."""
    from pyspark.ml import Pipeline
    from pyspark.ml.feature import RegexTokenizer

    from nbspark.ml import CountingNaiveBayes

    rows = [
        (10.0, "win a free prize now"),
        (10.0, "prize prize now"),
        (2.0, "see you at six"),
        (2.0, "free at six"),
        (0.0, "the report is due"),
        (0.0, "report due at noon"),
    ]
    df = spark.createDataFrame(rows, "label DOUBLE, text STRING")
    pipe = Pipeline(
        stages=[
            RegexTokenizer(inputCol="text", outputCol="tokens", pattern="(?U)\\W+"),
            CountingNaiveBayes(featuresCol="tokens"),
        ]
    ).fit(df)
    pipe.save(str(tmp_path / "pipe"))
    loaded = nbspark.load(next((tmp_path / "pipe" / "stages").glob("1_*")) / "nbspark")
    assert list(loaded.classes_) == [0.0, 2.0, 10.0]
    scored = pipe.transform(df).collect()
    assert loaded.predict([t for _, t in rows]).tolist() == [r["prediction"] for r in scored]
    for r, ours in zip(scored, loaded.predict_proba([t for _, t in rows])):
        assert ours.tolist() == pytest.approx(r["probability"].toArray()[[0, 2, 10]].tolist(), abs=1e-12)


@pytest.mark.parametrize("kind", ["mixed", "gaussian", "categorical"])
def test_a_command_line_table_model_is_a_pipeline_stage_that_scores_as_nbspark_load(
    spark, tmp_path, fixtures, kind
):
    """A table model (refused by ``CountingNaiveBayesModel.fromModelDir``) as a stage: the columns read
    by name (numbers as doubles, categories as text; a null a missing cell; an id kept), the
    probabilities and raw predictions ``nbspark.load``'s to 1e-12, its class names through
    ``IndexToString``, the same through a saved PipelineModel; a missing column, a taken output
    column and a text model refused in one line."""
    import csv

    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.feature import IndexToString

    from nbspark.ml import CountingTableNaiveBayesModel

    weather = list(csv.DictReader((fixtures / "weather.csv").open()))[:14]  # row 15: a text temperature
    if kind == "gaussian":  # numbers only
        weather = [{c: r[c] for c in ("temperature", "humidity", "play")} for r in weather]
    with (tmp_path / "w.csv").open("w", newline="") as f:
        csv.DictWriter(f, list(weather[0])).writerows([dict(zip(weather[0], weather[0])), *weather])
    settings = {"task": "naive_bayes", "nb.model": kind, "nb.label_column": "play"}
    nbspark.fit(settings={**settings, "train.path": str(tmp_path / "w.csv")}, out=tmp_path / "m")
    loaded = nbspark.load(tmp_path / "m")
    numeric = set(loaded.manifest["columns"]["numeric"])
    rows = [{c: (float(v) if c in numeric else v) for c, v in r.items() if c != "play"} for r in weather]
    rows.append({c: (None if c == "humidity" else v) for c, v in rows[0].items()})  # a missing cell
    ddl = ", ".join(f"{c} {'DOUBLE' if c in numeric else 'STRING'}" for c in rows[0])
    df = spark.createDataFrame([(i, *r.values()) for i, r in enumerate(rows)], f"id INT, {ddl}")
    stage = CountingTableNaiveBayesModel.fromModelDir(str(tmp_path / "m"))
    assert stage.labels == list(loaded.classes_) == ["no", "yes"]
    names = IndexToString(inputCol="prediction", outputCol="predictedLabel", labels=stage.labels)
    pipeline = Pipeline(stages=[stage, names]).fit(df)
    pipeline.save(str(tmp_path / "pipe"))
    cells = [{c: v for c, v in r.items() if v is not None} for r in rows]
    for fitted in (pipeline, PipelineModel.load(str(tmp_path / "pipe"))):
        got = sorted(fitted.transform(df).collect(), key=lambda r: r["id"])
        assert [r["predictedLabel"] for r in got] == loaded.predict(cells).tolist()
        proba = np.array([r["probability"].toArray() for r in got])
        np.testing.assert_allclose(proba, loaded.predict_proba(cells), rtol=0, atol=1e-12)
        raw = np.array([r["rawPrediction"].toArray() for r in got])
        np.testing.assert_allclose(raw, loaded.predict_joint_log_proba(cells), rtol=0, atol=1e-9)
    with pytest.raises(ValueError, match=r"no column\(s\) humidity \(the model's columns: "):
        stage.transform(df.drop("humidity"))
    with pytest.raises(ValueError, match="has a column 'probability' already"):
        stage.transform(df.withColumn("probability", df["id"]))
    text = _trained(tmp_path / "t", fixtures)
    with pytest.raises(
        ValueError, match="a multinomial text model, which CountingNaiveBayesModel.fromModelDir"
    ):
        CountingTableNaiveBayesModel.fromModelDir(str(text))
