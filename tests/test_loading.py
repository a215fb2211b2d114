"""Models outside Spark: ``nbspark.load`` (pyarrow only) equals the classify jobs row for row, and
the ``nbspark`` command works without Spark for predict, config show and --version."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import nbspark
from nbspark.app.command import config_toml, main
from nbspark.backoff.jobs import classify, train
from nbspark.errors import InputError, OutputError
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import classify_nb, train_nb
from nbspark.settings.config import load_config
from tests.conftest import ROOT


@pytest.fixture
def backoff_model(spark, fixtures, tmp_path):
    cfg = load_config(
        None, {"train.path": str(fixtures / "ngrams.txt"), "test.path": str(fixtures / "mini.sgm")}
    )
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    return cfg, tmp_path / "m"


@pytest.mark.spark
def test_load_and_predict_import_no_pyspark(backoff_model):
    _, model_dir = backoff_model
    code = (
        "import sys, nbspark; m = nbspark.load(sys.argv[1]); p = m.explain(['does not _ the outcome'])[0]; "
        "print(p['label'], p['level'], 'pyspark' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(model_dir)], capture_output=True, text=True)
    assert out.returncode == 0, f"exit {out.returncode}: {out.stderr[-3000:]}"
    assert out.stdout.split() == ["affect", "ABD", "False"]


@pytest.mark.spark
def test_backoff_load_equals_the_classify_job(spark, backoff_model, tmp_path):
    cfg, model_dir = backoff_model
    classify(spark, cfg, model_dir, resolve_input(cfg.test, None), tmp_path / "r")
    rows = spark.read.parquet(str(tmp_path / "r" / "predictions")).collect()
    model = nbspark.load(model_dir)
    windows = [(r["a"], r["b"], r["c"], r["d"], r["e"]) for r in rows]
    got = model.explain(windows)
    assert [(p["label"], p["probability"], p["level"]) for p in got] == [
        (r["predicted"], r["probability"], r["subset"]) for r in rows
    ]
    assert list(model.predict(windows)) == [r["predicted"] for r in rows]


@pytest.mark.spark
def test_backoff_explain_and_proba_by_hand(backoff_model):
    """tests/data/README.md: B = not {affect 9, effect 1}; BD (not, the) {affect 9, effect 1}."""
    _, model_dir = backoff_model
    model = nbspark.load(model_dir)
    (explained,) = model.explain(["could not _ the ratio"])
    assert (explained["label"], explained["probability"], explained["level"]) == ("affect", 0.9, "BD")
    assert model.decide(["could not _ the ratio"]) == [("affect", 0.9, "BD")]  # the pyspark.ml stage's
    assert explained["probabilities"] == {"affect": 0.9, "effect": 0.1}
    assert [(lv["level"], lv["counts"], lv["decided"]) for lv in explained["levels"]] == [
        ("ABDE", {}, False),
        ("ABD", {}, False),
        ("BD", {"affect": 9, "effect": 1}, True),
        ("B", {"affect": 9, "effect": 1}, False),
        ("", {"effect": 23, "affect": 11}, False),
    ]
    # scikit-learn's shapes: columns in classes_ order; a window no level has seen is a row of NaN
    assert model.classes_ == ("affect", "effect")
    assert model.predict_proba(["could not _ the ratio"]).tolist() == [[0.9, 0.1]]
    assert model.predict_log_proba(["could not _ the ratio"]) == pytest.approx(np.log([[0.9, 0.1]]))
    assert model.predict(["could not _ the ratio", "could not effect the ratio"]).tolist() == [
        "affect",
        "affect",
    ]
    assert model.score(["could not _ the ratio"], ["effect"]) == 0.0
    assert model.get_params()["chain"] == ("ABDE", "ABD", "BD", "B", "")
    # check judges every set word as flags does, in flags' shape: flagged or not at the factor
    found = model.check("It could not effect the ratio. The big effect of it.", factor=5)
    assert [(r["offset"], r["suggestion"], r["level"], r["flagged"]) for r in found] == [
        (13, "affect", "BD", True),  # interpolated ratio 8.95 >= 5
        (39, "affect", "ABDE", False),  # ABDE saw 'effect' here: affect's ratio is tiny
    ]
    assert model.flags("It could not effect the ratio. The big effect of it.", factor=5) == found[:1]
    assert model.check("It could not effect the ratio.")[0]["flagged"] is False  # the default factor 50
    with pytest.raises(TypeError, match="flags and check take one text"):
        model.flags(["It could not effect the ratio."])  # one text, not a list of them
    assert found[0]["window"] == "could not effect the ratio"  # as explain takes it
    with pytest.raises(TypeError, match="chain is a list of subsets"):
        nbspark.load(model_dir, chain="ABDE")  # not the subsets 'A', 'B', 'D' and 'E'
    unseen = nbspark.load(model_dir, chain=["ABDE"])  # no level has seen this context
    assert np.isnan(unseen.predict_proba(["could not _ the ratio"])).all()
    assert unseen.predict(["could not _ the ratio"]).tolist() == [None]
    assert unseen.explain(["could not _ the ratio"])[0]["level"] == "unseen"
    with pytest.raises(ValueError, match="a window has 5 tokens"):
        model.predict(["not _ the"])
    for method in (
        model.predict,
        model.predict_proba,
        model.explain,
    ):  # not '_' nor a set word: not this model's question
        with pytest.raises(
            ValueError,
            match=r"centre is '_' or a word of the model's confusion sets \(affect, effect\), got 'the'",
        ):
            method(["could not the ratio ."])
    with pytest.raises(ValueError, match="^alpha does not apply to .*, a backoff model"):
        nbspark.load(model_dir, alpha=0.5)
    # one window, not a list: never its characters scored
    for method in (model.predict, model.predict_proba, model.explain):
        with pytest.raises(TypeError, match="expected a list of windows, got one str; wrap it in a list"):
            method("could not _ the ratio")
        with pytest.raises(TypeError, match="expected a list of windows, got a DataFrame"):  # not its names
            method(pd.DataFrame({"window": ["could not _ the ratio"]}))


@pytest.mark.spark
def test_backoff_updates_count_and_the_model_is_built_once_when_next_used(backoff_model, monkeypatch):
    """tests/data/README.md: B = not {affect 9, effect 1}. Windows counted one call at a time are
    seen by the next ``explain`` (classify at any point): the updates since it was last used are
    counted into its tables then, once, and only their contexts ranked again (every update
    rebuilt every table). Counts handed out before stay as they were."""
    import nbspark.backoff.predictor as predictor

    _, model_dir = backoff_model
    model = nbspark.load(model_dir)
    adds = []
    real = predictor.add_counts
    monkeypatch.setattr(
        predictor, "add_counts", lambda tables, rows, *a: adds.append(len(rows)) or real(tables, rows, *a)
    )
    model.update(["could not effect the plan"])
    said = model.explain(["could not _ the plan"])[0]["levels"][3]["counts"]
    assert said == {"affect": 9, "effect": 2} and len(adds) == 1
    for _ in range(5):
        model.update(["could not affect the plan"])
    assert len(adds) == 1
    assert model.explain(["could not _ the plan"])[0]["levels"][3]["counts"] == {"affect": 14, "effect": 2}
    assert model.predict(["could not _ the plan"])[0] == "affect" and len(adds) == 2
    assert adds[1] == adds[0]  # the five windows summed: one row per event key, as the first one's
    assert said == {"affect": 9, "effect": 2}
    fresh = nbspark.load(model_dir)
    fresh.update(["could not effect the plan"] + ["could not affect the plan"] * 5)
    probe = ["could not _ the plan", "would not _ the outcome", "the cumulative _ of the"]
    assert fresh.explain(probe) == model.explain(probe)


@pytest.mark.spark
def test_backoff_update_weights_are_whole_counts_numpy_ones_too(backoff_model):
    """tests/data/README.md: B = not {affect 9, effect 1}. A weight of 3 (numpy's int or a float
    without a fraction, as scikit-learn users hold weights) counts three copies of the window."""
    from sklearn.base import clone

    _, model_dir = backoff_model
    model = nbspark.load(model_dir)
    model.update(["could not effect the plan"], np.array([3]))
    model.update(["could not effect the plan"], [2.0])
    assert model.explain(["could not _ the plan"])[0]["levels"][3]["counts"] == {"affect": 9, "effect": 6}
    for weights, says in (
        ([0], "weight 0: 0 is not a whole count >= 1"),
        ([1.5], "1.5 is not a whole count"),
        (
            ["affect"],
            "got the word 'affect' as a weight: write each window with its word",
        ),  # scikit-learn's y
    ):
        with pytest.raises(ValueError, match=says):
            model.update(["could not effect the plan"], weights)
    # half an emoji (a lone surrogate) is no text a count table can hold: refused, nothing counted
    # (it was counted, then the table could not be built, and every later call failed)
    with pytest.raises(ValueError, match=r"window 1 holds a lone surrogate \('\\ud83d' at 0\)"):
        model.update(["could not effect the plan", "could not effect \ud83d plan"])
    assert model.explain(["could not _ the plan"])[0]["levels"][3]["counts"] == {"affect": 9, "effect": 6}
    with pytest.raises(TypeError, match="not an estimator to clone and fit"):
        clone(model)


@pytest.mark.spark
def test_nb_load_equals_the_classify_job(spark, fixtures, tmp_path):
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "nb.alpha": "0.5",
            "train.format": "tsv",
            "train.path": str(fixtures / "china_train.tsv"),
            "test.format": "tsv",
            "test.path": str(fixtures / "china_test.tsv"),
        },
    )
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    classify_nb(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r")
    rows = sorted(spark.read.parquet(str(tmp_path / "r" / "predictions")).collect(), key=lambda r: r["id"])
    texts = {
        line.split("\t")[0]: line.split("\t")[2]
        for line in (fixtures / "china_test.tsv").read_text().splitlines()
    }
    model = nbspark.load(tmp_path / "m")
    assert model.alpha == 0.5 and model.classes_ == ("c", "j")
    proba = model.predict_proba([texts[r["id"]] for r in rows])
    assert proba.sum(axis=1) == pytest.approx([1.0] * len(rows))
    assert model.predict([texts[r["id"]] for r in rows]).tolist() == [r["predicted"][0] for r in rows]
    assert proba.max(axis=1) == pytest.approx([r["probability"] for r in rows], abs=1e-12)
    assert nbspark.load(tmp_path / "m", alpha=2.0).alpha == 2.0
    for override, name in (({"chain": ["B", ""]}, "chain"), ({"var_smoothing": 1e-3}, "var_smoothing")):
        with pytest.raises(ValueError, match=f"^{name} does not apply to .*, a multinomial model"):
            nbspark.load(tmp_path / "m", **override)  # refused, not ignored
    # and the classify job refuses it too, before any Spark work (--set names what the run overrides)
    from nbspark.naive_bayes.jobs import load_nb_manifest, model_settings
    from nbspark.storage.locations import location

    with pytest.raises(
        ValueError,
        match=r"^nb.var_smoothing does not apply to the model, a multinomial model \(nb.var_smoothing: "
        r"gaussian, mixed\)$",
    ):
        model_settings(
            load_nb_manifest(location(tmp_path / "m")), cfg, frozenset({"nb.var_smoothing", "nb.alpha"})
        )
    assert (
        model_settings(load_nb_manifest(location(tmp_path / "m")), cfg, frozenset({"nb.alpha"})).nb.alpha
        == 0.5
    )
    # how the model made its features is the model's: a run's --set of another tokenizer was replaced in
    # silence
    other = load_config(
        None, {"task": "naive_bayes", "nb.tokenizer": "nbspark", "test.format": "tsv", "test.path": "t.tsv"}
    )
    with pytest.raises(
        ValueError,
        match=r"^nb.tokenizer = 'nbspark': the model was trained with 'words', which its scoring must use; ",
    ):
        model_settings(load_nb_manifest(location(tmp_path / "m")), other, frozenset({"nb.tokenizer"}))
    assert (
        model_settings(load_nb_manifest(location(tmp_path / "m")), other, frozenset()).nb.tokenizer == "words"
    )  # a config file's: the model's
    with pytest.raises(TypeError, match="expected a list of texts, got one str"):
        model.predict("Chinese Tokyo")  # 13 one-letter documents, silently, if iterated
    with pytest.raises(ValueError, match="extra_columns name columns of a naive Bayes table model's rows; a"):
        model.predict(["Chinese Tokyo"], extra_columns=["id"])  # refused, not ignored
    with pytest.raises(TypeError, match="a multinomial model scores texts"):
        model.predict(
            ["Chinese Tokyo", ["Chinese", "Tokyo"]]
        )  # tokens are not a text: one line, not a crash in the tokenizer


@pytest.mark.spark
def test_load_refuses_what_is_not_a_complete_model(backoff_model, tmp_path):
    _, model_dir = backoff_model
    with pytest.raises(OutputError, match="no such model directory"):
        nbspark.load(tmp_path / "nothing")
    import shutil

    shutil.copytree(
        model_dir, tmp_path / "experiment" / "model"
    )  # an experiment's directory: the model is named
    with pytest.raises(
        OutputError,
        match=f"^{tmp_path / 'experiment'}: not an nbspark model \\(no manifest.json\\); the model is "
        f"{tmp_path / 'experiment' / 'model'}$",
    ):
        nbspark.load(tmp_path / "experiment")
    # a classify job's results given as the model (they sit next to it): said so
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "_nbspark.json").write_text('{"kind": "results"}')
    with pytest.raises(
        OutputError,
        match=f"^{tmp_path / 'results'}: the results of a classify job \\(predictions, metrics\\), not a "
        "model; give",
    ):
        nbspark.load(tmp_path / "results")
    # a job of the other task says which task the model is for
    from nbspark.naive_bayes.jobs import load_nb_manifest

    with pytest.raises(
        OutputError,
        match=r'a backoff model, not a naive_bayes one; a job runs it with task = "backoff" \(--set '
        r"task=backoff",
    ):
        load_nb_manifest(model_dir)
    (model_dir / "counts" / "_SUCCESS").unlink()
    with pytest.raises(OutputError, match="incomplete table"):
        nbspark.load(model_dir)


@pytest.mark.spark
def test_command_predict_version_and_config_show(backoff_model, tmp_path, capsys):
    _, model_dir = backoff_model
    assert (
        main(
            [
                "predict",
                "--model",
                str(model_dir),
                "--json",
                "does not _ the outcome",
                "It would not effect the outcome.",
            ]
        )
        == 0
    )
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["label"], x["level"]) for x in lines] == [("affect", "ABD"), ("affect", "ABDE")]
    assert lines[1]["written"] == "effect" and lines[0]["window"] == "does not _ the outcome"
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"nbspark {nbspark.__version__}"
    for config in sorted((ROOT / "conf/experiments").glob("*.toml")) + [None]:
        cfg = load_config(config)
        (tmp_path / "c.toml").write_text(config_toml(cfg))
        assert load_config(tmp_path / "c.toml") == cfg  # read back equal, though keys are left out
    # the task's keys only: no backoff key in a naive Bayes config, no [nb] in a backoff one, and no
    # input setting its format does not read
    shown = config_toml(load_config(ROOT / "conf/experiments/wine_gaussian.toml"))
    assert "[nb]" in shown and "[check]" not in shown and "width" not in shown and "year_min" not in shown
    shown = config_toml(load_config(None))
    assert "[nb]" not in shown and "[check]" in shown and "width = 5" in shown and "holdout" not in shown
    assert main(["config", "show", "--set", "task=naive_bayes", "--set", "nb.alpha=0.5"]) == 0
    shown = capsys.readouterr().out
    assert "alpha = 0.5" in shown
    assert main(["config", "--set", "task=naive_bayes", "--set", "nb.alpha=0.5"]) == 0  # show: the default
    assert capsys.readouterr().out == shown
    assert (
        main(["config", "show", "--set", "nb.alpha=0.5"]) == 2
    )  # the default task is backoff: refused, not ignored
    assert "nb.alpha applies to naive Bayes tasks, not to task = 'backoff'" in capsys.readouterr().err


def test_command_help_is_the_commands_own(capsys):
    """``nbspark predict --help`` is predict's help, not nbspark's; -q/-v stand on either side of the
    command."""
    for argv, usage in (
        (["predict", "--help"], "usage: nbspark predict"),
        (["-q", "check", "-h"], "usage: nbspark check"),
        (["config", "--help"], "usage: nbspark config"),
        (["train", "--help"], "usage: nbspark train"),
        (["--help"], "usage: nbspark [-h]"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0 and capsys.readouterr().out.startswith(usage), argv
    with pytest.raises(SystemExit) as exit_:
        main(["predict", "-v", "--model"])  # -v taken by nbspark, --model still predict's (its value missing)
    assert exit_.value.code == 2 and "--model: expected one argument" in capsys.readouterr().err


@pytest.mark.spark
def test_command_predict_says_what_it_did_not_score(backoff_model, capsys):
    """A text with no set word and no '_' window gives no prediction, and the command says how many such
    texts there were."""
    _, model_dir = backoff_model
    texts = [
        "It would not effect the outcome.",
        "nothing here",
        "It would not effect the outcome.",
        "a _ b _ c",
    ]
    assert main(["predict", "--model", str(model_dir), "--json", *texts]) == 0
    captured = capsys.readouterr()
    assert [json.loads(x)["text"] for x in captured.out.splitlines()] == [texts[0], texts[2]]
    assert captured.err.startswith(
        "nbspark predict: 2 of 4 texts hold no word of the model's confusion sets (affect, effect)"
    )
    assert main(["predict", "--model", str(model_dir), "does not _ the outcome"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.spark
def test_command_predict_reads_stdin_as_every_text_file(backoff_model, capsys, monkeypatch):
    """Stdin's bytes by readers.decode_text: a byte-order mark dropped (it was a token of the first
    window), any line end, and undecodable bytes said on stderr (the locale's codec read them)."""
    import io

    _, model_dir = backoff_model
    data = (
        b"\xef\xbb\xbfdoes not _ the outcome\r\ndoes not _ the outcome\rcaf\xe9: it would not effect "
        b"the outcome\n"
    )
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["predict", "--model", str(model_dir), "--json", "-"]) == 0
    out, err = capsys.readouterr()
    got = [json.loads(x) for x in out.splitlines()]
    assert [(r["text"], r["window"], r["level"]) for r in got[:2]] == [
        ("does not _ the outcome", "does not _ the outcome", "ABD")
    ] * 2
    assert (got[2]["text"], got[2]["written"]) == ("caf\ufffd: it would not effect the outcome", "effect")
    assert err.startswith(
        "nbspark predict: <stdin>: 1 undecodable byte sequence(s) read as U+FFFD: is it UTF-8?\n"
    )


