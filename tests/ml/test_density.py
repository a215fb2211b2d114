"""A density model trained by the command line's code (in process) as a pyspark.ml stage: each
row's log density is the lecture's truth table's own (by hand), under either estimator, with the
DataFrame's other columns kept; saved in a Pipeline and loaded back, and read by ``nbspark.load``
from the stage's directory; a DataFrame the model cannot score is refused before any task."""

import math

import pytest

import nbspark
from nbspark.density.jobs import train_density_in_process
from nbspark.ml import CountingDensityModel
from nbspark.settings.config import load_config
from tests.density.test_jobs import TRUTH
from tests.density.test_model import TABLE

pytestmark = pytest.mark.spark


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "abc.csv").write_text(TRUTH)
    settings = {
        "task": "density",
        "train.format": "csv",
        "train.path": str(tmp_path / "abc.csv"),
        "density.weight_column": "weight",
    }
    train_density_in_process(load_config(None, settings), tmp_path / "m")
    return tmp_path / "m"


def _frame(spark):
    rows = [(i, a, b, c, f"n{i}") for i, (a, b, c) in enumerate(TABLE)]
    rows += [(8, "2", "0", "1", "unseen"), (9, None, "0", "1", "empty A")]
    return spark.createDataFrame(rows, "id INT, A STRING, B STRING, C STRING, `note.x` STRING")


def test_each_row_gets_the_tables_own_log_density(spark, model_dir, tmp_path):
    from pyspark.ml import Pipeline, PipelineModel

    stage = CountingDensityModel.fromModelDir(str(model_dir))
    df = _frame(spark)
    scored = stage.transform(df)
    assert scored.columns == ["id", "A", "B", "C", "note.x", "log_density"]
    got = {r["id"]: r for r in scored.collect()}
    assert [got[i]["log_density"] for i in range(8)] == pytest.approx([math.log(p) for p in TABLE.values()])
    assert got[8]["log_density"] == got[9]["log_density"] == -math.inf  # never seen, unsmoothed
    assert [got[i]["note.x"] for i in range(3)] == ["n0", "n1", "n2"]
    # naive: P(A) P(¬B) P(C) = 0.5 · 0.5 · 0.3 for the row (1, 0, 1)
    naive = {
        r["id"]: r["ln"] for r in stage.setEstimator("naive").setLogDensityCol("ln").transform(df).collect()
    }
    assert naive[5] == pytest.approx(math.log(0.075))
    rows = [{"A": a, "B": b, "C": c} for _, a, b, c, _ in df.orderBy("id").collect()]
    assert [naive[i] for i in range(10)] == nbspark.load(model_dir).score_samples(
        rows, model="naive"
    ).tolist()

    pipe = Pipeline(stages=[CountingDensityModel.fromModelDir(str(model_dir))]).fit(df)
    pipe.write().overwrite().save(str(tmp_path / "pipe"))
    again = PipelineModel.load(str(tmp_path / "pipe"))
    assert again.transform(df).orderBy("id").collect() == scored.orderBy("id").collect()
    stage_dir = next((tmp_path / "pipe" / "stages").glob("0_*")) / "nbspark"
    back = nbspark.load(stage_dir)  # the saved stage is a model directory
    assert back.score_samples(rows).tolist() == [got[i]["log_density"] for i in range(10)]


def test_a_frame_it_cannot_score_is_refused_before_any_task(spark, model_dir):
    stage = CountingDensityModel.fromModelDir(str(model_dir))
    df = _frame(spark)
    with pytest.raises(ValueError, match=r"has no column\(s\) C \(the model's columns: A, B, C\)"):
        stage.transform(df.drop("C"))
    with pytest.raises(
        ValueError, match=r"column\(s\) A \(int\) are not text: a density model's cells are text .* cast them"
    ):
        stage.transform(df.withColumn("A", df["id"]))
    with pytest.raises(ValueError, match="has a column 'note.x' already"):
        stage.setLogDensityCol("note.x").transform(df)
    with pytest.raises(ValueError, match="estimator must be 'joint' or 'naive', got 'both'"):
        stage.setEstimator("both")
    with pytest.raises(Exception, match="no such model directory"):
        CountingDensityModel.fromModelDir(str(model_dir.parent / "absent"))


