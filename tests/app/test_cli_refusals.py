"""The cases a hostile round of testing broke (issue 14), each refused with one line or counted;
every test here failed before: the run went on with a wrong answer, or ended in a traceback."""

import json
import os
import re
import shutil
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from nbspark.app.cli import job_failure, train_main
from nbspark.backoff.jobs import BACKOFF, classify, train
from nbspark.errors import InputError, OutputError
from nbspark.inputs.resolve import resolve_input
from nbspark.naive_bayes.jobs import train_nb
from nbspark.settings.config import load_config
from nbspark.spark.session import CACHED_PARTITIONS
from nbspark.spine.training import read_counts
from nbspark.storage.locations import location
from nbspark.storage.tables import check_output, staged_output
from tests.conftest import ROOT


@pytest.fixture
def model(spark, fixtures, tmp_path):
    cfg = load_config(
        None,
        {
            "train.path": str(fixtures / "ngrams.txt"),
            "test.path": str(fixtures / "mini.sgm"),
            "rows_per_file": "10",
        },
    )
    spark.conf.set(CACHED_PARTITIONS, "false")  # the cached aggregate keeps the tests' 2 shuffle partitions
    try:
        manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    finally:
        spark.conf.unset(CACHED_PARTITIONS)
    parts = sorted((tmp_path / "m" / "counts").glob("part-*.parquet"))
    assert len(parts) >= 2  # 28 rows, at most 10 a file, in 2 partitions
    return cfg, manifest, tmp_path / "m", parts


def rewrite(part, table):
    pq.write_table(table, part)
    crc = part.parent / f".{part.name}.crc"
    if crc.exists():
        crc.unlink()


def test_a_renamed_or_dropped_column_in_the_last_part_file_is_refused(spark, model, tmp_path):
    """Spark infers the schema from one footer: the last file's renamed column read as NULLs (407 bindings,
    not 401)."""
    cfg, manifest, out, parts = model
    table = pq.read_table(parts[-1])
    rewrite(parts[-1], table.rename_columns(["lable" if n == "label" else n for n in table.column_names]))
    with pytest.raises(OutputError, match=rf"{parts[-1].name}: column 'label' is missing"):
        read_counts(spark, out, BACKOFF, manifest)
    with pytest.raises(OutputError, match="column 'label' is missing"):
        classify(spark, cfg, out, resolve_input(cfg.test, None), tmp_path / "r")
    rewrite(parts[-1], table.drop_columns(["d"]))
    with pytest.raises(OutputError, match=rf"{parts[-1].name}: column 'd' is missing"):
        read_counts(spark, out, BACKOFF, manifest)


