"""A density over numbers cut into bins (``density.bins``): counted alike in process and in Spark,
from CSV text and from a Parquet number column, scored and asked by the numbers themselves; a cell
that is no number is a malformed row."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import nbspark
from nbspark.app.command import main
from nbspark.density.jobs import classify_density, train_density, train_density_in_process
from nbspark.errors import InputError
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from tests.density.test_jobs import _rows

AGES = ["23", "35", "41", "n/a", "52", "67", "29", "30", "", "71"]
CITIES = ["a", "b", "a", "b", "a", "b", "a", "a", "b", "a"]
BINS = "age=30|50|65"


def _table(tmp_path):
    lines = ["age,city"] + [f"{a},{c}" for a, c in zip(AGES, CITIES)]
    (tmp_path / "people.csv").write_text("\n".join(lines) + "\n")
    return tmp_path / "people.csv"


def _cfg(path, **more):
    return load_config(None, {"task": "density", "train.path": str(path), "density.bins": BINS, **more})


def test_numbers_are_counted_in_their_bins_by_hand(tmp_path, capsys):
    """No JVM. Of the ten rows, 'n/a' is no number (malformed, bin); the empty cell is an empty one.
    Ages by bin: <30 23, 29; [30, 50) 35, 41, 30; [50, 65) 52; >=65 67, 71; and one empty."""
    manifest = train_density_in_process(_cfg(_table(tmp_path)), tmp_path / "m")
    assert manifest["stats"]["malformed.bin"] == 1 and manifest["stats"]["rows"] == 9
    model = nbspark.load(tmp_path / "m")
    by_hand = {"<30": 2, "[30, 50)": 3, "[50, 65)": 1, ">=65": 2, None: 1}
    assert {v: round(n) for v, n in model.density.marginals[0].items()} == by_hand
    assert model.probability({"age": "41"}) == pytest.approx(3 / 9)
    assert model.probability({"age": 64.9}, {"city": "a"}) == pytest.approx(1 / 6)  # 52, of a's six
    assert model.score_samples([{"age": 30, "city": "a"}])[0] == pytest.approx(__import__("math").log(2 / 9))
    with pytest.raises(ValueError, match="row 0: 'old' in 'age' is not a number, and the column is binned"):
        model.score_samples([{"age": "old", "city": "a"}])
    assert main(["query", "--model", str(tmp_path / "m"), "--value", "age=41", "--given", "city=a"]) == 0
    assert capsys.readouterr().out.startswith("P(age=41 (in [30, 50)) | city=a) = 0.333333")
    assert main(["show", "--model", str(tmp_path / "m")]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert "  values per column: age 5, city 2" in shown and "  age binned at 30, 50, 65" in shown
    model.partial_fit([{"age": 80, "city": "b"}, {"age": "12.5", "city": "b"}])
    model.save()
    again = nbspark.load(tmp_path / "m")
    assert again.probability({"age": "99"}) == pytest.approx(3 / 11)
    ask = again.classifier("city")
    assert ask.predict([{"age": 23}]).tolist() == ["a"]  # <30: 23 and 29 in a, 12.5 in b
    update = ["train", "--in-process", "--set", "task=density", "--set", f"train.path={_table(tmp_path)}"]
    assert main([*update, "--set", "density.bins=age=40", "--update", str(tmp_path / "m")]) != 0
    assert (
        "cannot update: the model was counted with density.bins = ['age=30|50|65']" in capsys.readouterr().err
    )
    with pytest.raises(
        InputError, match="a row with a cell that is not a number in a binned column \\(age\\)"
    ):
        train_density_in_process(_cfg(_table(tmp_path), mode="failfast"), tmp_path / "m3")


def test_a_parquet_number_column_is_binned_and_unbinned_refused(tmp_path):
    ages = [23, 35, None, 71, 30]
    pq.write_table(
        pa.table({"age": pa.array(ages, pa.int64()), "city": list("ababa")}), tmp_path / "p.parquet"
    )
    train_density_in_process(_cfg(tmp_path / "p.parquet"), tmp_path / "m")
    assert nbspark.load(tmp_path / "m").probability({"age": 30}) == pytest.approx(2 / 5)
    with pytest.raises(InputError, match="density.bins names agee, not a modelled column"):
        train_density_in_process(_cfg(tmp_path / "p.parquet", **{"density.bins": "agee=1"}), tmp_path / "m3")
    with pytest.raises(InputError, match="column\\(s\\) age \\(int64\\) are not text"):
        train_density_in_process(_cfg(tmp_path / "p.parquet", **{"density.bins": ""}), tmp_path / "m2")


@pytest.mark.spark
def test_spark_counts_and_scores_the_bins_the_process_counts(spark, tmp_path):
    """The CSV's text and a Parquet number column, counted in Spark and in process: the same table;
    the classify job scores a test table's numbers in their bins, keeps them as the table had them,
    and skips a cell that is no number (malformed, bin)."""
    cfg = _cfg(_table(tmp_path))
    train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    local = train_density_in_process(cfg, tmp_path / "local")
    assert _rows(tmp_path / "spark") == _rows(tmp_path / "local")
    spark_manifest = json.loads((tmp_path / "spark" / "manifest.json").read_text())
    assert spark_manifest["stats"] == local["stats"]
    ages = [23, 35, None, 71, 30]
    pq.write_table(
        pa.table({"age": pa.array(ages, pa.float64()), "city": list("ababa")}), tmp_path / "p.parquet"
    )
    numbers = _cfg(tmp_path / "p.parquet")
    train_density(spark, numbers, resolve_input(numbers.train, None), tmp_path / "pspark")
    train_density_in_process(numbers, tmp_path / "plocal")
    assert _rows(tmp_path / "pspark") == _rows(tmp_path / "plocal")

    run = load_config(None, {"task": "density", "test.path": str(_table(tmp_path)), "density.bins": BINS})
    metrics = classify_density(
        spark, run, tmp_path / "local", resolve_input(run.test, None), tmp_path / "out"
    )
    assert metrics["rows"] == 9 and metrics["input_stats"] == {"malformed": 1, "malformed.bin": 1}
    predictions = pq.read_table(str(tmp_path / "out" / "predictions")).to_pylist()
    model = nbspark.load(tmp_path / "local")
    for p in predictions:
        row = {"age": p["age"] or None, "city": p["city"]}
        assert p["log_density_joint"] == pytest.approx(model.score_samples([row])[0])
    assert sorted(p["age"] or "" for p in predictions) == sorted(a for a in AGES if a != "n/a")


@pytest.mark.spark
def test_a_binned_model_as_a_pipeline_stage_bins_a_number_column(spark, tmp_path):
    """``CountingDensityModel.fromModelDir`` of a binned model scores a DataFrame whose ages are
    doubles, each row's log density the model's own (``score_samples``)."""
    from nbspark.ml import CountingDensityModel

    train_density_in_process(_cfg(_table(tmp_path)), tmp_path / "m")
    df = spark.createDataFrame(
        [(23.0, "a"), (52.5, "a"), (None, "b"), (99.0, "b")], "age DOUBLE, city STRING"
    )
    scored = CountingDensityModel.fromModelDir(str(tmp_path / "m")).transform(df).collect()
    model = nbspark.load(tmp_path / "m")
    for r in scored:
        expected = model.score_samples([{"age": r["age"], "city": r["city"]}])[0]
        assert r["log_density"] == pytest.approx(expected)


def test_the_estimator_bins_as_training_does(tmp_path):
    """``nbspark.Density(bins=…)`` on the table's rows in memory (the malformed one left out, the
    ages as numbers): the count table of the train of the CSV, row for row."""
    train_density_in_process(_cfg(_table(tmp_path)), tmp_path / "trained")
    rows = [{"age": float(a) if a else None, "city": c} for a, c in zip(AGES, CITIES) if a != "n/a"]
    nbspark.Density(bins=[BINS.replace("|", ",")]).fit(rows).save(tmp_path / "fitted")
    assert _rows(tmp_path / "fitted") == _rows(tmp_path / "trained")


def test_failfast_names_the_first_bad_rows_own_reason(tmp_path):
    """A weighted table whose first bad row has a weight of no number (and a fine age), its second an
    age of none: failfast names the weight; skipped, each is counted under its own reason."""
    (tmp_path / "w.csv").write_text("age,w\n20,1\n31,heavy\nold,2\n70,1\n")
    cfg = _cfg(tmp_path / "w.csv", **{"density.weight_column": "w"})
    counted = train_density_in_process(cfg, tmp_path / "m")
    assert counted["stats"]["malformed.weight"] == 1 and counted["stats"]["malformed.bin"] == 1
    with pytest.raises(InputError, match="a row whose weight \\(w\\) is not a number >= 0"):
        train_density_in_process(
            _cfg(tmp_path / "w.csv", mode="failfast", **{"density.weight_column": "w"}), tmp_path / "f"
        )


def _quantiles(path, k=2, **more):
    return _cfg(path, **{"density.bins": f"age=quantiles:{k}", **more})


def test_quantile_bins_are_settled_by_the_first_training_and_kept(tmp_path, capsys):
    """No JVM. The eight ages that are numbers (n/a and the empty cell weigh in no edge), sorted
    23 29 30 35 41 52 67 71, in two bins: four lie below 41, so 41 is the edge (by hand). The
    manifest records it; an update with the same quantiles:2, or the edge written out, counts at
    41; quantiles:3, or another edge, is refused; the estimator settles the same edge."""
    table = _table(tmp_path)
    manifest = train_density_in_process(_quantiles(table), tmp_path / "m")
    assert list(manifest["config"]["density"]["bins"]) == ["age=quantiles:2=41"]
    train_density_in_process(_quantiles(table), tmp_path / "first")
    model = nbspark.load(tmp_path / "m")
    assert model.bins == {"age": (41.0,)}
    assert {v: round(n) for v, n in model.density.marginals[0].items()} == {"<41": 4, ">=41": 4, None: 1}
    assert main(["show", "--model", str(tmp_path / "m")]) == 0
    assert "  age binned at 41 (quantiles:2 of the first data counted)" in capsys.readouterr().out
    (tmp_path / "more.csv").write_text("age,city\n90,a\n10,b\n")
    update = ["train", "--in-process", "-q", "--set", "task=density", "--update", str(tmp_path / "m")]
    update += ["--set", f"train.path={tmp_path / 'more.csv'}", "--force"]
    for bins, counted in (("quantiles:2", True), ("41", True), ("quantiles:3", False), ("40", False)):
        assert (main([*update, "--set", f"density.bins=age={bins}"]) == 0) == counted, bins
    err = capsys.readouterr().err
    assert (
        "the model was counted with density.bins = ['age=quantiles:2=41'], this run has ['age=quantiles:3']"
        in err
    )
    again = nbspark.load(tmp_path / "m")
    assert again.bins == {"age": (41.0,)} and again.whole_stats()["rows"] == 9 + 2 + 2
    assert again.probability({"age": 90}) == pytest.approx(6 / 13)  # 41 52 67 71, 90 twice
    rows = [{"age": a or None, "city": c} for a, c in zip(AGES, CITIES) if a != "n/a"]
    fitted = nbspark.Density(bins=["age=quantiles:2"]).fit(rows)
    assert fitted.model_.bins == {"age": (41.0,)}
    fitted.save(tmp_path / "fitted")
    assert _rows(tmp_path / "fitted") == _rows(tmp_path / "first")
    with pytest.raises(InputError, match="'age' holds one number \\(5\\) in the rows counted"):
        (tmp_path / "one.csv").write_text("age,city\n5,a\n5,b\nx,a\n")
        train_density_in_process(_quantiles(tmp_path / "one.csv"), tmp_path / "one")


@pytest.mark.spark
def test_spark_settles_the_quantiles_the_process_settles(spark, tmp_path):
    """A weighted table (weights of no number and bad ages skipped), ages in quartiles: Spark and the
    process settle the same edges and count the same table."""
    import random

    rnd = random.Random(3)
    lines = ["age,w,city"] + [
        f"{rnd.randint(18, 90)},{rnd.choice(['1', '2', '0.5', '0.25'])},{rnd.choice('ab')}"
        for _ in range(400)
    ]
    lines += ["n/a,1,a", ",2,b", "50,-1,a", "33,x,b"]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    cfg = _quantiles(tmp_path / "t.csv", 4, **{"density.weight_column": "w"})
    spark_manifest = train_density(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    local = train_density_in_process(cfg, tmp_path / "local")
    assert list(spark_manifest["config"]["density"]["bins"]) == list(local["config"]["density"]["bins"])
    assert _rows(tmp_path / "spark") == _rows(tmp_path / "local")
    assert len(nbspark.load(tmp_path / "local").bins["age"]) == 3
    # the classify job predicts the binned class column, its accuracy the classifier's own
    (tmp_path / "test.csv").write_text("age,w,city\n20,1,a\n80,1,b\n55,1,a\n,1,b\n")
    ages = load_config(
        None, {"task": "density", "test.path": str(tmp_path / "test.csv"), "density.target": "age"}
    )
    metrics = classify_density(
        spark, ages, tmp_path / "local", resolve_input(ages.test, None), tmp_path / "out"
    )
    rows = [{"age": a, "city": c} for a, c in (("20", "a"), ("80", "b"), ("55", "a"))]
    ask = nbspark.load(tmp_path / "local").classifier("age")
    assert metrics["accuracy"] == pytest.approx(ask.score(rows, ["20", "80", "55"]))
    assert metrics["classified"] == 3


def test_a_binned_class_column_is_predicted_as_its_bins(tmp_path):
    """No JVM. Ages 23 29 30 35 41 (city a) and 52 67 71 (city b) in two bins: four lie below 41,
    the edge. By hand the joint predicts <41 for a (4 of 5) and >=41 for b (3 of 3). Gold ages are
    numbers, binned to be scored; the city predicted from an age bins the age."""
    (tmp_path / "t.csv").write_text("age,city\n23,a\n29,a\n30,a\n35,a\n41,a\n52,b\n67,b\n71,b\n")
    train_density_in_process(_quantiles(tmp_path / "t.csv"), tmp_path / "m")
    ask = nbspark.load(tmp_path / "m").classifier("age")
    assert ask.classes_ == ("<41", ">=41")
    assert ask.predict([{"city": "a"}, {"city": "b"}]).tolist() == ["<41", ">=41"]
    assert ask.predict_proba([{"city": "a"}])[0].tolist() == pytest.approx([4 / 5, 1 / 5])
    assert ask.score([{"city": "a"}, {"city": "b"}, {"city": "a"}], [12, "99.5", 41]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="label 0: 'old' in 'age' is not a number"):
        ask.score([{"city": "a"}], ["old"])
    city = nbspark.load(tmp_path / "m").classifier("city")  # >=41: b 3 of 4; <41: a 4 of 4
    assert city.predict([{"age": 41}, {"age": 40}]).tolist() == ["b", "a"]
