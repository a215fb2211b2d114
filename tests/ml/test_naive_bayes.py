"""``nbspark.ml.CountingNaiveBayes`` in MLlib pipelines: the same predictions as MLlib's
NaiveBayes (multinomial and Bernoulli, same smoothing), a PipelineModel round trip, nbspark.load
on the saved counts, and a CrossValidator over the smoothing that counts once per fold."""

import numpy as np
import pytest

pytestmark = pytest.mark.spark


def sms_frame(spark, path, limit=None):
    from pyspark.sql import functions as F

    parts = F.split("value", "\t", 2)
    df = (
        spark.read.text(str(path))
        .select(F.get(parts, 0).alias("category"), F.get(parts, 1).alias("text"))
        .where(F.col("text").isNotNull())
    )
    return df.limit(limit) if limit else df


def pipelines(model_type, smoothing=1.0):
    from pyspark.ml import Pipeline
    from pyspark.ml.classification import NaiveBayes
    from pyspark.ml.feature import CountVectorizer, RegexTokenizer, StringIndexer

    from nbspark.ml import CountingNaiveBayes

    tok = RegexTokenizer(inputCol="text", outputCol="tokens", pattern="(?U)\\W+", toLowercase=True)
    idx = StringIndexer(inputCol="category", outputCol="label")
    ours = Pipeline(
        stages=[tok, idx, CountingNaiveBayes(featuresCol="tokens", smoothing=smoothing, modelType=model_type)]
    )
    cv = CountVectorizer(inputCol="tokens", outputCol="features", binary=model_type == "bernoulli")
    mllib = Pipeline(stages=[tok, idx, cv, NaiveBayes(smoothing=smoothing, modelType=model_type)])
    return ours, mllib


def compare(ours_df, mllib_df):
    a = sorted(
        (r["text"], r["prediction"], r["probability"].toArray().tolist())
        for r in ours_df.select("text", "prediction", "probability").collect()
    )
    b = sorted(
        (r["text"], r["prediction"], r["probability"].toArray().tolist())
        for r in mllib_df.select("text", "prediction", "probability").collect()
    )
    assert [x[:2] for x in a] == [x[:2] for x in b]
    for x, y in zip(a, b):
        assert x[2] == pytest.approx(y[2], abs=1e-9)


@pytest.mark.parametrize("model_type", ["multinomial", "bernoulli", "complement"])
def test_equals_mllib_on_a_small_table(spark, model_type):
    rows = [
        ("ham", "see you at six"),
        ("spam", "win a free prize now"),
        ("ham", "free at six"),
        ("spam", "prize prize now"),
        ("ham", "you win"),
        ("spam", "claim your free prize"),
    ]
    df = spark.createDataFrame(rows, "category STRING, text STRING")
    ours, mllib = pipelines(model_type, 0.5)
    ours, mllib = ours.fit(df), mllib.fit(df)
    compare(ours.transform(df), mllib.transform(df))
    # MLlib's pi and theta, theta's columns mapped from CountVectorizer's vocabulary to the sorted tokens
    mine, theirs, tokens = ours.stages[-1], mllib.stages[-1], mllib.stages[2].vocabulary
    assert mine.pi.toArray().tolist() == pytest.approx(theirs.pi.toArray().tolist(), abs=1e-12)
    at = [sorted(tokens).index(t) for t in tokens]
    assert mine.theta.numRows == theirs.numClasses and mine.theta.numCols == len(tokens)
    np.testing.assert_allclose(mine.theta.toArray()[:, at], theirs.theta.toArray(), atol=1e-12)


