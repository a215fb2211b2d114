"""train -> classify -> query in local mode on the hand-made fixtures (tests/data/README.md)."""

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from pyspark.testing import assertDataFrameEqual

from nbspark.backoff.events import count_ddl, example_events, ngram_example
from nbspark.backoff.jobs import BACKOFF, classify, load_backoff_manifest, train
from nbspark.backoff.query import query
from nbspark.errors import InputError, OutputError
from nbspark.inputs.parsers import MalformedLine
from nbspark.inputs.resolve import resolve_input
from nbspark.inputs.spec import InputSpec
from nbspark.settings.config import load_config
from nbspark.spine.training import read_counts
from nbspark.storage.tables import check_output

pytestmark = pytest.mark.spark


def cfg_for(tmp_path, fixtures, **extra):
    overrides = {
        "train.path": str(fixtures / "ngrams.txt"),
        "test.path": str(fixtures / "mini.sgm"),
        "model_dir": str(tmp_path / "model"),
        "results_dir": str(tmp_path / "results"),
        "worked_examples": "does not _ the outcome,x y _ z w",
    }
    overrides.update(extra)
    return load_config(None, overrides)


def run_train(spark, cfg, out=None, overwrite=False):
    inputs = resolve_input(cfg.train, None)
    out = check_output(out or cfg.model_dir, overwrite, [inputs.root])
    return train(spark, cfg, inputs, out, overwrite=overwrite), Path(
        str(out)
    )  # a Location; the tests look at the local files


@pytest.fixture(scope="module")
def model(spark, tmp_path_factory):
    from tests.conftest import FIXTURES

    tmp = tmp_path_factory.mktemp("m")
    cfg = cfg_for(tmp, FIXTURES)
    manifest, out = run_train(spark, cfg)
    return cfg, manifest, out


def test_train_stats_hand_counted(model):
    _, manifest, out = model
    stats = manifest["stats"]
    assert stats["lines_read"] == 11
    assert stats["examples"] == 7 and stats["weight"] == 34
    assert stats["lines_not_in_confusion_set"] == 1
    assert stats["malformed"] == 3
    assert (stats["malformed.tokens"], stats["malformed.count"], stats["malformed.fields"]) == (1, 1, 1)
    assert [b["line_number"] for b in manifest["malformed_examples"]] == [8, 9, 10]
    assert manifest["distinct_events"] == {"": 2, "ABD": 7, "ABDE": 7, "B": 6, "BD": 6}
    assert manifest["label_counts"] == {"affect": 11, "effect": 23}
    assert manifest["schema_version"] == 1 and manifest["subsets"] == ["ABDE", "ABD", "BD", "B", ""]
    assert (out / "counts" / "_SUCCESS").is_file() and (out / "_nbspark.json").is_file()


def test_report_names_a_set_word_never_counted(spark, model, fixtures, tmp_path):
    from nbspark.report.format import format_train_report

    _, manifest, _ = model
    assert "never counted" not in format_train_report(manifest, "m")
    cfg = cfg_for(
        tmp_path, fixtures, confusion_set='["affect", "effect", "effects"]'
    )  # no line of ngrams.txt is centred on effects
    wider, _ = run_train(spark, cfg)
    assert wider["label_counts"] == manifest["label_counts"]
    assert (
        "\nnever counted (no example centred on them, so never predicted): effects\n"
        in format_train_report(wider, "m")
    )


def test_count_table_equals_plain_python_count(spark, model, fixtures):
    cfg, manifest, out = model
    expected = Counter()
    for line in (fixtures / "ngrams.txt").read_text(encoding="utf-8").splitlines():
        try:
            ex = ngram_example(line, "t", frozenset(cfg.confusion_set), 5, True)
        except MalformedLine:
            continue
        for key, w in example_events(ex, cfg.counted_subsets, "ABCDE") if ex else ():
            expected[key] += w
    want = spark.createDataFrame([(*k, v) for k, v in expected.items()], schema=count_ddl("ABCDE"))
    got = read_counts(spark, out, BACKOFF, manifest)
    assertDataFrameEqual(got, want, checkRowOrder=False)
    # and a few cells counted by hand
    rows = {tuple(r[:-1]): r[-1] for r in got.collect()}
    assert rows[("B", None, "not", None, None, "affect")] == 9
    assert rows[("BD", None, "cumulative", "of", None, "effect")] == 10


def test_one_partition_equals_many(spark, model, fixtures, tmp_path):
    cfg, manifest, out = model
    many = cfg_for(tmp_path, fixtures, partitions="3")
    _, out3 = run_train(spark, many)
    assertDataFrameEqual(
        read_counts(spark, out3, BACKOFF, manifest),
        read_counts(spark, out, BACKOFF, manifest),
        checkRowOrder=False,
    )


