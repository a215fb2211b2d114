"""Every input and output on a non-local file system: Hadoop's ViewFS mounts local directories
under ``viewfs://nbt/`` (conftest.VIEWFS_CONF), where any ``os``/``pathlib`` call fails or finds
nothing. Runs there must equal the local runs, refuse what local runs refuse, and keep the old
model when a run dies.
"""

import json
from pathlib import Path

import pytest
from pyspark.testing import assertDataFrameEqual

from nbspark.app.cli import query_main
from nbspark.backoff.curves import learning_curve
from nbspark.backoff.events import count_ddl
from nbspark.backoff.jobs import classify, train
from nbspark.backoff.query import query
from nbspark.errors import OutputError, StorageError
from nbspark.inputs.resolve import resolve_input
from nbspark.loading import load
from nbspark.naive_bayes.events import COUNT_DDL
from nbspark.naive_bayes.jobs import classify_nb, train_nb
from nbspark.settings.config import load_config
from nbspark.storage.locations import location
from nbspark.storage.tables import MARKER, check_output, read_parquet_checked, staged_output
from tests.conftest import FIXTURES, VIEWFS_CONF, spark_submit

pytestmark = pytest.mark.spark

FX = "viewfs://nbt/fixtures"


def rows(spark, model, ddl=count_ddl("ABCDE")):
    return read_parquet_checked(spark, location(model) / "counts", ddl)


