"""Input files as users have them: hidden names, glob characters, bytes that are not UTF-8."""

import os
import re

import pytest

from nbspark.backoff.jobs import train
from nbspark.errors import InputError
from nbspark.inputs.resolve import resolve_input
from nbspark.inputs.spec import InputSpec
from nbspark.naive_bayes.jobs import train_nb, train_nb_in_process
from nbspark.settings.config import load_config

pytestmark = pytest.mark.spark


@pytest.fixture
def corpus(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "a[1].txt").write_bytes(b"the big effect of it\t3\nla caf\xe9 effect de x\t2\n")
    (d / "b{x},y.txt").write_bytes(b"would not affect the outcome\t4\n")
    (d / "_x.txt").write_bytes(b"hidden effect hidden hidden hidden\t100\n")
    (d / ".y.txt").write_bytes(b"hidden effect hidden hidden hidden\t100\n")
    return d


def test_directory_skips_hidden_files_and_reads_glob_names_literally(spark, corpus, tmp_path):
    inputs = resolve_input(InputSpec("ngrams", str(corpus)), None)
    assert [f.name for f in inputs.files] == ["a[1].txt", "b{x},y.txt"]
    cfg = load_config(None, {"train.path": str(corpus)})
    manifest = train(spark, cfg, inputs, tmp_path / "m")
    stats = manifest["stats"]
    assert stats["lines_read"] == 3 and stats["examples"] == 3 and stats["weight"] == 9
    # the Latin-1 byte 0xE9 is not UTF-8: replaced by U+FFFD and counted, never a crash
    assert stats["decode_replacements"] == 1


def test_single_file_with_glob_characters(spark, corpus, tmp_path):
    cfg = load_config(None, {"train.path": str(corpus / "a[1].txt")})
    manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    assert manifest["stats"]["lines_read"] == 2


def test_every_spark_reader_reads_a_glob_named_path_literally(spark, tmp_path):
    """A table or model at ``x[1]`` beside ``x1``: unescaped, Spark's readers take the name as the
    pattern ``x1`` and read the other one in silence (a density model of ``t[1].csv`` counted
    ``t1.csv``; a model at ``m[1]`` scored by the join scorer with ``m1``'s counts)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nbspark.density.count import read_table
    from nbspark.inputs.files import parquet_frame
    from nbspark.inputs.tables import csv_frame
    from nbspark.storage.locations import location
    from nbspark.storage.tables import read_parquet_checked

    (tmp_path / "t[1].csv").write_text("A,B\n1,2\n3,4\n")
    (tmp_path / "t1.csv").write_text("A,B\n9,9\n")
    table = [location(tmp_path / "t[1].csv")]
    assert sorted(tuple(r) for r in csv_frame(spark, table).collect()) == [("1", "2"), ("3", "4")]
    density = read_table(spark, resolve_input(InputSpec("csv", str(tmp_path / "t[1].csv")), None))
    assert density.count() == 2
    pq.write_table(pa.table({"x": [1, 2, 3]}), tmp_path / "p[1].parquet")
    pq.write_table(pa.table({"x": [7]}), tmp_path / "p1.parquet")
    assert sorted(r.x for r in parquet_frame(spark, [location(tmp_path / "p[1].parquet")]).collect()) == [
        1,
        2,
        3,
    ]
    for name, xs in (("m[1]", [1, 2]), ("m1", [7])):  # two tables, as a model's counts/ are written
        (tmp_path / name).mkdir()
        pq.write_table(pa.table({"x": xs}), tmp_path / name / "part-00000.parquet")
        (tmp_path / name / "_SUCCESS").write_text("")
    got = read_parquet_checked(spark, location(tmp_path / "m[1]"), "x BIGINT", 2)
    assert sorted(r.x for r in got.collect()) == [1, 2]


def test_a_path_with_a_colon_is_refused_before_spark_reads_it_and_read_in_process(spark, tmp_path):
    """Hadoop takes ``a`` in ``a:1.txt`` (or in a directory ``a:b``) for a URI scheme: the run failed
    with "Relative path in absolute URI: a:1.txt" from inside Spark. Python's readers open it."""
    lines = "d1\tx\talpha beta\nd2\ty\tgamma\n"
    for path in (tmp_path / "a:1.txt", tmp_path / "a:b" / "f.txt"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(lines)
        cfg = load_config(None, {"task": "naive_bayes", "train.format": "tsv", "train.path": str(path)})
        with pytest.raises(
            InputError, match=f"^{re.escape(str(path))}: Hadoop's readers cannot open a path "
        ):
            train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
        local = train_nb_in_process(cfg, tmp_path / "local", overwrite=True)
        assert local["stats"]["documents"] == 2


def test_missing_and_empty_inputs(tmp_path):
    with pytest.raises(InputError, match="input does not exist$"):
        resolve_input(InputSpec("ngrams", str(tmp_path / "nope.txt")), None)
    (tmp_path / "5-00001.gz").write_text("")  # a glob is read literally (a[1].txt above), never expanded
    with pytest.raises(
        InputError,
        match=r"5-0000\*\.gz: input does not exist \(a glob pattern is not expanded: give a file, or a "
        r"directory",
    ):
        resolve_input(InputSpec("google_v3", str(tmp_path / "5-0000*.gz")), None)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "_hidden").write_text("x")
    with pytest.raises(InputError, match="no input files"):
        resolve_input(InputSpec("ngrams", str(tmp_path / "empty")), None)
    with pytest.raises(InputError, match=r"no input files \(\*\.sgm"):
        resolve_input(InputSpec("reuters", str(tmp_path / "empty")), None)