def test_a_base_replaced_while_read_is_read_again_whole(tmp_path, monkeypatch):
    """A compaction (or a train --overwrite) may swap the base between the manifest's read and the
    counts'; the new table may have as many rows as the old, so the row check cannot see it. load
    reads again until the manifest it read is still there: manifest and counts of one version."""
    import nbspark.naive_bayes.predictor as predictor

    lines = "d1\tx\talpha beta\nd2\ty\tgamma\n"
    (tmp_path / "a.tsv").write_text(lines)
    (tmp_path / "aa.tsv").write_text(lines + lines.replace("d1", "d3").replace("d2", "d4"))
    settings = {"task": "naive_bayes", "nb.tokenizer": "words", "train.format": "tsv"}
    nbspark.fit(None, tmp_path / "m", settings={**settings, "train.path": str(tmp_path / "a.tsv")})
    doubled = nbspark.fit(None, tmp_path / "n", settings={**settings, "train.path": str(tmp_path / "aa.tsv")})
    read = predictor.read_count_rows
    swaps = []

    def swap_then_read(*args):
        if not swaps:  # the manifest of m is read; the counts read now are n's (the same rows, doubled)
            (tmp_path / "m").rename(tmp_path / "m.old")
            (tmp_path / "n").rename(tmp_path / "m")
            swaps.append(1)
        return read(*args)

    monkeypatch.setattr(predictor, "read_count_rows", swap_then_read)
    model = nbspark.load(tmp_path / "m")
    assert swaps and model.manifest["label_counts"] == doubled.manifest["label_counts"] == {"x": 2, "y": 2}
    assert model.predict_proba(["alpha"]).tolist() == doubled.predict_proba(["alpha"]).tolist()


