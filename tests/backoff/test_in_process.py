"""A backoff model trained in process (``nbspark train --in-process``, ``nbspark.fit``, and
``nbspark train`` by itself below 64 MB): no Spark, no JVM, and the Spark job's model of every
backoff input, table and manifest."""

import bz2
import gzip
import json

import pyarrow.parquet as pq
import pytest

import nbspark
from nbspark.app.command import main
from nbspark.backoff.jobs import BACKOFF, train
from nbspark.errors import InputError
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from nbspark.spine.training import train_in_process
from tests.backoff.test_jobs_confusion_sets import brown_zip
from tests.conftest import FIXTURES, classify_results, command_alone, failures_in_spark_and_here

#: what a run records of itself, not of the model
VOLATILE = ("created", "seconds", "engine", "updates")
TEXT = (
    "Would the cuts affect the outcome? Their effect was small.\n\n"
    "It will not effect the plan; the effect of it, in effect, was nil.\n"
)


def _table(model) -> list[tuple]:
    rows = pq.read_table(str(model / "counts")).to_pylist()
    return sorted(tuple("" if v is None else v for v in r.values()) for r in rows)


def _manifest(model) -> dict:
    manifest = json.loads((model / "manifest.json").read_text())
    return {k: v for k, v in manifest.items() if k not in VOLATILE}


def _inputs(tmp_path) -> dict:
    (tmp_path / "doc.txt").write_text(TEXT)
    (tmp_path / "shard.gz").write_bytes(gzip.compress((FIXTURES / "google_v3.txt").read_bytes()))
    (tmp_path / "mini.sgm.bz2").write_bytes(bz2.compress((FIXTURES / "mini.sgm").read_bytes()))
    return {
        "ngrams": {"train.path": str(FIXTURES / "ngrams.txt")},
        "ngrams-sampled": {"train.path": str(FIXTURES / "ngrams.txt"), "sample": "0.5"},
        "ngrams-combine": {"train.path": str(FIXTURES / "ngrams.txt"), "engine": "combine"},
        "text": {"train.format": "text", "train.path": str(tmp_path / "doc.txt")},
        "paragraphs": {
            "train.format": "text",
            "train.path": str(tmp_path / "doc.txt"),
            "train.document": "paragraph",
        },
        "reuters": {"train.format": "reuters", "train.path": str(FIXTURES / "mini.sgm")},
        "reuters-bz2": {"train.format": "reuters", "train.path": str(tmp_path / "mini.sgm.bz2")},
        "brown": {
            "train.format": "brown",
            "train.path": str(brown_zip(tmp_path / "brown.zip")),
            "confusion_set": '["their", "there"]',
        },
        "google_v2": {"train.format": "google_v2", "train.path": str(FIXTURES / "google_v2.txt")},
        "google_v3-gz": {"train.format": "google_v3", "train.path": str(tmp_path / "shard.gz")},
    }


@pytest.mark.spark
@pytest.mark.parametrize(
    "name",
    [
        "ngrams",
        "ngrams-sampled",
        "ngrams-combine",
        "text",
        "paragraphs",
        "reuters",
        "reuters-bz2",
        "brown",
        "google_v2",
        "google_v3-gz",
    ],
)
def test_every_backoff_input_in_process_is_the_spark_jobs(spark, tmp_path, name):
    """The Spark job (its default engine for the input) and the same readers in process: the same
    count table row for row and the same manifest (statistics, malformed lines and their numbers)."""
    cfg = load_config(None, _inputs(tmp_path)[name])
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    train_in_process(cfg, BACKOFF, tmp_path / "local")
    assert _table(tmp_path / "local") == _table(tmp_path / "spark")
    assert _manifest(tmp_path / "local") == _manifest(tmp_path / "spark")
    assert json.loads((tmp_path / "local" / "manifest.json").read_text())["engine"] == "local"