@pytest.mark.realdata
@pytest.mark.parametrize("model_type", ["multinomial", "bernoulli", "complement"])
def test_equals_mllib_on_sms_and_round_trips(spark, data_dir, tmp_path, model_type):
    from pyspark.ml import PipelineModel
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator

    import nbspark

    df = sms_frame(spark, data_dir / "smsspam" / "SMSSpamCollection")
    train, test = df.randomSplit([0.8, 0.2], seed=7)
    ours, mllib = pipelines(model_type)
    fitted = ours.fit(train)
    compare(fitted.transform(test), mllib.fit(train).transform(test))
    fitted.save(str(tmp_path / "pipe"))
    again = PipelineModel.load(str(tmp_path / "pipe"))
    compare(again.transform(test), fitted.transform(test))
    accuracy = MulticlassClassificationEvaluator(metricName="accuracy").evaluate(again.transform(test))
    assert accuracy > 0.95
    # the saved counts are an nbspark model too
    stage_dir = next((tmp_path / "pipe" / "stages").glob("2_*"))
    loaded = nbspark.load(stage_dir / "nbspark")
    labels = fitted.stages[1].labels  # the StringIndexer's, by label value
    assert loaded.kind == model_type and loaded.classes_ == tuple(sorted(labels))  # names, not '0.0'
    rows = fitted.transform(test).select("text", "probability").limit(50).collect()
    got = loaded.predict_proba(
        [r["text"] for r in rows]
    )  # its words tokenizer splits as RegexTokenizer's \W+
    by_value = [loaded.classes_.index(name) for name in labels]
    for ours, theirs in zip(got[:, by_value].tolist(), (r["probability"].toArray().tolist() for r in rows)):
        assert ours == pytest.approx(theirs, abs=1e-9)


def test_a_model_type_it_cannot_fit_is_refused_when_the_estimator_is_made():
    from nbspark.ml import CountingNaiveBayes

    with pytest.raises(
        ValueError,
        match="modelType must be one of multinomial, bernoulli, complement, got 'gaussian' .*"
        "CountingTableNaiveBayesModel.fromModelDir makes it a stage",
    ):
        CountingNaiveBayes(modelType="gaussian")
    with pytest.raises(ValueError, match="got 'Complement'"):
        CountingNaiveBayes().setParams(modelType="Complement")


@pytest.mark.parametrize("model_type", ["multinomial", "complement"])
def test_cross_validation_counts_once_per_fold_and_smoothing_reuses_counts(spark, model_type):
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from pyspark.ml.tuning import CrossValidator, ParamGridBuilder

    from nbspark.ml import CountingNaiveBayes

    rows = [
        (
            float(i % 2),
            ["free", "prize"] if i % 2 else ["see", "you"],
        )
        for i in range(40)
    ]
    df = spark.createDataFrame(rows, "label DOUBLE, tokens ARRAY<STRING>")
    nb = CountingNaiveBayes(featuresCol="tokens", modelType=model_type)
    grid = ParamGridBuilder().addGrid(nb.smoothing, [0.1, 1.0, 10.0]).build()
    before = CountingNaiveBayes.counted
    cv = CrossValidator(
        estimator=nb,
        estimatorParamMaps=grid,
        evaluator=MulticlassClassificationEvaluator(),
        numFolds=3,
        seed=1,
    )
    model = cv.fit(df)
    assert (
        CountingNaiveBayes.counted - before == 3 + 1
    )  # once per fold, then once for the best model on all data
    fitted = model.bestModel
    p1 = fitted.transform(df).select("probability").first()[0]
    before = CountingNaiveBayes.counted
    p2 = fitted.copy({fitted.smoothing: 100.0}).transform(df).select("probability").first()[0]
    assert CountingNaiveBayes.counted == before and p1 != p2  # no recount, another smoothing