def same_metrics(a: dict, b: dict) -> None:
    """Metrics equal but for what names the run (paths, time)."""
    drop = {"seconds", "model", "test_input"}
    assert {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


@pytest.mark.parametrize("through", ["the OS", "Hadoop's stream"])
def test_reads_through_hadoop_give_every_byte_back(spark, viewfs, monkeypatch, through):
    """A file read through ViewFS: on the local disk its bytes are read by the OS; on any other
    file system through Hadoop's stream (a py4j reply of Latin-1 text per chunk), as here when the
    local disk is not looked for. Every byte value, the line breaks and backslashes py4j escapes,
    whole and by seek, past 8 KB."""
    from nbspark.storage.hadoop import HadoopStorage

    root, local = viewfs
    if through == "Hadoop's stream":
        monkeypatch.setattr(HadoopStorage, "_local_path", lambda self, uri: None)
    data = bytes(range(256)) * 64 + b"\r\n\\n\x00" + bytes(range(255, -1, -1)) * 40
    (local / "bytes.bin").write_bytes(data)
    f = location(root) / "bytes.bin"
    assert f.read_bytes() == data
    with pytest.raises(FileNotFoundError, match=r"/missing.bin: no such file or directory"):
        (location(root) / "missing.bin").read_bytes()
    with f.open() as fh:
        fh.seek(1000)
        assert fh.read(9000) == data[1000:10000]
        fh.seek(-7, 2)
        assert fh.read() == data[-7:]


def test_a_local_path_is_looked_up_and_listed_by_the_os_as_hadoop_answers(spark, tmp_path, monkeypatch):
    """On ``file:`` the OS answers lookups and listings (no py4j round trips): the same answers as
    Hadoop's local file system, its checksum files left out, a link loop left out, a missing path
    the same one line."""
    import os

    from nbspark.storage.hadoop import HadoopStorage
    from nbspark.storage.locations import use_hadoop

    storage = use_hadoop()
    spark.range(3).write.parquet(str(tmp_path / "table"))  # Spark's files, each with its .crc
    (tmp_path / "a.txt").write_text("abc")
    (tmp_path / "sub").mkdir()
    os.symlink(tmp_path, tmp_path / "sub" / "up")  # a loop: Hadoop follows it until the OS refuses
    uris = [f"file:{tmp_path}/{p}" for p in ("", "a.txt", "sub", "table", "missing")]

    def answers():
        out = []
        for uri in uris:
            for call in ("exists", "is_dir", "is_file", "stat", "list", "entries"):
                try:
                    got = getattr(storage, call)(uri)
                    got = sorted(got) if isinstance(got, list) else got
                except Exception as exc:  # the one line, whichever storage raised it
                    got = (type(exc).__name__, str(exc))
                out.append((uri, call, got))
        return out

    by_os = answers()
    monkeypatch.setattr(HadoopStorage, "_answered", lambda self, uri, what, by_os, by_hadoop: by_hadoop())
    by_hadoop = answers()
    for os_answer, hadoop_answer in zip(by_os, by_hadoop):
        if os_answer[1] == "entries" and os_answer[0].endswith(("/", "/sub")):
            continue  # Hadoop's own listing keeps the loop; nbspark's reader drops it either way
        assert os_answer == hadoop_answer
    table = {(u, c): g for u, c, g in by_os}[(uris[3], "list")]
    assert table and not [u for u in table if u.endswith(".crc")]


def test_a_directory_with_subdirectories_counts_as_its_files_in_one(spark, viewfs, tmp_path):
    """The n-gram lines split over a directory tree on ViewFS (hidden ``_``/``.`` names left out)
    count as the one fixture file does, locally."""
    remote, behind = viewfs
    lines = (FIXTURES / "ngrams.txt").read_bytes().splitlines(keepends=True)
    for name, part in (
        ("a.txt", lines[:4]),
        ("sub/b.txt", lines[4:7]),
        ("sub/deeper/c.txt", lines[7:]),
        ("_tmp/no.txt", lines[:2]),
        (".git/no.txt", lines[:2]),
    ):
        (behind / "in" / name).parent.mkdir(parents=True, exist_ok=True)
        (behind / "in" / name).write_bytes(b"".join(part))
    cfg = load_config(None, {"train.path": f"{remote}/in"})
    inputs = resolve_input(cfg.train, None)
    assert [f.uri for f in inputs.files] == [
        f"{remote}/in/{n}" for n in ("a.txt", "sub/b.txt", "sub/deeper/c.txt")
    ]
    manifest = train(spark, cfg, inputs, f"{remote}/model")
    local = load_config(None, {"train.path": str(FIXTURES / "ngrams.txt")})
    train(spark, local, resolve_input(local.train, None), tmp_path / "model")
    assertDataFrameEqual(rows(spark, f"{remote}/model"), rows(spark, tmp_path / "model"), checkRowOrder=False)
    assert manifest["stats"]["weight"] == 34 and manifest["stats"]["lines_read"] == 11


def test_backoff_train_classify_query_update_and_curve_on_viewfs_equal_local(spark, viewfs, tmp_path):
    remote, behind = viewfs
    cfg = load_config(None, {"train.path": f"{FX}/ngrams.txt", "test.path": f"{FX}/mini.sgm"})
    local = load_config(
        None, {"train.path": str(FIXTURES / "ngrams.txt"), "test.path": str(FIXTURES / "mini.sgm")}
    )
    train_in, test_in = resolve_input(cfg.train, None), resolve_input(cfg.test, None)
    assert [f.uri for f in train_in.files] == [f"{FX}/ngrams.txt"]

    manifest = train(spark, cfg, train_in, f"{remote}/model")
    train(spark, local, resolve_input(local.train, None), tmp_path / "model")
    assert (behind / "model" / MARKER).is_file() and (behind / "model" / "counts" / "_SUCCESS").is_file()
    assertDataFrameEqual(rows(spark, f"{remote}/model"), rows(spark, tmp_path / "model"), checkRowOrder=False)
    assert manifest["stats"]["weight"] == 34 and manifest["inputs"]["files"] == [f"{FX}/ngrams.txt"]
    # the first malformed lines carry line numbers read back through Hadoop
    assert [b["line_number"] for b in manifest["malformed_examples"]][:1] == [8]
    assert {b["source"] for b in manifest["malformed_examples"]} == {
        f"{FX}/ngrams.txt"
    }  # named as given, not the mount's target

    got = classify(spark, cfg, f"{remote}/model", test_in, f"{remote}/results")
    want = classify(spark, local, tmp_path / "model", resolve_input(local.test, None), tmp_path / "results")
    same_metrics(got, want)
    assert json.loads((behind / "results" / "metrics.json").read_text())["examples"] == 4
    assert (
        (behind / "results" / "report.txt")
        .read_text()
        .startswith(Path(tmp_path / "results" / "report.txt").read_text()[:40])
    )

    answer = query(spark, {"B": "_", "C": "affect"}, 10, f"{remote}/model")
    assert (
        answer["matching_count"] == 11
        and answer["top"] == query(spark, {"B": "_", "C": "affect"}, 10, tmp_path / "model")["top"]
    )
    # the query job's --json written through Hadoop
    argv = ["--model", f"{remote}/model", "--B", "not", "--C", "_", "--json", f"{remote}/q.json"]
    assert query_main(argv) == 0
    assert json.loads((behind / "q.json").read_text())["top"][0]["values"] == {"C": "affect"}

    # --update: the model on viewfs gets the counts of a second file, as the local one does
    (behind / "more").mkdir()
    (behind / "more" / "b.txt").write_text(
        (FIXTURES / "ngrams.txt").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "b.txt").write_text((FIXTURES / "ngrams.txt").read_text(encoding="utf-8"), encoding="utf-8")
    more = load_config(None, {"train.path": f"{remote}/more/b.txt"})
    updated = train(spark, more, resolve_input(more.train, None), f"{remote}/model", update=True)
    lmore = load_config(None, {"train.path": str(tmp_path / "b.txt")})
    train(spark, lmore, resolve_input(lmore.train, None), tmp_path / "model", update=True)
    assert updated["stats"]["weight"] == 68 and len(updated["updates"]) == 2
    assertDataFrameEqual(rows(spark, f"{remote}/model"), rows(spark, tmp_path / "model"), checkRowOrder=False)
    with pytest.raises(Exception, match="already counted into this model"):
        train(spark, more, resolve_input(more.train, None), f"{remote}/model", update=True)

    curve = learning_curve(spark, cfg, train_in, test_in, f"{remote}/curve", fractions=(0.5, 1.0), seed=1)
    assert curve == learning_curve(
        spark,
        local,
        resolve_input(local.train, None),
        resolve_input(local.test, None),
        tmp_path / "curve",
        fractions=(0.5, 1.0),
        seed=1,
    )
    assert (behind / "curve" / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in behind.iterdir()) == [
        "curve",
        "model",
        "more",
        "q.json",
        "results",
    ]  # no staging left


@pytest.mark.parametrize("tokenizer", ["nbspark", "words"])  # words: the arrow engine and the arrow scorer
def test_naive_bayes_on_viewfs_equals_local(spark, viewfs, tmp_path, tokenizer):
    remote, behind = viewfs

    def cfg(root):
        return load_config(
            None,
            {
                "task": "naive_bayes",
                "train.format": "tsv",
                "train.path": f"{root}/china_train.tsv",
                "test.format": "tsv",
                "test.path": f"{root}/china_test.tsv",
                "nb.tokenizer": tokenizer,
            },
        )

    here, there = cfg(FIXTURES), cfg(FX)
    train_nb(spark, there, resolve_input(there.train, None), f"{remote}/m")
    train_nb(spark, here, resolve_input(here.train, None), tmp_path / "m")
    assertDataFrameEqual(
        rows(spark, f"{remote}/m", COUNT_DDL), rows(spark, tmp_path / "m", COUNT_DDL), checkRowOrder=False
    )
    got = classify_nb(spark, there, f"{remote}/m", resolve_input(there.test, None), f"{remote}/r")
    want = classify_nb(spark, here, tmp_path / "m", resolve_input(here.test, None), tmp_path / "r")
    same_metrics(got, want)
    assert got["accuracy"] == want["accuracy"] and (behind / "r" / "predictions" / "_SUCCESS").is_file()

    # the model read without Spark's readers (pyarrow over Hadoop streams) predicts as the local one
    a, b = load(f"{remote}/m"), load(tmp_path / "m")
    assert (
        a.predict_proba(["Chinese Chinese Chinese Tokyo Japan"]).tolist()
        == b.predict_proba(["Chinese Chinese Chinese Tokyo Japan"]).tolist()
    )


@pytest.mark.parametrize("limit", ["256", "0"], ids=["whole-shards", "streamed"])
def test_google_shards_on_viewfs_equal_local(spark, viewfs, tmp_path, limit):
    """Both Google readers (shards whole through binaryFiles, lines through the JVM filter) on
    ViewFS give the local combine engine's table and statistics."""
    import gzip

    remote, behind = viewfs
    lines = [
        "the cumulative effect_NOUN of the\t2000,45,5",
        "_START_ not affect the outcome\t2001,50,9",
        "x y effect z w\t2000,40,1\t2001,2,2",
        "a b affect d\t2000,60,1",
        "of the cause and so\t2001,900,9",
    ]
    for root in (behind, tmp_path):
        (root / "shards").mkdir()
        (root / "shards" / "a.txt").write_text("\n".join(lines[:3]) + "\n")
        (root / "shards" / "b.gz").write_bytes(gzip.compress(("\n".join(lines[3:]) + "\n").encode()))
    settings = {"train.format": "google_v3", "train.min_count": "1", "train.whole_file_mb": limit}
    cfg = load_config(None, {**settings, "train.path": f"{remote}/shards"})
    local = load_config(None, {**settings, "train.path": str(tmp_path / "shards"), "engine": "combine"})
    got = train(spark, cfg, resolve_input(cfg.train, None), f"{remote}/model")
    want = train(spark, local, resolve_input(local.train, None), tmp_path / "model")
    assert got["engine"] == "dataframe" and got["stats"] == want["stats"]
    assert (
        got["stats"]["lines_read"] == 5 and got["stats"]["malformed"] == 1 and got["stats"]["examples"] == 2
    )
    assert got["malformed_examples"][0]["line_number"] == 1
    assertDataFrameEqual(rows(spark, f"{remote}/model"), rows(spark, tmp_path / "model"), checkRowOrder=False)


def test_refusals_hold_on_viewfs(spark, viewfs):
    remote, behind = viewfs
    (behind / "data").mkdir()
    (behind / "data" / "x.txt").write_text("x")
    for out in (f"{remote}/data", f"{remote}/data/out", remote):  # equal, inside, containing
        with pytest.raises(OutputError, match="overlaps the input"):
            check_output(out, True, [f"{remote}/data"])
    with pytest.raises(OutputError, match="overlaps the input"):  # the same directory by its local name
        check_output(f"{remote}/data/out", True, [str(behind / "data")])
    with pytest.raises(OutputError, match="already holds something"):
        check_output(f"{remote}/data", False)
    with pytest.raises(OutputError, match="not an nbspark output"):
        check_output(f"{remote}/data", True)
    with pytest.raises(OutputError, match="exists and is not a directory"):
        check_output(f"{remote}/data/x.txt", True)
    with pytest.raises(OutputError, match="refusing to write an output to /"):
        check_output("viewfs://nbt/", True)
    with pytest.raises(OutputError, match="no such model directory"):
        load(f"{remote}/nothing")
    assert (behind / "data" / "x.txt").read_text() == "x"


def test_a_rename_onto_an_existing_directory_fails_as_the_os_rename_does(spark, viewfs):
    """Hadoop's rename put ``a`` inside ``b`` (``b/a/f``) and said it had renamed it: a commit racing
    another, or two readers restoring a killed run's output, nested one output in the other."""
    uri, local = viewfs
    for name, file in (("a", "f"), ("b", "g")):
        (local / name).mkdir()
        (local / name / file).write_text(name)
    with pytest.raises(StorageError, match=r"/a: cannot rename it to .*/b, which exists$"):
        location(uri + "/a").rename(location(uri + "/b"))
    assert sorted(p.relative_to(local).as_posix() for p in local.rglob("*")) == ["a", "a/f", "b", "b/g"]
    location(uri + "/a").rename(location(uri + "/c"))  # a free name: renamed
    assert sorted(p.relative_to(local).as_posix() for p in local.rglob("*")) == ["b", "b/g", "c", "c/f"]


@pytest.mark.parametrize("atomic", [None, False], ids=["storage-picks", "marker-last"])
def test_staging_on_viewfs_replaces_only_on_success(spark, viewfs, atomic):
    remote, behind = viewfs
    out = location(f"{remote}/model")
    assert out.atomic_rename()  # ViewFS resolves to file:, where rename is atomic
    with staged_output(out, "model", atomic) as stage:
        (stage / "v").write_text("1")
    with pytest.raises(RuntimeError), staged_output(out, "model", atomic) as stage:
        (stage / "v").write_text("2")
        raise RuntimeError("injected failure")
    assert (behind / "model" / "v").read_text() == "1" and json.loads(
        (behind / "model" / MARKER).read_text()
    ) == {"kind": "model"}
    assert sorted(p.name for p in behind.iterdir()) == ["model"]


def test_the_slide_reproduces_with_data_and_outputs_on_viewfs(spark, data_dir, viewfs):
    """The commands' train and classify with ``--data-dir`` and every output on viewfs:// (the real
    corpora mounted there by conftest.VIEWFS_CONF): 724 windows, accuracy 0.9337, as on the local
    disk (the query job's --json on viewfs: the in-session test above; spark-submit's own settings
    mounting viewfs: the killed run's test below)."""
    from nbspark.app.cli import classify_main, train_main

    remote, behind = viewfs
    common = ["--data-dir", "viewfs://nbt/data"]
    assert train_main([*common, "--out", f"{remote}/model"]) == 0
    assert classify_main([*common, "--model", f"{remote}/model", "--out", f"{remote}/results"]) == 0
    metrics = json.loads((behind / "results" / "metrics.json").read_text())
    assert metrics["examples"] == 724 and round(metrics["accuracy"], 4) == 0.9337
    assert metrics["model"] == f"{remote}/model"


def test_a_killed_run_leaves_the_old_model_on_viewfs(spark, viewfs):
    """SIGKILL of the driver's JVM midway through counting (local mode: the executor is the driver),
    then a run whose tasks always fail: the model on viewfs stays readable and unchanged, and the
    next run cleans what the killed one left."""
    remote, behind = viewfs
    args = ["--set", f"train.path={FX}/ngrams.txt", "--set", "partitions=3", "--out", f"{remote}/m"]
    cfg = load_config(None, {"train.path": f"{FX}/ngrams.txt", "partitions": "3"})
    train(spark, cfg, resolve_input(cfg.train, None), f"{remote}/m")  # the killed runs' model, trained here
    before = sorted(map(tuple, rows(spark, f"{remote}/m").collect()))
    manifest = (behind / "m" / "manifest.json").read_text()

    marker = behind / "marker"
    marker.mkdir()
    proc = spark_submit(
        "train", *args, "--overwrite", conf=VIEWFS_CONF, env={"NBSPARK_FAULT": f"kill-executor-once:{marker}"}
    )
    assert (marker / "fired").is_file(), "the run was not killed, so this test proves nothing"
    assert proc.returncode != 0
    assert (behind / "m" / "manifest.json").read_text() == manifest
    assert sorted(map(tuple, rows(spark, f"{remote}/m").collect())) == before

    proc = spark_submit(
        "train", *args, "--overwrite", conf=VIEWFS_CONF, env={"NBSPARK_FAULT": f"always-raise:{marker}"}
    )
    assert proc.returncode == 1 and "injected failure" in proc.stdout + proc.stderr
    assert (behind / "m" / "manifest.json").read_text() == manifest
    assert sorted(map(tuple, rows(spark, f"{remote}/m").collect())) == before
    assert load(f"{remote}/m").manifest == json.loads(manifest)  # readable, and still the first run's
    assert sorted(p.name for p in behind.iterdir()) == ["m", "marker"]  # what both runs staged is gone


def test_pyspark_ml_models_save_and_load_on_viewfs(spark, viewfs):
    """Both Estimators' fitted models, in a Pipeline, saved to and loaded from ViewFS, transform
    as before (the naive Bayes counts were read back with a local-path reader: 'Expected a local
    filesystem path, got a URI')."""
    from pyspark.ml import Pipeline, PipelineModel
    from pyspark.ml.feature import Tokenizer

    from nbspark.ml import CountingBackoff, CountingBackoffModel, CountingNaiveBayes

    remote, behind = viewfs
    docs = spark.createDataFrame(
        [(0.0, "a b c"), (1.0, "b d d"), (1.0, "d e"), (0.0, "a a e")], ["label", "text"]
    )
    nb = Pipeline(
        stages=[
            Tokenizer(inputCol="text", outputCol="tokens"),
            CountingNaiveBayes(featuresCol="tokens", smoothing=0.5),
        ]
    ).fit(docs)
    nb.save(f"{remote}/nb")
    assert list((behind / "nb" / "stages").glob("1_*/nbspark/counts/*.parquet"))
    scored = [
        (r.prediction, r.probability.toArray().tolist()) for r in nb.transform(docs).orderBy("text").collect()
    ]
    again = [
        (r.prediction, r.probability.toArray().tolist())
        for r in PipelineModel.load(f"{remote}/nb").transform(docs).orderBy("text").collect()
    ]
    assert again == scored and [p for p, _ in scored] == [0.0, 0.0, 1.0, 1.0]
    windows = spark.createDataFrame(
        [
            (["would", "not", "affect", "the", "outcome"], 6),
            (["would", "not", "effect", "the", "outcome"], 1),
        ],
        "window ARRAY<STRING>, n BIGINT",
    )
    backoff = CountingBackoff(weightCol="n").fit(windows)
    backoff.save(f"{remote}/backoff")
    rows = (
        CountingBackoffModel.load(f"{remote}/backoff")
        .transform(windows)
        .select("prediction", "probability", "level")
        .collect()
    )
    assert [tuple(r) for r in rows] == [("affect", pytest.approx(6 / 7), "ABDE")] * 2


def test_s3a_without_its_connector_is_one_line_and_exit_1(tmp_path):
    proc = spark_submit("train", "--set", "train.path=s3a://bucket/5grams/", "--out", tmp_path / "m")
    errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if ln.startswith("train.py: error:")]
    assert proc.returncode == 1 and len(errors) == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (
        "s3a://bucket/5grams: no Hadoop FileSystem for the s3a:// scheme" in errors[0]
        and "hadoop-aws" in errors[0]
    )
    assert "Traceback" not in proc.stdout + proc.stderr and not (tmp_path / "m").exists()