def test_the_fixture_in_process_counts_as_a_plain_python_count(tmp_path):
    """No JVM (no spark mark): the well-formed lines of the n-gram fixture (tests/data/README.md), a
    count after the TAB, five tokens, a confusion-set word at the centre, counted by hand into every
    level of the chain (line 11's fifth token is empty); the other lines are the statistics."""
    model = nbspark.fit(None, tmp_path / "m", settings={"train.path": str(FIXTURES / "ngrams.txt")})
    events: dict = {}
    for line in (FIXTURES / "ngrams.txt").read_text().splitlines():
        gram, _, count = line.partition("\t")
        tokens = gram.lower().split(" ")
        if not (count.isdigit() and len(tokens) == 5 and tokens[2] in ("affect", "effect")):
            continue
        a, b, c, d, e = tokens
        for subset, context in (
            ("ABDE", (a, b, d, e)),
            ("ABD", (a, b, d, "")),
            ("BD", ("", b, d, "")),
            ("B", ("", b, "", "")),
            ("", ("", "", "", "")),
        ):
            events[(subset, *context, c)] = events.get((subset, *context, c), 0) + int(count)
    assert _table(tmp_path / "m") == sorted((*k, n) for k, n in events.items())
    stats = model.manifest["stats"]
    assert (stats["lines_read"], stats["examples"], stats["malformed"]) == (11, 7, 3)
    assert stats["lines_not_in_confusion_set"] == 1 and stats["weight"] == 34


def test_an_update_in_process_adds_to_the_model_and_refuses_a_file_twice(tmp_path, capsys):
    lines = (FIXTURES / "ngrams.txt").read_text().splitlines(keepends=True)
    (tmp_path / "a.txt").write_text("".join(lines[:4]))
    (tmp_path / "b.txt").write_text("".join(lines[4:]))
    everything = nbspark.fit(None, tmp_path / "all", settings={"train.path": str(FIXTURES / "ngrams.txt")})
    assert (
        main(
            [
                "train",
                "--in-process",
                "--set",
                f"train.path={tmp_path / 'a.txt'}",
                "--out",
                str(tmp_path / "m"),
            ]
        )
        == 0
    )
    args = [
        "train",
        "--in-process",
        "--set",
        f"train.path={tmp_path / 'b.txt'}",
        "--update",
        str(tmp_path / "m"),
    ]
    assert main(args) == 0
    assert _table(tmp_path / "m") == _table(tmp_path / "all")
    assert nbspark.load(tmp_path / "m").manifest["label_counts"] == everything.manifest["label_counts"]
    capsys.readouterr()
    assert main(args) == 1  # b.txt again: refused, the model as it was
    assert "b.txt was already counted into this model" in capsys.readouterr().err
    assert _table(tmp_path / "m") == _table(tmp_path / "all")


def test_a_google_shards_blank_lines_are_no_records_in_failfast_mode(tmp_path):
    """A shard with a white-space line and an empty last line, as an n-gram file's are: counted as
    ``blank_lines``, none as malformed, and a failfast train (it stopped at the first, as malformed
    of fields) counts the table of the shard without them."""
    lines = (FIXTURES / "google_v3.txt").read_text(encoding="utf-8").splitlines()
    well_formed = [line for line in lines if "\t" in line and "," in line.split("\t")[1]][:4]
    (tmp_path / "clean.txt").write_text("\n".join(well_formed) + "\n", encoding="utf-8")
    blank = "\n".join([well_formed[0], " \t", *well_formed[1:], ""]) + "\n"
    (tmp_path / "blank.gz").write_bytes(gzip.compress(blank.encode()))
    stats = {}
    for name in ("clean.txt", "blank.gz"):
        cfg = load_config(
            None, {"train.format": "google_v3", "train.path": str(tmp_path / name), "mode": "failfast"}
        )
        stats[name] = train_in_process(cfg, BACKOFF, tmp_path / name.split(".")[0])["stats"]
    assert stats["blank.gz"] == {
        **stats["clean.txt"],
        "lines_read": stats["clean.txt"]["lines_read"] + 2,
        "blank_lines": 2,
    }
    assert "malformed" not in stats["blank.gz"] and stats["clean.txt"]["examples"] > 0
    assert _table(tmp_path / "blank") == _table(tmp_path / "clean")