def test_fit_trains_the_family_of_the_configs_task(tmp_path):
    """``nbspark.fit`` of a density config trained a naive Bayes model: with a column named
    ``label`` in the table, silently (the wrong kind of model, answering another question); without
    one, it failed with "no label column". The task picks the family, as ``nbspark train`` does."""
    from nbspark.density.predictor import DensityPredictor
    from nbspark.errors import ConfigError
    from nbspark.naive_bayes.jobs import train_nb_in_process

    table = tmp_path / "t.csv"
    table.write_text("colour,label\nred,x\nred,y\nblue,x\n")
    settings = {"task": "density", "train.format": "csv", "train.path": str(table)}
    model = nbspark.fit(None, tmp_path / "m", settings=settings)
    assert isinstance(model, DensityPredictor)
    # the joint of both columns, counted by hand: (red, x) is 1 row of 3, (blue, y) none
    assert model.log_density([{"colour": "red", "label": "x"}])[0] == pytest.approx(np.log(1 / 3))
    assert model.log_density(pd.DataFrame([{"colour": "red", "label": "y"}]))[0] == pytest.approx(
        np.log(1 / 3)
    )
    with pytest.raises(
        ConfigError, match="^a config of task = 'density' does not train a naive_bayes model$"
    ):
        train_nb_in_process(load_config(None, settings), tmp_path / "nb")
    assert not (tmp_path / "nb").exists()