def test_a_duplicated_stray_or_truncated_part_file_is_refused(spark, model):
    cfg, manifest, out, parts = model
    counts = out / "counts"
    copy = counts / parts[0].name.replace("part-00000", "part-00099")
    shutil.copy(parts[0], copy)
    with pytest.raises(
        OutputError,
        match=r"holds \d+ rows, its manifest recorded \d+; a part file is missing, extra or damaged",
    ):
        read_counts(spark, out, BACKOFF, manifest)
    copy.unlink()
    (counts / "extra.parquet").write_bytes(parts[0].read_bytes())
    with pytest.raises(OutputError, match="extra.parquet: not a part file of this table"):
        read_counts(spark, out, BACKOFF, manifest)
    (counts / "extra.parquet").unlink()
    data = parts[0].read_bytes()
    parts[0].write_bytes(data[: len(data) // 2])
    with pytest.raises(OutputError, match=rf"{parts[0].name}: not a readable Parquet file"):
        read_counts(spark, out, BACKOFF, manifest)


@pytest.mark.spark
def test_an_output_that_cannot_be_created_is_refused_before_any_work(tmp_path, capsys, fixtures):
    """It used to be found after the whole job, as FileExistsError or OSError: [Errno 30]."""
    (tmp_path / "FILE").write_text("x")
    with pytest.raises(OutputError, match=r"cannot be created, .*FILE is a file"):
        check_output(tmp_path / "FILE" / "model", False)
    code = train_main(
        ["--set", f"train.path={fixtures / 'ngrams.txt'}", "--out", str(tmp_path / "FILE" / "model")]
    )
    assert code == 1 and "FILE is a file" in capsys.readouterr().err
    if os.geteuid() != 0:  # root writes anywhere; a read-only mount is checked the same way (os.access)
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        with pytest.raises(OutputError, match="is not writable"):
            check_output(ro / "model", False)


def test_an_empty_out_is_refused(capsys):
    """``--out ""`` used to fall back to the config's default directory; an empty ``train.path``,
    ``--ngrams`` or ``--watch`` was the data directory itself, every corpus in it."""
    with pytest.raises(SystemExit) as info:
        train_main(["--out", ""])
    assert (
        info.value.code == 2 and "--out must name a directory, got an empty string" in capsys.readouterr().err
    )
    with pytest.raises(SystemExit) as info:
        train_main(["--set", "train.path=", "--out", "x"])
    assert "train.path must name a file or a directory, got an empty string" in capsys.readouterr().err
    from nbspark.app.cli import query_main
    from nbspark.app.stream import stream_main

    for main_, argv, says in (
        (query_main, ["--ngrams", "", "--A", "would"], "--ngrams must name a file or a directory"),
        (stream_main, ["--watch", " ", "--model", "m"], "--watch must name a directory"),
    ):
        with pytest.raises(SystemExit) as info:
            main_(argv)
        assert info.value.code == 2 and says in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, says",
    [
        (
            ["train", "--in-process", "--conf", "spark.executor.memory=2g", "--out", "x"],
            "--master and --conf go to Spark, and --in-process starts none",
        ),
        (["train", "--in-process", "--master", "local[1]", "--out", "x"], "--in-process starts none"),
        (
            ["check", "--model", "m", "--evaluate", "reuters:r", "--out", "o", "--factor", "20"],
            "--factor: not used by --evaluate, which reports every factor",
        ),
        (
            ["check", "--model", "m", "--evaluate", "reuters:r", "--out", "o", "--json", "--fail-on-flag"],
            "--json, --fail-on-flag: not used by --evaluate",
        ),
        (
            ["check", "--model", "m", "--out", "o", "essay.txt"],
            "--out: not used by checking files (they go with --evaluate)",
        ),
        (
            ["stream", "--compact", "--model", "m", "--watch", "in", "--trigger-seconds", "3"],
            "--compact folds the model's deltas and exits: --watch, --trigger-seconds would be ignored",
        ),
        (  # the trigger was ignored in silence; the default's value given explicitly too
            ["stream", "--watch", "in", "--model", "m", "--available-now", "--trigger-seconds", "5"],
            "--trigger-seconds paces a running stream; --available-now counts what is there and stops",
        ),
        (  # it wrote a file named '-' in the working directory
            ["stream", "--watch", "in", "--model", "m", "--progress", "-"],
            "--progress names a file rewritten whole each batch, not - (each batch is logged on stderr)",
        ),
        (
            ["stream", "--watch", "in", "--model", "m", "--set", "train.path=elsewhere"],
            "--set train.path would be ignored: a stream counts the files moved into --watch",
        ),
        (
            ["curve", "--set", "task=density", "--conf", "spark.executor.memory=2g"],
            "--master and --conf go to Spark, and a density curve runs in process without it",
        ),
        (
            ["query", "--model", "m", "--B", "_", "--master", "local[1]"],
            "--master and --conf go to Spark, and a model's query is answered without it",
        ),
    ],
)
def test_an_option_the_run_would_ignore_is_refused(capsys, argv, says):
    """Each was accepted and had no effect: no Spark starts in process; an evaluation runs every
    factor; a compaction runs no stream."""
    from nbspark.app.command import main

    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2 and says in capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.parametrize(
    "name, message", [("files", "is not one of the classification tables"), ("diabetes", "is not one of")]
)
def test_an_sklearn_input_that_is_not_a_classification_table_is_refused(capsys, name, message):
    """``--set train.path=files`` or ``diabetes`` used to end in a TypeError or AttributeError."""
    code = train_main(
        ["--config", str(ROOT / "conf/experiments/wine_gaussian.toml"), "--set", f"train.path={name}"]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1 and message in err[0] and "Traceback" not in err[0]


@pytest.mark.parametrize(
    "option, says",
    [
        (["--trigger-seconds", "nan"], "--trigger-seconds must be a finite number, got nan"),
        (["--trigger-seconds", "inf"], "--trigger-seconds must be a finite number, got inf"),
        (["--trigger-seconds", "0"], "--trigger-seconds must be > 0, got 0.0"),
        (["--max-files-per-batch", "0"], "--max-files-per-batch must be >= 1, got 0"),
        (["--compact-every", "0"], "--compact-every must be >= 1, got 0"),
        (  # a naive Bayes stream's bound (a backoff stream has none)
            ["--set", "task=naive_bayes", "--set", "train.format=sms", "--in-process-below", "-5"],
            "--in-process-below must be >= 0, got -5.0",
        ),
    ],
)
def test_a_streams_numbers_are_refused_before_spark_starts(tmp_path, capsys, monkeypatch, option, says):
    """``nan`` and ``inf`` seconds reached Spark, which failed on them; 0 files a batch and a
    negative bound were refused only once the JVM had started."""
    import nbspark.app.stream as stream

    monkeypatch.setattr(stream, "use_hadoop", lambda: pytest.fail("the JVM was started"))
    with pytest.raises(SystemExit) as info:
        stream.stream_main(["--watch", str(tmp_path), "--model", str(tmp_path / "m"), *option])
    assert info.value.code == 2 and capsys.readouterr().err.strip().endswith(f"error: {says}")


def test_toml_paths_of_the_wrong_type_are_one_line_errors(tmp_path, capsys):
    """``path = 5`` or ``model_dir = 5`` used to give a TypeError."""
    for toml in ('[train]\nformat = "ngrams"\npath = 5\n', "model_dir = 5\n"):
        bad = tmp_path / "bad.toml"
        bad.write_text(toml)
        with pytest.raises(SystemExit) as info:
            train_main(["--config", str(bad)])
        assert info.value.code == 2
        assert "must be a string, got int 5" in capsys.readouterr().err


def test_failfast_on_a_table_names_the_row(spark, fixtures, tmp_path):
    """It said ``table at byte 4``, and 4 was a row index."""
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "mixed",
            "nb.label_column": "play",
            "mode": "failfast",
            "nb.numeric_columns": "temperature,humidity",
            "nb.categorical_columns": "outlook,windy",
            "train.format": "csv",
            "train.path": str(fixtures / "weather.csv"),
        },
    )
    # the file (its path, as a line's file is named) and the row in it (its header is row 1, as a
    # spreadsheet counts), and the row's cells
    with pytest.raises(
        Exception,
        match="^" + re.escape(f"{fixtures}/weather.csv row 16: malformed line (numeric): 'outlook=cloudy, "),
    ):
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_tables_malformed_row_names_its_file_as_a_lines_file_is_named(spark, tmp_path, fmt):
    """Spark named a table's file by its percent-encoded URI (``file:/tmp/sp%20ace/t%20%5B1%5D.csv
    row 3``) and the reader in process by its URI (``file:/tmp/…``), where a line's file is its path
    (``/tmp/sp ace/t [1].tsv:3``): now every table reader names it so."""
    import pyarrow as pa

    from nbspark.naive_bayes.jobs import train_nb_in_process

    folder = tmp_path / "sp ace"
    folder.mkdir()
    path = folder / f"t [1].{fmt}"
    if fmt == "csv":
        path.write_text("a,label\n1,x\n2,\n3,y\n")
    else:
        pq.write_table(pa.table({"a": ["1", "2", "3"], "label": ["x", None, "y"]}), path)
    settings = {
        "task": "naive_bayes",
        "nb.model": "categorical",
        "train.format": fmt,
        "train.path": str(folder),
    }
    cfg = load_config(None, settings)
    row = 3 if fmt == "csv" else 2  # a CSV's header is row 1
    for manifest in (
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark"),
        train_nb_in_process(cfg, tmp_path / "here"),
    ):
        (bad,) = manifest["malformed_examples"]
        assert (bad["source"], bad["offset"]) == (f"table:{path}", row)
        assert manifest["label_counts"] == {"x": 1, "y": 1}
    with pytest.raises(InputError, match=re.escape(f"{path} row {row}: malformed line (label)")):
        train_nb(
            spark,
            load_config(None, {**settings, "mode": "failfast"}),
            resolve_input(cfg.train, None),
            tmp_path / "f",
        )