def test_fitting_counts_as_the_train_job_counts(spark, model_dir):
    """The truth table as a DataFrame with its weights: the fitted model's count table equals the one
    ``nbspark train`` wrote from the CSV, row for row, and it scores the table's own numbers."""
    import pyarrow.parquet as pq

    from nbspark.ml import CountingDensity

    rows = [(a, b, c, p, f"r{i}") for i, ((a, b, c), p) in enumerate(TABLE.items())]
    df = spark.createDataFrame(rows, "A STRING, B STRING, C STRING, weight DOUBLE, id STRING")
    model = CountingDensity(inputCols=["A", "B", "C"], weightCol="weight", estimator="naive").fit(df)
    written = pq.read_table(str(model_dir / "counts")).to_pylist()
    key = lambda r: (r["event"], r["column"] or "", r["value"] or "")  # noqa: E731
    mine, theirs = sorted(model.table.to_pylist(), key=key), sorted(written, key=key)
    assert [key(r) for r in mine] == [key(r) for r in theirs] and len(mine) == 8 + 6 + 1
    assert [r["n"] for r in mine] == pytest.approx([r["n"] for r in theirs], abs=1e-12)
    assert model.manifest["total"] == 1.0 and model.manifest["distinct_rows"] == 8
    scored = {r["id"]: r["log_density"] for r in model.transform(df).collect()}
    # naive: P(A) P(¬B) P(C) = 0.5 · 0.5 · 0.3 for (1, 0, 1), the sixth row
    assert scored["r5"] == pytest.approx(math.log(0.075))
    joint = model.setEstimator("joint").transform(df).orderBy("id").collect()
    assert [r["log_density"] for r in joint] == pytest.approx([math.log(p) for p in TABLE.values()])
    from pyspark.ml import Pipeline, PipelineModel

    fitted = Pipeline(stages=[CountingDensity(inputCols=["A", "B", "C"], weightCol="weight")]).fit(df)
    fitted.write().overwrite().save(str(model_dir.parent / "fitted"))
    again = PipelineModel.load(str(model_dir.parent / "fitted")).transform(df).orderBy("id").collect()
    assert again == joint
    stage_dir = next((model_dir.parent / "fitted" / "stages").glob("0_*")) / "nbspark"
    assert nbspark.load(stage_dir).score_samples([{"A": "1", "B": "1", "C": "0"}])[0] == pytest.approx(
        math.log(0.25)
    )
    # every string column but the weight by default: id too, each row then seen once
    assert CountingDensity(weightCol="weight").fit(df).manifest["columns"] == ["A", "B", "C", "id"]


def test_fitting_refuses_what_it_cannot_count(spark):
    from nbspark.ml import CountingDensity

    df = spark.createDataFrame([("x", 1, -2.0), ("y", 2, 1.0)], "A STRING, n INT, w DOUBLE")
    with pytest.raises(ValueError, match=r"1 row\(s\) weigh no number >= 0 in 'w', the first .*'w': -2.0"):
        CountingDensity(inputCols=["A"], weightCol="w").fit(df)
    with pytest.raises(
        ValueError, match=r"column\(s\) n \(int\) are not text: a density model's cells are text"
    ):
        CountingDensity(inputCols=["A", "n"]).fit(df)
    with pytest.raises(ValueError, match="no string column to model; name them with inputCols"):
        CountingDensity().fit(df.select("n"))
    with pytest.raises(ValueError, match="has no rows to count"):
        CountingDensity(inputCols=["A"]).fit(df.where("n > 5"))
    with pytest.raises(ValueError, match="has no weight column 'weight'"):
        CountingDensity(weightCol="weight").fit(df)
    with pytest.raises(ValueError, match="m must be a finite number >= 0"):
        CountingDensity(m=-1.0).fit(df)
    with pytest.raises(ValueError, match="estimator must be 'joint' or 'naive'"):
        CountingDensity(estimator="both")


def test_fitting_bins_numbers_as_the_train_job_does(spark, tmp_path):
    """Ages as doubles (one null) in quantile bins: the stage settles the train job's edges from the
    same rows (weighted; the row of weight 0 weighs in none) and counts its table, row for row; a NaN
    age is refused, as a binned cell that is no number."""
    from nbspark.ml import CountingDensity

    ages = [23.0, 29.0, 30.0, 35.0, 41.0, 52.0, 67.0, None, 71.0, 90.0]
    weights = [1.0, 2.0, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 2.0, 0.0]
    cities = list("aaaababbbb")
    lines = ["age,city,w"] + [f"{'' if a is None else a},{c},{w}" for a, c, w in zip(ages, cities, weights)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    settings = {"task": "density", "train.path": str(tmp_path / "t.csv"), "density.weight_column": "w"}
    settings["density.bins"] = "age=quantiles:3"
    trained = train_density_in_process(load_config(None, settings), tmp_path / "m")
    df = spark.createDataFrame(list(zip(ages, cities, weights)), "age DOUBLE, city STRING, w DOUBLE")
    model = CountingDensity(weightCol="w", bins=["age=quantiles:3"]).fit(df)
    # by age 23:1 29:2 30:1 35:1 41:.5 52:1 67:1 71:2, of 9.5: a third (3.17) first lies below 35 (4), two
    # thirds (6.33) below 67 (6.5)
    assert list(model.manifest["config"]["density"]["bins"]) == ["age=quantiles:3=35,67"]
    assert list(trained["config"]["density"]["bins"]) == ["age=quantiles:3=35,67"]
    key = lambda r: (r["event"], r["column"] or "", r["value"] or "")  # noqa: E731
    import pyarrow.parquet as pq

    written = sorted(pq.read_table(str(tmp_path / "m" / "counts")).to_pylist(), key=key)
    mine = sorted(model.table.to_pylist(), key=key)
    assert [key(r) for r in mine] == [key(r) for r in written]
    assert [r["n"] for r in mine] == pytest.approx([r["n"] for r in written], abs=1e-12)
    with pytest.raises(ValueError, match="1 row\\(s\\) hold no number in a binned column"):
        CountingDensity(bins=["age=35,67"]).fit(
            df.union(spark.createDataFrame([(float("nan"), "a", 1.0)], df.schema))
        )
    with pytest.raises(ValueError, match="bins names agee, not a modelled column"):
        CountingDensity(bins=["agee=1"]).fit(df)
    dated = df.selectExpr("city", "w", "DATE'2024-01-01' AS age")
    with pytest.raises(
        ValueError, match="CountingDensity: binned column\\(s\\) age \\(date\\) hold neither numbers nor text"
    ):
        CountingDensity(bins=["age=1"]).fit(dated)