def test_pairs_engine_equals_arrow_engine(spark, model, fixtures, tmp_path):
    # the card's literal flatMap((event, 1)).reduceByKey against the default (arrow) engine
    cfg, manifest, out = model
    pairs_manifest, out_pairs = run_train(spark, cfg_for(tmp_path, fixtures, engine="pairs", partitions="3"))
    assertDataFrameEqual(
        read_counts(spark, out_pairs, BACKOFF, manifest),
        read_counts(spark, out, BACKOFF, manifest),
        checkRowOrder=False,
    )
    assert (
        pairs_manifest["stats"] == manifest["stats"]
        and pairs_manifest["distinct_events"] == manifest["distinct_events"]
    )


@pytest.mark.parametrize("partitions", ["0", "3"])
def test_arrow_engine_equals_combine_engine(spark, model, fixtures, tmp_path, partitions):
    cfg, manifest, out = model
    assert manifest["engine"] == "arrow"  # auto, for ngrams input in permissive mode
    combine_manifest, out_combine = run_train(
        spark, cfg_for(tmp_path, fixtures, engine="combine", partitions=partitions)
    )
    assertDataFrameEqual(
        read_counts(spark, out_combine, BACKOFF, manifest),
        read_counts(spark, out, BACKOFF, manifest),
        checkRowOrder=False,
    )
    for key in ("stats", "distinct_events", "label_counts", "malformed_examples"):
        assert combine_manifest[key] == manifest[key], key


def test_arrow_engine_failfast_names_the_line(spark, fixtures, tmp_path):
    cfg = cfg_for(tmp_path, fixtures, engine="arrow", mode="failfast")
    with pytest.raises(InputError, match=r"ngrams.txt:8: malformed line \(tokens\)"):
        run_train(spark, cfg)
    assert not (tmp_path / "model").exists()


def test_classify_hand_counted(spark, model, tmp_path):
    cfg, _, out = model
    inputs = resolve_input(cfg.test, None)
    results = check_output(tmp_path / "results", False, [inputs.root, out])
    metrics = classify(spark, cfg, out, inputs, results)
    assert metrics["examples"] == 4 and metrics["correct"] == 2
    assert metrics["accuracy"] == 0.5 and metrics["majority_baseline"] == 0.5
    assert metrics["input_stats"]["stories_read"] == 4 and metrics["input_stats"]["empty_bodies"] == 1
    levels = {lv["name"]: (lv["examples"], lv["correct"]) for lv in metrics["levels"]}
    assert levels == {"ABDE": (0, 0), "ABD": (1, 1), "BD": (1, 0), "B": (1, 0), "∅": (1, 1)}
    preds = {r["source"]: r for r in spark.read.parquet(str(results / "predictions")).collect()}
    assert sorted(preds) == ["reuters:1#2", "reuters:1#8", "reuters:2#0", "reuters:3#2"]
    p = preds["reuters:1#8"]
    assert (p["a"], p["b"], p["c"], p["d"], p["e"]) == ("could", "not", "effect", "the", "ratio")
    assert (p["gold"], p["predicted"], p["subset"]) == ("effect", "affect", "BD")
    assert p["probability"] == pytest.approx(0.9)
    assert preds["reuters:2#0"]["a"] == "<s>" and preds["reuters:2#0"]["probability"] == pytest.approx(
        23 / 34
    )
    worked = metrics["worked_examples"]
    assert (worked[0]["predicted"], worked[0]["subset"], worked[0]["unseen_at"]) == (
        "affect",
        "ABD",
        ["ABDE"],
    )
    saved = json.loads((results / "metrics.json").read_text())
    assert saved["accuracy"] == 0.5 and (results / "report.txt").read_text().startswith("examples: 4")
    import pandas as pd  # the flat companion, for pandas: one metric per row, names as json_normalize's

    flat = pd.read_csv(tmp_path / "results" / "metrics.csv").set_index("metric")["value"]
    assert float(flat["accuracy"]) == 0.5 and int(flat["examples"]) == 4
    assert set(flat.index) == set(pd.json_normalize(saved).columns)


def test_classify_with_splits_and_a_shorter_chain(spark, model, tmp_path):
    cfg, _, out = model
    cfg = load_config(
        None, {"test.path": cfg.test.path, "test.splits": "TEST", "backoff": "B,", "worked_examples": ""}
    )
    inputs = resolve_input(cfg.test, None)
    metrics = classify(spark, cfg, out, inputs, tmp_path / "r")
    assert metrics["examples"] == 1  # story 2 only (story 4 has no body)
    assert [lv["name"] for lv in metrics["levels"]] == ["B", "∅"]


def test_query_from_model_and_from_file(spark, model, fixtures):
    _, _, out = model
    r = query(spark, {"B": "_", "C": "affect"}, model_dir=out)
    assert r["matching_count"] == 11 and r["all_count"] == 34
    assert r["share"] == pytest.approx(11 / 34)
    assert [(t["values"]["B"], t["count"]) for t in r["top"]] == [("not", 9), ("cumulative", 2)]
    assert r["top"][0]["probability"] == pytest.approx(9 / 11)

    r = query(spark, {"C": "_"}, top=1, model_dir=out)
    assert r["top"] == [{"values": {"C": "effect"}, "count": 23, "probability": pytest.approx(23 / 34)}]
    assert r["distinct_bindings"] == 2

    raw = resolve_input(InputSpec("ngrams", str(fixtures / "ngrams.txt")), None)
    r = query(spark, {"C": "_"}, ngram_inputs=raw)
    # as written: 'EFFECT' stays apart and the off-set line 'cause' counts too
    assert {t["values"]["C"]: t["count"] for t in r["top"]} == {
        "effect": 19,
        "affect": 11,
        "cause": 9,
        "EFFECT": 4,
    }
    assert r["input_stats"]["malformed"] == 3
    r = query(spark, {"C": "_"}, ngram_inputs=raw, fold_case=True)
    assert {t["values"]["C"]: t["count"] for t in r["top"]} == {"effect": 23, "affect": 11, "cause": 9}
    with pytest.raises(InputError, match="malformed line \\(tokens\\)"):
        query(spark, {"C": "_"}, ngram_inputs=raw, mode="failfast")