def test_a_failed_spark_job_names_its_root_cause(spark, fixtures, tmp_path):
    """A truncated .gz ended in ``Spark job failed: An error occurred while calling o73.collectToPython.``;
    Spark's own error is now its root cause, and a training run names the file besides
    (``inputs.files.damaged_files_named``: Hadoop's error names none)."""
    import gzip

    data = gzip.compress((fixtures / "ngrams.txt").read_bytes() * 50)
    (tmp_path / "cut.txt.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(Exception) as info:
        spark.sparkContext.textFile(str(tmp_path / "cut.txt.gz")).count()
    line = job_failure(info.value)
    assert line is not None and "An error occurred while calling" not in line
    assert line == "Spark job failed: java.io.EOFException: Unexpected end of input stream", line
    for engine in ("combine", "arrow"):
        cfg = load_config(None, {"train.path": str(tmp_path / "cut.txt.gz"), "engine": engine})
        with pytest.raises(
            InputError, match=f"^{re.escape(str(tmp_path))}/cut.txt.gz: cannot be read as gzip"
        ):
            train(spark, cfg, resolve_input(cfg.train, None), tmp_path / engine)


def test_a_parquet_column_spark_cannot_read_says_what_to_do(spark, tmp_path):
    """Nanosecond timestamps (pandas' and pyarrow's default) stop Spark's Parquet reader with only
    ``[PARQUET_TYPE_ILLEGAL] Illegal Parquet type: INT64 (TIMESTAMP(NANOS,false))``: the line says
    which column kind it is and the two ways out."""
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    times = pa.array([datetime.datetime(2020, 1, 1)] * 2, pa.timestamp("ns"))
    pq.write_table(pa.table({"at": times}), tmp_path / "t.parquet")
    with pytest.raises(Exception) as info:
        spark.read.parquet(str(tmp_path / "t.parquet")).collect()
    line = job_failure(info.value)
    assert line.startswith("Spark job failed: [PARQUET_TYPE_ILLEGAL]") and "\n" not in line
    assert "nanosecond timestamps" in line and "spark.sql.legacy.parquet.nanosAsLong=true" in line


def test_a_csv_header_spark_refuses_is_named_as_in_process(spark, tmp_path, monkeypatch):
    """Spark's reader refuses a header naming a column twice (case aside) or none, and a file whose
    header is not the first file's, as "[FAILED_READ_FILE.NO_HINT] … (caused by … CSV header does
    not conform to the schema.)": the file and the fault in the words of the reader in process.
    A UTF-16 file's header, NULs between its letters, nbspark refuses in the same words. The
    headers are read before Spark's reader runs a task (whose failure its loggers printed twice,
    160 lines, above the line); past ``HEADERS_READ_FIRST`` files, the failed task is said in the
    same words."""
    from nbspark.inputs import tables
    from nbspark.inputs.tables import local_table

    headers = {
        "dup": "a,b,a,label",
        "case": "a,b,A,label",
        "unnamed": "a,,c,label",
    }
    for name, header in headers.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "t.csv").write_text(f"{header}\n1,2,3,x\n")
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "1.csv").write_text("a,b,label\n1,2,x\n")
    (tmp_path / "two" / "2.csv").write_text("a,c,label\n1,2,x\n")
    for name, first in (("u16", ()), ("u16second", ("1.csv",))):  # Excel's "Unicode Text": UTF-16
        (tmp_path / name).mkdir()
        for other in first:
            (tmp_path / name / other).write_text("a,b,label\n1,2,x\n")
        (tmp_path / name / "t.csv").write_bytes("a,b,label\n1,2,x\n".encode("utf-16"))
    (tmp_path / "late").mkdir()  # a file past those read first: Spark's reader finds its header
    (tmp_path / "late" / "1.csv").write_text("a,b,label\n1,2,x\n")
    (tmp_path / "late" / "2.csv").write_text("a,c,label\n1,2,x\n")
    settings = {"task": "naive_bayes", "train.format": "csv", "nb.model": "categorical"}
    lines, failed_jobs = {}, set()
    for name in [*headers, "two", "u16", "u16second", "late"]:
        monkeypatch.setattr(tables, "HEADERS_READ_FIRST", 1 if name == "late" else 32)
        cfg = load_config(None, {**settings, "train.path": str(tmp_path / name)})
        with pytest.raises(Exception) as info:
            train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / f"m-{name}")
        if info.type is not InputError:
            failed_jobs.add(name)
        lines[name] = line = str(info.value) if info.type is InputError else job_failure(info.value)
        with pytest.raises(InputError) as here:
            local_table(location(tmp_path / name).files(), "csv")  # sorted by path
        if name == "late":  # Spark says "the first file's" where the reader in process names it
            assert line == str(here.value).replace("1.csv's", "the first file's")
        else:
            assert line == str(here.value)
    assert failed_jobs == {"late"}
    assert lines["dup"] == f"{tmp_path}/dup/t.csv: the header names column 'a' twice; name each column once"
    assert "'a' twice ('a' and 'A': Spark's reader ignores case)" in lines["case"]
    assert lines["unnamed"].endswith("t.csv: the header leaves column 2 unnamed; name each column")
    for name in ("u16", "u16second"):  # Spark read the header as UTF-8, and said only "no label column"
        assert lines[name] == (
            f"{tmp_path}/{name}/t.csv: the header holds NUL characters: a UTF-16 file? nbspark reads UTF-8 "
            "(iconv -f UTF-16 -t UTF-8)"
        )
    assert lines["two"] == (
        f"{tmp_path}/two/2.csv: its header (a, c, label) is not 1.csv's (a, b, label); the CSV "
        "files of one input share one header"
    )
    assert lines["late"] == (
        f"{tmp_path}/late/2.csv: its header (a, c, label) is not the first file's (a, b, label); the "
        "CSV files of one input share one header"
    )