def test_refuses_what_mllib_refuses(spark):
    """Values naive Bayes cannot count are refused in one line, as MLlib's NaiveBayes refuses them,
    never fitted into a model that looks right."""
    from pyspark.errors import PySparkException
    from pyspark.ml.linalg import Vectors, VectorUDT
    from pyspark.sql.types import ArrayType, DoubleType, StringType, StructField, StructType

    from nbspark.ml import CountingNaiveBayes

    vectors = StructType(
        [
            StructField("features", VectorUDT()),
            StructField("label", DoubleType()),
            StructField("w", DoubleType()),
        ]
    )
    tokens = StructType(
        [
            StructField("features", ArrayType(StringType())),
            StructField("label", DoubleType()),
            StructField("w", DoubleType()),
        ]
    )
    good = (Vectors.dense([0.0, 1.0]), 1.0, 1.0)
    cases = [
        (vectors, (Vectors.dense([1.0, -2.0]), 0.0, 1.0), {}, "hold a negative, NaN or infinite value"),
        (
            vectors,
            (Vectors.sparse(2, [1], [float("nan")]), 0.0, 1.0),
            {},
            "hold a negative, NaN or infinite value",
        ),
        (
            vectors,
            (Vectors.dense([float("inf"), 0.0]), 0.0, 1.0),
            {},
            "hold a negative, NaN or infinite value",
        ),
        (
            vectors,
            (Vectors.dense([1.0, 0.5]), 0.0, 1.0),
            {"modelType": "bernoulli"},
            "needs 0/1 feature values",
        ),
        (
            vectors,
            (Vectors.dense([1.0, 2.0, 3.0]), 0.0, 1.0),
            {},
            "feature vectors of different sizes \\(2, 3\\)",
        ),
        (
            vectors,
            (Vectors.dense([1.0, 2.0]), 0.5, 1.0),
            {},
            "label column 'label' holds 0.5: labels must be integers >= 0",
        ),
        (vectors, (Vectors.dense([1.0, 2.0]), -1.0, 1.0), {}, "holds -1.0: labels must be integers"),
        (tokens, (["a"], None, 1.0), {}, "holds null: labels must be integers"),
        (
            tokens,
            (["a"], 0.0, -1.0),
            {"weightCol": "w"},
            "weight column 'w' holds a null, NaN, infinite or negative value",
        ),
        # a null document was counted in its class's prior; a null token failed in sorted() with a TypeError
        (tokens, (None, 0.0, 1.0), {}, "tokens column 'features' holds a null document"),
        (tokens, (["a", None], 0.0, 1.0), {}, "tokens column 'features' holds a null token"),
        (vectors, (None, 0.0, 1.0), {}, "features column 'features' holds a null vector"),
    ]
    for schema, bad, params, message in cases:
        first = good if schema is vectors else (["b"], 1.0, 1.0)
        df = spark.createDataFrame([first, bad], schema)
        with pytest.raises(ValueError, match=message):
            CountingNaiveBayes(**params).fit(df)
    # before any work: a string label (it failed in Spark's cast), a missing column, no rows (a model of no
    # classes)
    strings = spark.createDataFrame([(["a"], "spam")], "features ARRAY<STRING>, label STRING")
    with pytest.raises(
        ValueError, match="^CountingNaiveBayes: label column 'label' is string; labels must be numeric"
    ):
        CountingNaiveBayes().fit(strings)
    with pytest.raises(
        ValueError, match="^CountingNaiveBayes: no label column 'y' \\(columns: features, label\\)$"
    ):
        CountingNaiveBayes(labelCol="y").fit(strings)
    with pytest.raises(ValueError, match="^CountingNaiveBayes: the dataset has no rows to fit$"):
        CountingNaiveBayes().fit(spark.createDataFrame([], tokens))
    # a label of 1e9 would make vectors of a billion places; MLlib infers at most 1,000 classes from values
    with pytest.raises(
        ValueError, match="^CountingNaiveBayes: labels go up to 1000000000, past the 1,000 classes"
    ):
        CountingNaiveBayes().fit(spark.createDataFrame([(["a"], 0.0, 1.0), (["b"], 1e9, 1.0)], tokens))
    # scoring refuses them too (MLlib's transform does)
    model = CountingNaiveBayes().fit(
        spark.createDataFrame([good, (Vectors.dense([2.0, 0.0]), 0.0, 1.0)], vectors)
    )
    with pytest.raises(PySparkException, match="multinomial naive Bayes needs feature values >= 0, finite"):
        model.transform(spark.createDataFrame([(Vectors.dense([1.0, -1.0]), 0.0, 1.0)], vectors)).collect()
    with pytest.raises(PySparkException, match="features column 'features' holds a null vector"):
        model.transform(spark.createDataFrame([(None, 0.0, 1.0)], vectors)).collect()
    with pytest.raises(PySparkException, match="a feature vector of 3 values; the model was fit on 2"):
        model.transform(
            spark.createDataFrame([(Vectors.dense([1.0, 0.0, 3.0]), 0.0, 1.0)], vectors)
        ).collect()
    # a place no training vector used is still the model's: scored, not refused
    sparse_fit = CountingNaiveBayes().fit(
        spark.createDataFrame(
            [(Vectors.sparse(3, [0], [1.0]), 0.0, 1.0), (Vectors.sparse(3, [1], [2.0]), 1.0, 1.0)], vectors
        )
    )
    scored = sparse_fit.transform(
        spark.createDataFrame([(Vectors.dense([0.0, 0.0, 5.0]), 0.0, 1.0)], vectors)
    )
    assert scored.count() == 1 and scored.first()["prediction"] in (0.0, 1.0)
    model = CountingNaiveBayes().fit(spark.createDataFrame([(["b"], 1.0, 1.0), (["a"], 0.0, 1.0)], tokens))
    for bad, what in ((None, "document"), (["a", None], "token")):
        with pytest.raises(PySparkException, match=f"tokens column 'features' holds a null {what}"):
            model.transform(spark.createDataFrame([(bad, 0.0, 1.0)], tokens)).collect()
    # an output column the DataFrame has already: refused at transform, as MLlib's model refuses it
    # ("Column prediction already exists"); it was replaced in silence. '' leaves that output out
    scored = model.transform(spark.createDataFrame([(["a"], 0.0, 1.0)], tokens))
    for name in ("prediction", "probability", "rawPrediction"):
        with pytest.raises(
            ValueError, match=f"^CountingNaiveBayesModel: the DataFrame has a column '{name}' already"
        ):
            model.transform(scored.select("features", name))
    kept = model.copy({model.predictionCol: ""}).transform(scored.select("features", "prediction"))
    assert kept.columns == ["features", "prediction", "rawPrediction", "probability"]