def test_classify_scores_a_configs_test_set_in_process_for_every_family(tmp_path, fixtures):
    """``nbspark.classify``: the command's ``classify --in-process`` from Python (no JVM: this test has
    no spark mark), for the three families, returning the metrics it writes. Counted by hand: the
    textbook's d5 "Chinese Chinese Chinese Tokyo Japan" (class c: 4 documents of 6, 11 tokens, chinese
    6; j: 2 of 6, 6 tokens, chinese 2, tokyo 1, japan 1; 8 words, alpha 1); the density's rows."""
    from nbspark.errors import ConfigError

    china = {"task": "naive_bayes", "nb.tokenizer": "words", "train.format": "tsv", "test.format": "tsv"}
    china |= {"train.path": str(fixtures / "china_train.tsv"), "test.path": str(fixtures / "china_test.tsv")}
    nbspark.fit(None, tmp_path / "nb", settings=china)
    metrics = nbspark.classify(None, tmp_path / "nb", tmp_path / "r", settings=china)
    written = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert metrics == written and (metrics["documents"], metrics["unknown_label_count"]) == (3, 1)
    c, j = 4 / 6 * (7 / 19) ** 3 * (1 / 19) ** 2, 2 / 6 * (3 / 14) ** 3 * (2 / 14) ** 2
    rows = {r["id"]: r for r in pd.read_parquet(tmp_path / "r" / "predictions").to_dict("records")}
    assert list(rows["d5"]["predicted"]) == ["c"] and rows["d5"]["probability"] == pytest.approx(c / (c + j))
    with pytest.raises(OutputError, match="already holds"):
        nbspark.classify(None, tmp_path / "nb", tmp_path / "r", settings=china)
    again = nbspark.classify(model=tmp_path / "nb", out=tmp_path / "again")  # by the model's own config
    assert {**again, "seconds": 0} == {**metrics, "seconds": 0}
    decided = nbspark.classify(
        None, tmp_path / "nb", tmp_path / "r", settings={**china, "nb.positive_label": "j"}, overwrite=True
    )
    assert decided["pr_curve"]["positive_label"] == "j" and (tmp_path / "r" / "pr.png").exists()
    with pytest.raises(ConfigError, match="cannot score in process: a model over broadcast_limit_mb"):
        nbspark.classify(None, tmp_path / "nb", tmp_path / "r2", settings={**china, "scoring": "join"})
    with pytest.raises(ConfigError, match="reads local files only, not test.path hdfs://nn/x"):
        nbspark.classify(
            None, tmp_path / "nb", tmp_path / "r2", settings={**china, "test.path": "hdfs://nn/x"}
        )
    assert not (tmp_path / "r2").exists()

    ngrams = {"train.path": str(fixtures / "ngrams.txt"), "test.path": str(fixtures / "ngrams.txt")}
    ngrams |= {"test.format": "ngrams"}
    nbspark.fit(None, tmp_path / "bo", settings=ngrams)
    backoff = nbspark.classify(None, tmp_path / "bo", tmp_path / "rb", settings=ngrams)
    assert backoff["test_is_training_data"] and backoff["examples"] > 0 and 0 < backoff["accuracy"] <= 1

    (tmp_path / "t.csv").write_text("colour,size\nred,s\nred,l\nblue,s\n")
    table = {"task": "density", "train.format": "csv", "train.path": str(tmp_path / "t.csv")}
    table |= {"test.format": "csv", "test.path": str(tmp_path / "t.csv")}
    nbspark.fit(None, tmp_path / "d", settings=table)
    density = nbspark.classify(None, tmp_path / "d", tmp_path / "rd", settings=table)
    # each row seen once of 3: log 1/3 under the joint, a held-out log-likelihood of log 1/3
    assert density["rows"] == 3 and density["joint"]["held_out_log_likelihood"] == pytest.approx(
        np.log(1 / 3)
    )