def test_nan_and_empty_cells_in_a_table_are_counted(spark, tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("x,y,label\n1.0,2.0,a\nnan,3.0,b\n,4.0,a\ninf,1.0,b\n2.0,2.5,a\n")
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "gaussian",
            "train.format": "csv",
            "train.path": str(table),
            "nb.numeric_columns": "x,y",
        },
    )
    manifest = train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    assert manifest["stats"]["documents"] == 5
    assert manifest["stats"]["missing_values"] == 1 and manifest["stats"]["non_finite_values"] == 2


def test_missing_categorical_cells_are_counted_in_the_part_they_belong_to(spark, tmp_path):
    """An empty category was left out of its row without a count, and the held-out rows' empty
    cells were counted in the training part's statistics."""
    from nbspark.inputs.parsers import holdout_part

    rows = [f"{i},{'' if i % 3 == 0 else 'red'},{'' if i % 4 == 0 else i},{'ab'[i % 2]}" for i in range(40)]
    table = tmp_path / "t.csv"
    table.write_text("id,colour,size,label\n" + "\n".join(rows) + "\n")
    test_part = {i for i in range(40) if holdout_part(str(i), 7, 0.25) == "test"}
    assert 0 < len(test_part) < 40
    by_hand = sum((i % 3 == 0) + (i % 4 == 0) for i in range(40) if i not in test_part)
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "mixed",
            "train.format": "csv",
            "train.path": str(table),
            "nb.numeric_columns": "size",
            "nb.categorical_columns": "colour",
            "train.holdout": "0.25",
            "train.seed": "7",
            "train.splits": "train",
        },
    )
    manifest = train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    assert manifest["stats"]["documents"] == 40 - len(test_part)
    assert manifest["stats"]["missing_values"] == by_hand