def test_a_label_missing_from_training_keeps_every_label_at_its_place(spark):
    """Labels {0, 2} (a fold that lacks class 1): the vectors have three places, class 1 at
    probability 0, so MLlib's evaluators read probability[label] right. The vectors had two places:
    label 2's probability was read from index 2 (out of range) and a label 1 row got class 2's."""
    import math

    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from pyspark.ml.linalg import Vectors

    from nbspark.ml import CountingNaiveBayes

    train = spark.createDataFrame(
        [
            (Vectors.dense([3.0, 0.0, 1.0]), 0.0),
            (Vectors.dense([0.0, 2.0, 1.0]), 2.0),
            (Vectors.dense([1.0, 1.0, 0.0]), 0.0),
        ],
        ["features", "label"],
    )
    model = CountingNaiveBayes().fit(train)
    assert model.numClasses == 3
    rows = model.transform(train).collect()
    # by hand, smoothing 1, vocabulary 3: P(c) = (n_c + 1) / (3 + 2); P(j | 0) = (C(0, j) + 1) / (6 + 3), P(j
    # | 2) = (C(2, j) + 1) / (3 + 3)
    theta = {0.0: [5 / 9, 2 / 9, 2 / 9], 2.0: [1 / 6, 3 / 6, 2 / 6]}
    prior = {0.0: 3 / 5, 2.0: 2 / 5}
    for r in rows:
        x = r["features"].toArray()
        joint = {
            c: math.log(prior[c]) + sum(n * math.log(p) for n, p in zip(x, theta[c])) for c in (0.0, 2.0)
        }
        total = sum(math.exp(v) for v in joint.values())
        assert list(r["probability"]) == pytest.approx(
            [math.exp(joint[0.0]) / total, 0.0, math.exp(joint[2.0]) / total]
        )
        assert r["rawPrediction"][1] == float("-inf") and r["rawPrediction"][2] == pytest.approx(joint[2.0])
        assert r["prediction"] == max(joint, key=joint.get)
    # MLlib's pi and theta, a row per label value: label 1 never seen, prior -inf, its theta the
    # smoothing of no count ((0 + 1) / (0 + 3))
    assert model.pi.toArray().tolist() == pytest.approx([math.log(3 / 5), -math.inf, math.log(2 / 5)])
    np.testing.assert_allclose(
        model.theta.toArray(), np.log([theta[0.0], [1 / 3, 1 / 3, 1 / 3], theta[2.0]]), rtol=1e-12
    )
    loss = MulticlassClassificationEvaluator(metricName="logLoss").evaluate(model.transform(train))
    assert loss == pytest.approx(-sum(math.log(r["probability"][int(r["label"])]) for r in rows) / 3)