def test_a_model_on_viewfs_is_classified_and_updated_by_its_own_config(spark, viewfs, tmp_path):
    """``classify --model`` and ``train --update`` of a naive Bayes model on viewfs:// given no
    --config and no task: the config it was trained with is read from its manifest through Hadoop
    (the embedded config, a backoff one, refused the model), and the run equals one given every
    setting (here in process, on local paths)."""
    import nbspark
    from nbspark.app.cli import classify_main, train_main

    remote, behind = viewfs
    china = {"task": "naive_bayes", "train.format": "tsv", "nb.tokenizer": "words"}
    sets = [f"{k}={v}" for k, v in china.items()]
    train = ["--set", f"train.path={FX}/china_train.tsv"]
    assert train_main([*(x for s in sets for x in ("--set", s)), *train, "--out", f"{remote}/m"]) == 0
    assert (
        classify_main(
            ["--model", f"{remote}/m", "--set", f"test.path={FX}/china_test.tsv", "--out", f"{remote}/r"]
        )
        == 0
    )
    got = json.loads((behind / "r" / "metrics.json").read_text())
    nbspark.fit(None, tmp_path / "m", settings={**china, "train.path": str(FIXTURES / "china_train.tsv")})
    want = nbspark.classify(
        None,
        tmp_path / "m",
        tmp_path / "r",
        settings={**china, "test.format": "tsv", "test.path": str(FIXTURES / "china_test.tsv")},
    )
    assert (got["documents"], got["accuracy"], got["confusion"]) == (3, want["accuracy"], want["confusion"])
    assert train_main(["--update", f"{remote}/m", "--set", f"train.path={FX}/china_test.tsv"]) == 0
    manifest = json.loads((behind / "m" / "manifest.json").read_text())
    runs = [u["stats"]["documents"] for u in manifest["updates"]]
    assert len(runs) == 2 and manifest["stats"]["documents"] == sum(runs) and runs[1] == 3