def test_broken_sgml_stories_are_counted_and_named(spark, fixtures, tmp_path):
    """Broken tags used to merge or drop stories silently (945 of 996 read, nothing counted)."""
    text = (fixtures / "mini.sgm").read_bytes().replace(b"</REUTERS>", b"</REUTER>", 1)
    (tmp_path / "broken.sgm").write_bytes(text)
    cfg = load_config(None, {"train.format": "reuters", "train.path": str(tmp_path / "broken.sgm")})
    manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    assert manifest["stats"]["stories_unreadable"] == 1 and manifest["stats"]["malformed.sgml"] == 1
    assert manifest["malformed_examples"][0]["reason"] == "sgml"


def test_staging_left_by_a_killed_run_is_cleaned_and_a_lost_model_restored(tmp_path):
    """Staging directories left by a SIGKILL used to stay forever."""
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    import socket

    host = socket.gethostname()
    out = tmp_path / "model"
    stale = tmp_path / f".model.staging-{dead}@{host}-0123456789ab"
    stale.mkdir()
    lost = tmp_path / f".model.old-{dead}@{host}-0123456789ab"  # died between its two renames
    lost.mkdir()
    (lost / "manifest.json").write_text(json.dumps({"old": True}))
    live = tmp_path / f".model.staging-{os.getpid()}@{host}-ba9876543210"
    live.mkdir()
    with staged_output(out, "model") as stage:
        assert not stale.exists() and live.exists()
        assert json.loads((out / "manifest.json").read_text()) == {"old": True}  # restored before the new one
        (stage / "x").write_text("new")
    assert (out / "x").read_text() == "new" and live.exists()