def test_a_fold_without_the_rarest_class_keeps_the_indexers_classes(spark, tmp_path):
    """StringIndexer puts the rarest class last: a CrossValidator fold can lack it, and the model's
    vectors then ended one place short, so probability[label] of a row of that class was out of
    range in MLlib's evaluators. The indexer's metadata declares the classes, as MLlib reads it."""
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator
    from pyspark.ml.feature import StringIndexer

    from nbspark.ml import CountingNaiveBayes, CountingNaiveBayesModel

    docs = spark.createDataFrame(
        [
            ("ham", ["see", "you"]),
            ("ham", ["at", "six"]),
            ("ham", ["you", "six"]),
            ("spam", ["win", "now"]),
            ("spam", ["win", "prize"]),
            ("rare", ["odd", "one"]),
        ],
        "category STRING, tokens ARRAY<STRING>",
    )
    indexed = StringIndexer(inputCol="category", outputCol="label").fit(docs).transform(docs)
    fold = indexed.where("category != 'rare'")
    model = CountingNaiveBayes(featuresCol="tokens").fit(fold)
    assert model.numClasses == 3
    scored = model.transform(indexed).collect()
    assert {len(r["probability"]) for r in scored} == {3} and all(r["probability"][2] == 0.0 for r in scored)
    assert MulticlassClassificationEvaluator(metricName="logLoss").evaluate(model.transform(indexed)) > 0
    model.write().overwrite().save(str(tmp_path / "m"))
    assert CountingNaiveBayesModel.load(str(tmp_path / "m")).numClasses == 3


def test_a_failed_check_reported_by_two_stages_at_once_is_one_value_error():
    """Adaptive execution can materialize two stages that both fail a raise_error check; Spark then
    reports them in one Py4JJavaError that PySpark leaves unconverted (CI, 2026-11-27, in the test
    above). ``failed_check`` reads the check's message from that text (as it came, cut), and from
    PySpark's own conversion of a single failure."""
    from nbspark.spine.frames import failed_check

    multiple = (
        "An error occurred while calling o19975.collectToPython.\n"
        ": org.apache.spark.SparkException: [STAGE_MATERIALIZATION_MULTIPLE_FAILURES] Multiple failures "
        "(2) in stage materialization: \n"
        "  1. SparkRuntimeException: [USER_RAISED_EXCEPTION] CountingNaiveBayes: label column 'label' "
        "holds null: labels must be "
        "integers >= 0 (StringIndexer's) SQLSTATE: P0001\n"
        "  2. SparkRuntimeException: [USER_RAISED_EXCEPTION] CountingNaiveBayes: label column 'label' "
        "holds null: labels must be "
        "integers >= 0 (StringIndexer's) SQLSTATE: P0001 SQLSTATE: XX000\n"
        "\tat "
        "org.apache.spark.sql.errors.QueryExecutionErrors$."
        "multiFailuresInStageMaterializationError(QueryExecutionErrors.scala:2043)\n"
    )
    expected = (
        "CountingNaiveBayes: label column 'label' holds null: labels must be integers >= 0 (StringIndexer's)"
    )
    assert failed_check(multiple) == expected
    assert failed_check(f"[USER_RAISED_EXCEPTION] {expected} SQLSTATE: P0001") == expected
    assert failed_check(f"[USER_RAISED_EXCEPTION] {expected}") == expected
    assert (
        failed_check("[FAILED_READ_FILE.NO_HINT] Encountered error while reading file x SQLSTATE: KD001")
        is None
    )