def test_failfast_in_process_names_the_first_malformed_line(tmp_path):
    cfg = load_config(None, {"train.path": str(FIXTURES / "ngrams.txt"), "mode": "failfast"})
    with pytest.raises(InputError, match=r"ngrams\.txt:8.*malformed line \(tokens\)"):
        train_in_process(cfg, BACKOFF, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_a_backoff_model_counts_in_process_below_its_own_bound(tmp_path):
    """16 MB for a backoff model (its count table holds about five rows a line: memory decides),
    for ``nbspark train`` by itself and a stream's batches alike; 64 MB for naive Bayes."""
    from nbspark.settings.capabilities import in_process_fits
    from nbspark.spine.streaming import plan_stream

    books = load_config(None, {})
    assert in_process_fits(books, 16_000_000) is None
    assert in_process_fits(books, 16_000_001) == (
        "16.0 MB to read (the input, and a model to update), over the 16 MB counted in process"
    )
    assert (
        in_process_fits(load_config(None, {"task": "naive_bayes", "train.format": "sms"}), 64_000_000) is None
    )
    (tmp_path / "in").mkdir()
    assert plan_stream(books, BACKOFF, tmp_path / "m", tmp_path / "in").in_process_below_mb == 16
    assert (
        plan_stream(
            books, BACKOFF, tmp_path / "m", tmp_path / "in", in_process_below_mb=0
        ).in_process_below_mb
        == 0
    )


def test_the_summary_says_how_many_reuters_stories_another_split_held(tmp_path, capsys):
    """mini.sgm's stories 2 and 4 are TEST, 1 TRAIN and 3 NOT-USED (tests/data/README.md): the test
    split uses two and leaves two to the other splits; story 2's body holds the one window."""
    sets = ["--set", "train.format=reuters", "--set", f"train.path={FIXTURES / 'mini.sgm'}"]
    assert (
        main(["train", "--in-process", *sets, "--set", "train.splits=TEST", "--out", str(tmp_path / "m")])
        == 0
    )
    out = capsys.readouterr().out
    assert "stories read: 4   used: 2   left out: 2 in splits other than train.splits\n" in out
    assert "examples: 1   total weight: 1" in out and "also: empty bodies 1" in out


def test_a_query_of_a_backoff_model_writes_its_json_to_stdout_with_json_dash(tmp_path, capsys):
    """No JVM: a model's query is answered in process. The fixture's B = not holds affect 9 and
    effect 1 (tests/data/README.md); ``--json -`` puts the answer's JSON alone on stdout."""
    nbspark.fit(None, tmp_path / "m", settings={"train.path": str(FIXTURES / "ngrams.txt")})
    assert main(["query", "--model", str(tmp_path / "m"), "--B", "not", "--C", "_", "--json", "-"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["matching_count"] == 10 and answer["all_count"] == 34
    assert [(t["values"]["C"], t["count"]) for t in answer["top"]] == [("affect", 9), ("effect", 1)]
    # two words in one position never match (tokens are cut at spaces): said, not a bare 0
    assert main(["query", "--model", str(tmp_path / "m"), "--A", "would not", "--C", "_", "--json", "-"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["matching_count"] == 0 and answer["note"] == (
        "a position holds one word, so 'would not' (a space in it) cannot match; give each word its own "
        "position (--A would --B not)"
    )


@pytest.mark.spark
@pytest.mark.parametrize(
    "name", ["ngrams", "text", "paragraphs", "reuters", "reuters-bz2", "google_v2", "google_v3-gz"]
)
def test_every_backoff_test_input_scored_in_process_is_the_spark_jobs(spark, tmp_path, name):
    """``nbspark classify`` of a backoff model in process (``spark`` None) writes what the Spark job
    writes: the same metrics (statistics, malformed lines and their numbers, levels, distinct
    examples), report and predictions, of every backoff input read as a test input."""
    from nbspark.backoff.jobs import plan_backoff_classify, run_backoff_classify

    given = _inputs(tmp_path)[name]
    test = {"test.format": "ngrams"} | {
        k.replace("train.", "test."): v for k, v in given.items() if k.startswith("train.")
    }
    cfg = load_config(
        None,
        {"train.path": str(FIXTURES / "ngrams.txt"), "worked_examples": "does not _ the outcome", **test},
    )
    train_in_process(cfg, BACKOFF, tmp_path / "m")
    plans = {
        where: plan_backoff_classify(
            cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / where, False, where
        )
        for where in ("spark", "here")
    }
    assert (plans["spark"].in_process, plans["here"].in_process) == (False, True)
    run_backoff_classify(spark, plans["spark"])
    run_backoff_classify(None, plans["here"])
    assert classify_results(tmp_path / "here") == classify_results(tmp_path / "spark")
    assert classify_results(tmp_path / "here")[0]["examples"] > 0


@pytest.mark.spark
def test_failfast_scored_in_process_stops_as_the_spark_job_does(spark, tmp_path):
    from nbspark.backoff.jobs import plan_backoff_classify, run_backoff_classify

    cfg = load_config(
        None,
        {"test.format": "ngrams", "test.path": str(FIXTURES / "ngrams.txt"), "mode": "failfast"},
    )
    train_in_process(load_config(None, {"train.path": str(FIXTURES / "ngrams.txt")}), BACKOFF, tmp_path / "m")
    test = resolve_input(cfg.test, None)
    errors = failures_in_spark_and_here(
        spark,
        tmp_path,
        lambda out, where: plan_backoff_classify(cfg, tmp_path / "m", test, out, False, where),
        run_backoff_classify,
    )
    assert errors[0] == errors[1] and "ngrams.txt:8" in errors[0]


def test_classify_scores_a_backoff_model_in_process_by_itself(tmp_path):
    """No JVM (no spark mark, and none in the command's process): ``nbspark classify`` of a backoff
    model on local test data that fit scores in process, and says so; the fixture's four Reuters
    examples counted by hand (tests/backoff/test_jobs.py: the Spark job's same numbers)."""
    nbspark.fit(None, tmp_path / "m", settings={"train.path": str(FIXTURES / "ngrams.txt")})
    args = ["classify", "--model", str(tmp_path / "m"), "--set", f"test.path={FIXTURES / 'mini.sgm'}"]
    status, no_jvm, err = command_alone([*args, "--set", "worked_examples=", "--out", str(tmp_path / "r")])
    assert (status, no_jvm) == (0, True), err
    assert "scoring in process (--spark scores with Spark)" in err
    metrics = json.loads((tmp_path / "r" / "metrics.json").read_text())
    assert (metrics["examples"], metrics["correct"], metrics["distinct_examples"]) == (4, 2, 4)
    levels = {lv["name"]: (lv["examples"], lv["correct"]) for lv in metrics["levels"]}
    assert levels == {"ABDE": (0, 0), "ABD": (1, 1), "BD": (1, 0), "B": (1, 0), "∅": (1, 1)}
    assert metrics["input_stats"]["stories_read"] == 4 and metrics["input_stats"]["empty_bodies"] == 1
    rows = {r["source"]: r for r in pq.read_table(str(tmp_path / "r" / "predictions")).to_pylist()}
    assert sorted(rows) == ["reuters:1#2", "reuters:1#8", "reuters:2#0", "reuters:3#2"]
    p = rows["reuters:1#8"]
    assert (p["gold"], p["predicted"], p["subset"], p["probability"]) == ("effect", "affect", "BD", 0.9)


def test_classify_in_process_is_not_with_spark_settings_or_remote_paths(tmp_path, capsys):
    """``--in-process`` with a test input, model or results directory on another file system started
    a JVM to reach it (and failed there, naming the file system); it is refused before, as train's."""
    with pytest.raises(SystemExit) as exited:
        main(["classify", "--in-process", "--master", "local[1]", "--model", str(tmp_path)])
    assert exited.value.code == 2 and "--master and --conf go to Spark" in capsys.readouterr().err
    local = ["--model", str(tmp_path / "m"), "--out", str(tmp_path / "r")]
    for args, named in (
        (["--set", "test.path=hdfs://nn:8020/x.txt", *local], "test.path hdfs://nn:8020/x.txt"),
        (["--model", "hdfs://nn/m", "--out", str(tmp_path / "r")], "the model hdfs://nn/m"),
        (["--model", str(tmp_path / "m"), "--out", "viewfs://c/r"], "--out viewfs://c/r"),
    ):
        assert main(["classify", "--in-process", *args]) == 2
        assert (
            f"in process, nbspark reads local files only, not {named}: use Spark" in capsys.readouterr().err
        )


def test_a_compressed_reuters_file_is_read_as_the_plain_one(tmp_path):
    """A ``.sgm.gz`` was read as its gzip bytes: no story, and "no window centred on affect, effect"
    (no JVM here: the Spark readers' own functions, equal to Spark's above)."""
    (tmp_path / "mini.sgm.gz").write_bytes(gzip.compress((FIXTURES / "mini.sgm").read_bytes()))
    (tmp_path / "cut.sgm.gz").write_bytes(gzip.compress((FIXTURES / "mini.sgm").read_bytes())[:-30])
    stats = []
    for path in (FIXTURES / "mini.sgm", tmp_path / "mini.sgm.gz"):
        settings = {"train.format": "reuters", "train.path": str(path)}
        stats.append(
            nbspark.fit(None, tmp_path / path.name.replace(".", "_"), settings=settings).manifest["stats"]
        )
    assert stats[1] == stats[0] and stats[0]["stories_read"] == 4 and stats[0]["examples"] > 0
    with pytest.raises(InputError, match="cut.sgm.gz: cannot be read as gzip"):
        nbspark.fit(
            None,
            tmp_path / "cut",
            settings={"train.format": "reuters", "train.path": str(tmp_path / "cut.sgm.gz")},
        )