def test_small_count_tables_are_few_files(spark, fixtures, tmp_path):
    """The Books table (2.5 MB) used to be written as spark.sql.shuffle.partitions = 200 files."""
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "one")
    assert (
        len(list((tmp_path / "one" / "counts").glob("part-*.parquet"))) == 1 and manifest["count_rows"] == 28
    )
    # ceil(28 / 10) = 3 files at most, but coalescing never adds any: adaptive execution put the
    # tiny cached aggregate in one partition (session.cache_coalescable), so one file
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt"), "rows_per_file": "10"})
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "three")
    assert len(list((tmp_path / "three" / "counts").glob("part-*.parquet"))) == 1
    # a session that keeps its cached plans' partitions (the tests' 2 shuffle partitions): min(3, 2)
    spark.conf.set(CACHED_PARTITIONS, "false")
    try:
        train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "two")
        cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt"), "rows_per_file": "20"})
        train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "still-two")
        cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt"), "rows_per_file": "28"})
        train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "single")
    finally:
        spark.conf.unset(CACHED_PARTITIONS)
    assert int(spark.conf.get("spark.sql.shuffle.partitions")) == 2
    files = {
        name: len(list((tmp_path / name / "counts").glob("part-*.parquet")))
        for name in ("two", "still-two", "single")
    }
    assert files == {"two": 2, "still-two": 2, "single": 1}


def test_small_predictions_are_one_file(spark, fixtures, tmp_path):
    """Predictions used to be one file per input split (22 for Reuters' 22 SGML files); AQE now
    rebalances them by size. Three input files, a few predictions: one file."""
    from nbspark.backoff.jobs import classify

    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(3):
        (corpus / f"{i}.sgm").write_text(
            (fixtures / "mini.sgm").read_text(encoding="latin-1"), encoding="latin-1"
        )
    test = load_config(None, {"train.path": str(fixtures / "ngrams.txt"), "test.path": str(corpus)})
    metrics = classify(spark, test, tmp_path / "m", resolve_input(test.test, None), tmp_path / "r")
    assert metrics["examples"] > 0
    assert len(list((tmp_path / "r" / "predictions").glob("part-*.parquet"))) == 1