@pytest.mark.parametrize(
    "files, says",
    [
        (["a.parquet", "b.parquet", "_SUCCESS", ".a.parquet.crc"], None),  # a flat table
        (["k=1/a.parquet", "k=2/a.parquet", "k=2/_tmp/x.parquet"], None),  # partitions: Spark's k column
        (["a.parquet", "old/b.parquet"], "b.parquet lies in old, and 'old' is not a partition"),
        (["2023/a.parquet", "2024/a.parquet"], "a.parquet lies in 2023, and '2023' is not a partition"),
        (["k=1/a.parquet", "k=1/b/a.parquet"], "a.parquet lies in k=1/b, and 'b' is not a partition"),
        (["a.parquet", "k=1/a.parquet"], "the table's files lie at 2 depths"),
    ],
    ids=["flat", "partitions", "beside-a-folder", "folders", "folder-in-partition", "two-depths"],
)
def test_a_parquet_layout_that_spark_and_pyarrow_read_apart_is_refused(tmp_path, files, says):
    """Spark reads files beside a plain subdirectory without it (pyarrow with it), and refuses a
    directory of plain subdirectories: refused before either reads, so both read the same rows."""
    for name in files:
        (tmp_path / "t" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "t" / name).write_bytes(b"PAR1")
    spec = InputSpec(format="parquet", path=str(tmp_path / "t"))
    if says is None:
        assert resolve_input(spec, None).files[0].name == "t"
    else:
        with pytest.raises(InputError, match=says):
            resolve_input(spec, None)