def test_fit_with_update_adds_a_files_counts_to_a_model_as_train_update_does(fixtures, tmp_path):
    """``nbspark.fit(out=M, update=True)``: the new file's counts added (by M's own config, given only
    the path), the same model as one fit of both files; a file M holds refused unless ``force``;
    ``update`` with ``overwrite`` refused. No JVM."""
    weather = fixtures / "weather.csv"
    lines = weather.read_text().splitlines()
    (tmp_path / "more.csv").write_text("\n".join([lines[0], *lines[1:6]]) + "\n")
    (tmp_path / "both.csv").write_text("\n".join([*lines, *lines[1:6]]) + "\n")
    table = {"task": "naive_bayes", "nb.model": "mixed", "nb.label_column": "play"}
    nbspark.fit(None, tmp_path / "m", settings={**table, "train.path": str(weather)})
    grown = nbspark.fit(out=tmp_path / "m", settings={"train.path": str(tmp_path / "more.csv")}, update=True)
    once = nbspark.fit(None, tmp_path / "one", settings={**table, "train.path": str(tmp_path / "both.csv")})
    rows = [{"outlook": "sunny", "temperature": "80", "humidity": 70.0, "windy": "TRUE"}]
    assert grown.class_count_.tolist() == once.class_count_.tolist() == [7, 13]
    assert grown.predict_proba(rows) == pytest.approx(once.predict_proba(rows), abs=1e-12)
    with pytest.raises(InputError, match=r"already counted into this model .*; pass --force \(force=True\)"):
        nbspark.fit(out=tmp_path / "m", settings={"train.path": str(tmp_path / "more.csv")}, update=True)
    again = nbspark.fit(
        out=tmp_path / "m", settings={"train.path": str(tmp_path / "more.csv")}, update=True, force=True
    )
    assert again.class_count_.tolist() == [9, 16]
    with pytest.raises(ValueError, match="give one"):
        nbspark.fit(out=tmp_path / "m", update=True, overwrite=True)
    with pytest.raises(ValueError, match="update adds to the model out: name it"):
        nbspark.fit(settings={"train.path": str(tmp_path / "more.csv")}, update=True)