def test_a_classify_run_that_scores_nothing_fails_and_writes_nothing(spark, fixtures, tmp_path):
    """A test input with no window of the model's words, or whose every row is malformed, wrote
    results of zero records and exited 0; a training run in the same case is refused."""
    from nbspark.errors import InputError
    from nbspark.naive_bayes.jobs import classify_nb

    model = tmp_path / "m"
    cfg = load_config(None, {"train.path": str(fixtures / "ngrams.txt")})
    train(spark, cfg, resolve_input(cfg.train, None), model)
    (tmp_path / "plain.txt").write_text("Nothing to see here.\n")
    text = load_config(None, {"test.format": "text", "test.path": str(tmp_path / "plain.txt")})
    with pytest.raises(
        InputError,
        match=r"plain.txt: no test examples to score \(no window centred on affect, effect\); nothing "
        r"written$",
    ):
        classify(spark, text, model, resolve_input(text.test, None), tmp_path / "r")
    assert not (tmp_path / "r").exists()
    # every line without its format's TAB: the refusal says what a line of that format holds
    (tmp_path / "spaced.txt").write_text("would not effect the outcome 3\n")
    spaced = load_config(None, {"test.format": "ngrams", "test.path": str(tmp_path / "spaced.txt")})
    with pytest.raises(InputError) as refused:
        classify(spark, spaced, model, resolve_input(spaced.test, None), tmp_path / "r")
    assert str(refused.value).endswith(
        "spaced.txt: no test examples to score (no window centred on affect, effect; 1 malformed records "
        f"skipped (fields=1, the first at {tmp_path}/spaced.txt:1); each ngrams line is the n-gram's words, "
        "space-separated, TAB count); nothing written"
    )
    assert not (tmp_path / "r").exists()

    table = tmp_path / "t.csv"
    table.write_text("x,label\n1.0,a\n2.0,b\n")
    (tmp_path / "unlabelled.csv").write_text("x,label\n1.0,\n3.0,\n")
    nb = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.model": "gaussian",
            "train.format": "csv",
            "train.path": str(table),
            "test.format": "csv",
            "test.path": str(tmp_path / "unlabelled.csv"),
        },
    )
    train_nb(spark, nb, resolve_input(nb.train, None), tmp_path / "nb")
    with pytest.raises(
        InputError,
        match=r"unlabelled.csv: no test documents to score \(no valid document or row; "
        r"2 malformed records skipped \(label=2, the first at .*unlabelled.csv row 2\)\); nothing written$",
    ):
        classify_nb(spark, nb, tmp_path / "nb", resolve_input(nb.test, None), tmp_path / "r")
    assert not (tmp_path / "r").exists()


def test_the_arrow_engines_overflow_comes_back_as_data_not_as_a_failed_task(spark, tmp_path, capsys):
    """The default engine: counts past 2^63 − 1 within one task (a statistics row, ``overflow``) or
    across tasks (Spark's ``try_sum`` gives NULL) end the run with one line, and no task fails: no
    executor log of a worker's traceback and a Java stack (there were 75 lines of it), no retries
    on a cluster."""
    from tests.conftest import spark_submit

    line = "would not affect the outcome\t9223372036854775807\n"
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "a.txt").write_text(line * 2)
    code = train_main(["--set", f"train.path={tmp_path / 'one'}", "--out", str(tmp_path / "m1")])
    assert code == 1 and capsys.readouterr().err.strip().splitlines()[-1].startswith(
        "train.py: error: count overflow"
    )
    (tmp_path / "two").mkdir()
    for name in ("a.txt", "b.txt"):  # a task each
        (tmp_path / "two" / name).write_text(line)
    run = spark_submit("train", "--set", f"train.path={tmp_path / 'two'}", "--out", tmp_path / "m2")
    said = (run.stdout + "\n" + run.stderr).strip().splitlines()  # spark-submit: error lines on stdout
    errors = [x for x in said if x.startswith("train.py: error:")]
    assert run.returncode == 1 and len(errors) == 1 and "error: count overflow" in errors[0], said[-5:]
    assert not [x for x in said if "ERROR" in x or "Traceback" in x or x.startswith("\tat ")], said
    assert not (tmp_path / "m1").exists() and not (tmp_path / "m2").exists()


def test_an_overflow_raised_in_the_driver_is_one_line(spark, tmp_path, capsys):
    """Two counts of 2^63 − 1 summed by the combine engine: the overflow is raised in the driver,
    where it was a Python traceback; now one line, exit 1, and nothing written."""
    path = tmp_path / "big.txt"
    path.write_text("would not affect the outcome\t9223372036854775807\n" * 2)
    out = tmp_path / "m"
    code = train_main(["--set", f"train.path={path}", "--set", "engine=combine", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and not out.exists()
    assert err.strip().splitlines()[-1].startswith("train.py: error: count overflow")