@pytest.mark.parametrize(
    "bindings, top",
    [
        ({"B": "_", "C": "affect"}, 10),
        ({"C": "_"}, 1),
        ({"A": "_", "B": "_", "C": "_", "D": "_", "E": "_"}, 3),
        ({"B": "not", "C": "_", "D": "the"}, 10),
        ({"B": "_", "C": "Affect"}, 10),
        ({"C": "nothing"}, 10),
    ],
)
def test_a_model_query_in_process_answers_as_spark(spark, model, bindings, top):
    """``nbspark query --model`` answers without Spark (``query_model``): the same answer, field by
    field (ties ranked alike), as the Spark query of the model."""
    from nbspark.backoff.query import query_model

    _, _, out = model
    assert query_model(out, bindings, top) == query(spark, bindings, top, model_dir=out)


def test_the_query_command_on_a_model_needs_no_jvm(model, tmp_path):
    """In a process whose ``java`` fails (and no JAVA_HOME), the command answers all the same."""
    import os
    import subprocess
    import sys

    _, _, out = model
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "java").write_text("#!/bin/sh\necho 'java started' >&2\nexit 97\n")
    (shim / "java").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = f"{shim}:{env['PATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "nbspark", "query", "--model", str(out), "--B", "_", "--C", "affect"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "matching count: 11 of 34" in done.stdout and "B=not" in done.stdout
    assert "java started" not in done.stderr


def test_failfast_names_file_and_line(spark, fixtures, tmp_path):
    cfg = cfg_for(tmp_path, fixtures, mode="failfast")
    with pytest.raises(InputError) as info:
        run_train(spark, cfg)
    assert f"{fixtures / 'ngrams.txt'}:8: malformed line (tokens)" in str(info.value)
    assert not (tmp_path / "model").exists()
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_empty_corpus_and_no_examples(spark, tmp_path):
    empty = tmp_path / "in" / "empty.txt"
    empty.parent.mkdir()
    empty.write_text("")
    cfg = load_config(None, {"train.path": str(empty), "model_dir": str(tmp_path / "m")})
    with pytest.raises(InputError, match="no training examples"):
        run_train(spark, cfg)
    assert not (tmp_path / "m").exists()


def test_failed_overwrite_keeps_the_old_model(spark, model, fixtures, tmp_path):
    cfg, manifest, out = model
    copy = tmp_path / "model"
    shutil.copytree(out, copy)
    before = sorted(map(tuple, read_counts(spark, copy, BACKOFF, manifest).collect()))
    bad = cfg_for(tmp_path, fixtures, mode="failfast")
    with pytest.raises(InputError):
        run_train(spark, bad, out=copy, overwrite=True)
    assert sorted(map(tuple, read_counts(spark, copy, BACKOFF, manifest).collect())) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_model_integrity_is_checked(spark, model, tmp_path):
    cfg, manifest, out = model
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    (broken / "counts" / "_SUCCESS").unlink()
    with pytest.raises(OutputError, match="incomplete table"):
        read_counts(spark, broken, BACKOFF, manifest)

    renamed = tmp_path / "renamed"
    df = read_counts(spark, out, BACKOFF, manifest).withColumnRenamed("label", "lable")
    df.write.parquet(str(renamed / "counts"))
    with pytest.raises(OutputError, match="column 'label' is missing"):
        read_counts(spark, renamed, BACKOFF, manifest)

    mistyped = tmp_path / "mistyped"
    df = read_counts(spark, out, BACKOFF, manifest)
    df.withColumn("count", df["count"].cast("string")).write.parquet(str(mistyped / "counts"))
    with pytest.raises(OutputError, match="column 'count' is string, expected bigint"):
        read_counts(spark, mistyped, BACKOFF, manifest)

    other = tmp_path / "other"
    shutil.copytree(out, other)
    (other / "manifest.json").write_text(json.dumps({**manifest, "schema_version": 99}))
    with pytest.raises(OutputError, match="schema version 99"):
        load_backoff_manifest(other)
    (other / "manifest.json").write_text(json.dumps({**manifest, "kind": "something-else"}))
    with pytest.raises(OutputError, match="of kind 'something-else'"):
        load_backoff_manifest(other)
    with pytest.raises(OutputError, match="not an nbspark model"):
        load_backoff_manifest(tmp_path)