@pytest.mark.parametrize(
    "option, says",
    [
        (
            ["--set", "train.path=s3a://bucket/5grams/"],
            "no Hadoop FileSystem for the s3a:// scheme in this Spark installation; add the S3A connector",
        ),
        (["--set", "train.path=nosuch://bucket/5grams/"], "no Hadoop FileSystem for the nosuch:// scheme"),
        (
            ["--data-dir", "hdfs://nn.invalid:8020/corpora"],
            "hdfs://nn.invalid:8020/corpora: cannot reach its file system",
        ),
    ],
)
def test_unreachable_storage_is_refused_with_one_line_naming_the_scheme(option, says, tmp_path, capsys):
    """A scheme without its connector (pyspark ships no S3A), or a file system that cannot be
    reached, is one line and exit 1 before the SparkSession starts; never looked up as a path under
    the data dir, never a hint to download the corpora."""
    from nbspark.app.cli import train_main

    assert train_main([*option, "--out", str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and "fetch_data" not in err[0], err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("scheme, says", [("hdfs", "4000 millis timeout"), ("webhdfs", "Read timed out")])
def test_a_server_that_does_not_answer_is_one_line_within_seconds(scheme, says, tmp_path, capsys):
    """A server that takes the connection and never answers (a listening socket nobody accepts
    from) held Hadoop's defaults for 122 s (60 s a call, twice): the first look waits 4 s and does
    not retry; a timeout the user sets is theirs (the nbspark command's --conf)."""
    import socket
    import time

    from nbspark.app.cli import train_main

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        uri = f"{scheme}://127.0.0.1:{silent.getsockname()[1]}/corpora"
        start = time.monotonic()
        assert train_main(["--data-dir", uri, "--out", str(tmp_path / "m")]) == 1
        took = time.monotonic() - start
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{uri}: cannot reach its file system" in err[0] and says in err[0], err
    assert "raise the first look's timeouts" in err[0]
    assert took < 30, took  # the probe's 3 s + 4 s, not Hadoop's minutes
    assert not (tmp_path / "m").exists()


def test_an_input_directory_costs_one_listing(spark, tmp_path, monkeypatch):
    """Names, kinds, sizes and times of an input's files come from the directory's one listing, on
    both storages: choosing the Google reader and the --update signatures look nothing up per
    file (on an object store each lookup is a request: 19,423 shards for Google Books v3)."""
    import os
    from types import SimpleNamespace

    from nbspark.backoff.google_filter import _whole_files
    from nbspark.inputs.files import list_files
    from nbspark.spine.training import input_signatures
    from nbspark.storage.hadoop import HadoopStorage
    from nbspark.storage.locations import LocalStorage, Location, use_hadoop

    d = tmp_path / "in"
    (d / "sub.gz").mkdir(parents=True)  # a directory is not an input file, whatever its name
    (d / "_SUCCESS").write_text("")
    for i in (2, 0, 1):
        (d / f"p{i}.gz").write_bytes(b"x" * (i + 1))
    expected = [
        [str(d / f"p{i}.gz"), i + 1, os.stat(d / f"p{i}.gz").st_mtime_ns // 1_000_000] for i in range(3)
    ]
    for storage in (LocalStorage(), use_hadoop()):
        files = list_files(Location("file:" + str(d), storage))
        with monkeypatch.context() as m:
            for cls in (LocalStorage, HadoopStorage):
                for name in ("stat", "is_file", "is_dir", "exists"):
                    m.setattr(cls, name, lambda *a, **k: pytest.fail("a lookup per file"))
            assert input_signatures(SimpleNamespace(files=files)) == expected
            assert _whole_files(spark, files, 256) == files


def test_an_input_directory_is_read_with_its_subdirectories(spark, tmp_path):
    """Files in subdirectories are inputs too (they were skipped without a word); hidden names
    (``_``, ``.``) are skipped at every depth with all under them, and so are nbspark outputs; a
    link to a directory is followed unless it loops back to one above it. The same list from both
    storages."""
    from nbspark.inputs.files import list_files
    from nbspark.storage.locations import LocalStorage, Location, use_hadoop

    d = tmp_path / "in"
    model = (
        "a/old_model/_nbspark.json",
        "a/old_model/manifest.json",
        "a/old_model/counts/part-00000.parquet",
    )  # an nbspark output: not input
    for name in (
        "b.txt",
        "a/z.txt",
        "a/deep/er/y.txt",
        "a_b/x.txt",
        "_tmp/no.txt",
        ".git/no.txt",
        "a/.hidden/no.txt",
        "a/_SUCCESS",
        *model,
    ):
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(name)
    (d / "empty").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "w.txt").write_text("w")
    (d / "a" / "linked").symlink_to(tmp_path / "outside")
    (d / "a" / "deep" / "loop").symlink_to(d / "a")
    expected = ["a/deep/er/y.txt", "a/linked/w.txt", "a/z.txt", "a_b/x.txt", "b.txt"]
    assert [
        os.path.relpath(str(f), d) for f in list_files(Location("file:" + str(d), LocalStorage()))
    ] == expected
    assert [
        os.path.relpath(str(f), d) for f in list_files(Location("file:" + str(d), use_hadoop()))
    ] == expected
    assert list_files(Location("file:" + str(d / "a" / "z.txt"), LocalStorage()))[0].name == "z.txt"


def test_first_malformed_lines_stop_at_the_last_one(spark, tmp_path):
    """The scan for the first malformed lines reads no partition after the last of them: the
    statistics say how many there are (here a corrupt file after them is never opened)."""
    from nbspark.inputs.parsers import MalformedLine
    from nbspark.inputs.stats import first_malformed_lines
    from nbspark.storage.locations import location

    (tmp_path / "a.txt").write_text("good\nbad one\ngood\nbad two\n")
    (tmp_path / "b.gz").write_bytes(b"not gzip at all")

    def parse(line):
        if line.startswith("bad"):
            raise MalformedLine("fields", line)

    files = [location(tmp_path / "a.txt"), location(tmp_path / "b.gz")]
    found = first_malformed_lines(spark.sparkContext, files, parse, {"malformed": 2}, "permissive", 20)
    assert [(b["line_number"], b["line"]) for b in found] == [(2, "bad one"), (4, "bad two")]


def test_ngram_lines_names_every_line_by_its_own_file_and_offset(spark, tmp_path):
    """One RDD over many files: each line carries its own file (odd names, an empty file, a file
    cut into many splits) and its exact byte offset, as a per-file read gives them."""
    from nbspark.inputs.files import ngram_lines
    from nbspark.storage.locations import location

    contents = {
        "a b.txt": b"one\n",
        "c[1],d.txt": b"two\r\nthree\n",
        "empty.txt": b"",
        "\xe9%20.txt".encode("latin-1").decode("latin-1"): b"four",
        "many.txt": b"".join(b"line %d\n" % i for i in range(40)),
    }
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
    expected = []
    for name, data in sorted(contents.items()):
        offset = 0
        for line in data.splitlines(keepends=True):
            expected.append((str(tmp_path / name), offset, line.rstrip(b"\r\n").decode()))
            offset += len(line)
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set("mapreduce.input.fileinputformat.split.maxsize", "64")  # many.txt: 5 splits
    try:
        rdd = ngram_lines(spark.sparkContext, [location(tmp_path / n) for n in sorted(contents)])
        assert rdd.getNumPartitions() == 3 + 5  # the empty file has no split (Spark drops empty splits)
        assert sorted(rdd.collect()) == sorted(expected)
    finally:
        conf.unset("mapreduce.input.fileinputformat.split.maxsize")


def test_sgml_texts_reads_many_files_in_few_partitions_each_named_by_its_path(spark, tmp_path):
    """One binaryFiles over every file: 40 small files share partitions (not a task each), and
    each record still carries its own file's name and bytes, odd names and an empty file included."""
    from nbspark.inputs.files import sgml_texts
    from nbspark.storage.locations import location

    contents = {f"doc {i:02d}[x]{{y}}.txt": b"text of %d\n" % i for i in range(38)}
    contents["\xe9%20.sgm"] = b"<REUTERS>\xe9</REUTERS>"
    contents["empty.txt"] = b""
    for name, data in contents.items():
        (tmp_path / name).write_bytes(data)
    rdd = sgml_texts(spark.sparkContext, [location(tmp_path / n) for n in sorted(contents)])
    assert rdd.getNumPartitions() < 10
    assert sorted(rdd.collect()) == sorted((str(tmp_path / n), data) for n, data in contents.items())


def test_binary_files_gives_each_file_of_4_mb_or_more_a_task_of_its_own(spark, tmp_path):
    """binaryFiles packs files until a partition passes total bytes / minPartitions: with the file
    count as minPartitions, two 5 MB shards were one task, and half the cores idled."""
    from nbspark.inputs.files import binary_files
    from nbspark.storage.locations import location

    for name in ("a.gz", "b.gz"):
        (tmp_path / name).write_bytes(bytes(5 << 20))
    rdd = binary_files(spark.sparkContext, [location(tmp_path / "a.gz"), location(tmp_path / "b.gz")])
    assert rdd.getNumPartitions() == 2
    assert sorted((path.rsplit("/", 1)[1], len(data)) for path, data in rdd.collect()) == [
        ("a.gz", 5 << 20),
        ("b.gz", 5 << 20),
    ]
    # two files per core or more: two to a task, the second read while the first is scanned
    for name in ("c.gz", "d.gz"):
        (tmp_path / name).write_bytes(bytes(5 << 20))
    assert (
        binary_files(spark.sparkContext, [location(tmp_path / f"{n}.gz") for n in "abcd"]).getNumPartitions()
        == 2
    )


def test_an_input_that_is_neither_a_file_nor_a_directory_is_named_so(tmp_path):
    """/dev/null, a FIFO or a shell's <(cmd) exist: "no such file or directory" said otherwise."""
    import os

    from nbspark.inputs.files import list_files
    from nbspark.storage.locations import LocalStorage, Location

    os.mkfifo(tmp_path / "fifo")
    for path in (tmp_path / "fifo", "/dev/null"):
        with pytest.raises(ValueError, match=r": neither a file nor a directory \(a pipe or a device\)$"):
            list_files(Location(f"file:{path}", LocalStorage()))
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        list_files(Location(f"file:{tmp_path / 'none'}", LocalStorage()))
