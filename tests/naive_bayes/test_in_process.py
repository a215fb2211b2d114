"""Training in process (``nbspark train --in-process``, ``nbspark.fit``): no Spark, no JVM, and the
same model as the Spark job's arrow engine, table and manifest."""

import json
import math
import re
from collections import Counter

import pyarrow.parquet as pq
import pytest

import nbspark
from nbspark.app.cli import classify_main
from nbspark.app.command import main
from nbspark.errors import ConfigError, InputError
from nbspark.naive_bayes.jobs import train_nb, train_nb_in_process
from nbspark.settings.config import load_config
from tests.conftest import FIXTURES

CHINA = {"task": "naive_bayes", "nb.tokenizer": "words", "train.format": "tsv"}
#: what a run records of itself, not of the model
VOLATILE = ("created", "seconds", "engine", "updates")


def _table(model) -> list[tuple]:
    rows = pq.read_table(str(model / "counts")).to_pylist()
    return sorted(tuple(r.values()) for r in rows)


def _manifest(model) -> dict:
    manifest = json.loads((model / "manifest.json").read_text())
    return {k: v for k, v in manifest.items() if k not in VOLATILE}


def test_in_process_counts_as_a_plain_python_count(tmp_path):
    """No java on the PATH here (the test has no spark mark): Counter over the fixture's lines, split
    on the first two TABs, labels on commas, words as runs of \\w (tests/data/README.md)."""
    cfg = load_config(None, {**CHINA, "train.path": str(FIXTURES / "china_train.tsv")})
    manifest = train_nb_in_process(cfg, tmp_path / "m")
    yx, docs = Counter(), Counter()
    for line in (FIXTURES / "china_train.tsv").read_text().splitlines():
        parts = line.split("\t", 2)
        labels = [x.strip() for x in parts[1].split(",") if x.strip()] if len(parts) == 3 else []
        for label in labels:
            docs[label] += 1
            yx.update((label, w) for w in re.findall(r"\w+", parts[2].lower()))
    rows = _table(tmp_path / "m")
    assert {(r[1], r[2]): r[4] for r in rows if r[0] == "YX"} == dict(yx)
    assert {r[1]: r[4] for r in rows if r[0] == "Y"} == dict(docs) == {"c": 4, "j": 2}
    assert [r[4] for r in rows if r[0] == "Y=ANY"] == [6]  # documents per label, summed (d8 twice)
    assert {r[1]: r[4] for r in rows if r[0] == "YX=ANY"} == {"c": 11, "j": 6}
    assert manifest["engine"] == "local" and manifest["label_counts"] == {"c": 4, "j": 2}
    assert manifest["features"] == 8 and manifest["count_rows"] == len(rows)
    assert manifest["stats"]["malformed"] == 2 and manifest["stats"]["blank_lines"] == 1
    assert [b["line_number"] for b in manifest["malformed_examples"]] == [5, 6]
    # and it predicts: the textbook's test document
    model = nbspark.load(tmp_path / "m")
    assert list(model.predict(["Chinese Chinese Chinese Tokyo Japan"])) == ["c"]


@pytest.mark.parametrize("model", ["multinomial", "bernoulli", "complement"])
@pytest.mark.parametrize("source", ["china_train.tsv", "china_test_dirty.tsv"])
def test_the_in_process_model_is_the_spark_jobs(spark, tmp_path, model, source):
    """The arrow engine in Spark and the same rule in process: the same table and manifest
    (malformed lines, their line numbers and the statistics included)."""
    _same_model(spark, tmp_path, {**CHINA, "train.path": str(FIXTURES / source), "nb.model": model})


@pytest.mark.parametrize(
    "settings",
    [
        # the Python engines' rule: a hold-out, another tokenizer, a table (mixed, categorical, Gaussian)
        {**CHINA, "train.path": "china_test_dirty.tsv", "train.holdout": "0.5", "train.splits": "train"},
        {**CHINA, "train.path": "china_train.tsv", "nb.tokenizer": "nbspark", "nb.model": "bernoulli"},
        {
            "task": "naive_bayes",
            "train.format": "csv",
            "train.path": "weather.csv",
            "nb.label_column": "play",
            "nb.model": "mixed",
        },
        {
            "task": "naive_bayes",
            "train.format": "csv",
            "train.path": "weather.csv",
            "nb.label_column": "play",
            "nb.model": "categorical",
        },
        {"task": "naive_bayes", "train.format": "sklearn", "train.path": "wine", "nb.model": "gaussian"},
    ],
    ids=["holdout", "tokenizer", "mixed-csv", "categorical-csv", "gaussian-sklearn"],
)
def test_every_naive_bayes_input_in_process_is_the_spark_jobs(spark, tmp_path, settings):
    path = settings["train.path"]
    if settings["train.format"] != "sklearn":
        settings = {**settings, "train.path": str(FIXTURES / path)}
    _same_model(spark, tmp_path, settings)


@pytest.mark.parametrize("name", ["china.tsv.GZ", "china.tsv.Bz2"])
def test_a_compressed_file_is_found_by_its_extension_in_any_case_as_hadoop_finds_it(spark, tmp_path, name):
    """Hadoop's codecs are found on the lower-cased name: Spark read ``a.GZ`` as gzip, and in process
    it was read as its compressed bytes (every line malformed)."""
    import bz2
    import gzip

    text = (FIXTURES / "china_train.tsv").read_bytes()
    packed = gzip.compress(text) if ".GZ" in name else bz2.compress(text)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / name).write_bytes(packed)
    _same_model(spark, tmp_path, {**CHINA, "train.path": str(tmp_path / "in")})
    plain = nbspark.fit(
        None, tmp_path / "plain", settings={**CHINA, "train.path": str(FIXTURES / "china_train.tsv")}
    )
    assert _table(tmp_path / "local") == _table(tmp_path / "plain")
    assert plain.manifest["stats"]["documents"] == 5


@pytest.mark.parametrize("engine", ["arrow", "combine"])
def test_a_gz_cut_short_is_named_by_the_spark_engines_as_in_process(spark, tmp_path, capsys, engine):
    """Hadoop's line reader fails a task on a ``.gz`` cut short with ``java.io.EOFException``, naming
    no file; the run names it in the words of the reader in process."""
    import gzip

    from nbspark.inputs.resolve import resolve_input

    packed = gzip.compress((FIXTURES / "china_train.tsv").read_bytes() * 200)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.tsv.gz").write_bytes(packed)
    (tmp_path / "in" / "b.tsv.gz").write_bytes(packed[: len(packed) // 2])
    cfg = load_config(None, {**CHINA, "engine": engine, "train.path": str(tmp_path / "in")})
    said = f"{tmp_path / 'in' / 'b.tsv.gz'}: cannot be read as gzip (Compressed file ended before"
    with pytest.raises(InputError) as spark_error:
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    with pytest.raises(InputError) as local_error:
        train_nb_in_process(cfg, tmp_path / "local")
    assert str(spark_error.value) == str(local_error.value)
    assert str(spark_error.value).startswith(said)
    assert not (tmp_path / "spark").exists()
    # a classify's test input, by the command (its reader is Spark's)
    train_nb_in_process(
        load_config(None, {**CHINA, "train.path": str(FIXTURES / "china_train.tsv")}), tmp_path / "m"
    )
    test = [f"test.path={tmp_path / 'in'}", "test.format=tsv", "task=naive_bayes", f"engine={engine}"]
    argv = [
        *(a for t in test for a in ("--set", t)),
        "--model",
        str(tmp_path / "m"),
        "--out",
        str(tmp_path / "r"),
    ]
    assert classify_main(argv) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"classify.py: error: {said}")
    assert not (tmp_path / "r").exists()


def test_a_parquet_table_in_process_is_the_spark_jobs(spark, tmp_path):
    """A partitioned table (``shop=…`` directories: a column, as Spark reads them) with a row
    without its label: the same table and manifest, the malformed row named by its file."""
    import pyarrow as pa

    rows = [
        {"color": "red", "size": 1.5, "n": 3, "label": "a"},
        {"color": "blue", "size": 2.5, "n": None, "label": "b"},
        {"color": None, "size": 0.5, "n": 1, "label": "a"},
        {"color": "red", "size": 0.7, "n": 2, "label": None},
    ]
    for shop, part in (("north", rows[:2]), ("south", rows[2:])):
        (tmp_path / "table" / f"shop={shop}").mkdir(parents=True)
        pq.write_table(
            pa.Table.from_pylist(part), str(tmp_path / "table" / f"shop={shop}" / "part-0.parquet")
        )
    settings = {
        "task": "naive_bayes",
        "nb.model": "mixed",
        "train.format": "parquet",
        "train.path": str(tmp_path / "table"),
    }
    _same_model(spark, tmp_path, settings)
    manifest = json.loads((tmp_path / "local" / "manifest.json").read_text())
    assert manifest["columns"]["categorical"] == ["color", "shop"]
    (bad,) = manifest["malformed_examples"]
    assert bad["source"].endswith("shop=south/part-0.parquet") and bad["reason"] == "label"


def _awkward_csv(where, delimiter: bytes = b",") -> None:
    """CSV files as people leave them: gzipped, with numbers written two ways ('01', '1.0'), rows
    shorter and longer than the header, a quote left open at a line's end, a quoted line end, empty
    lines, an empty file, a byte that is not UTF-8, a cell of 200 KB and quotes doubled in a cell;
    their cells separated by ``delimiter`` (no cell holds a comma)."""
    import gzip

    def cut(data: bytes) -> bytes:
        return data.replace(b",", delimiter)

    where.mkdir()
    (where / "a.csv.gz").write_bytes(gzip.compress(cut(b"n,c,label\n1,x,y\n01,x,y\n1.0,z,n\n\n2,z\n")))
    (where / "b.csv").write_bytes(
        cut(b'n,c,label\r\n3,z,n,extra\r\n"4,z,y\r\n5,"two\nlines",n\r\n6,caf\xe9,y\r\n7,')
        + b"w" * 200_000
        + cut(b",n\n")  # over Python's csv field limit
    )
    (where / "c.csv").write_bytes(b"")
    # quotes as RFC 4180 (and Excel, and Python) write them: Spark's default escape kept them doubled
    (where / "d.csv").write_bytes(cut(b'n,"c",label\n8,"say ""hi"" now",y\n9,"""",n\n'))


@pytest.mark.parametrize("model", ["mixed", "categorical"])
def test_an_awkward_csv_in_process_is_read_as_sparks_csv_reader_reads_it(spark, tmp_path, model):
    """Spark's CSV reader (header, PERMISSIVE, a record a line) is the reference: the same cells, so
    the same table and manifest (a gzipped file was read with inferred numbers, '01' and '1' merged;
    a short row, an open quote or a quoted line end stopped the run)."""
    _awkward_csv(tmp_path / "in")
    settings = {
        "task": "naive_bayes",
        "train.format": "csv",
        "train.path": str(tmp_path / "in"),
        "nb.label_column": "label",
        "nb.model": model,
    }
    _same_model(spark, tmp_path, settings)


@pytest.mark.parametrize("delimiter", [";", "\t", "|"])
def test_a_csv_of_another_delimiter_is_the_comma_ones_table(spark, tmp_path, delimiter, caplog):
    """Excel writes ';' between cells where the comma is the decimal mark: read with commas its
    header was one column (no label column; a density model of whole lines). With the input's
    delimiter the awkward files give, in process and in Spark alike, the comma files' table; read
    without it, a warning names the delimiter to set."""
    settings = {
        "task": "naive_bayes",
        "train.format": "csv",
        "nb.label_column": "label",
        "nb.model": "categorical",
    }
    _awkward_csv(tmp_path / "commas")
    comma = load_config(None, {**settings, "train.path": str(tmp_path / "commas")})
    train_nb_in_process(comma, tmp_path / "comma")
    _awkward_csv(tmp_path / "in", delimiter.encode())
    other = {**settings, "train.path": str(tmp_path / "in"), "train.delimiter": delimiter}
    _same_model(spark, tmp_path, other)
    assert _table(tmp_path / "local") == _table(tmp_path / "comma")
    assert _manifest(tmp_path / "local")["stats"] == _manifest(tmp_path / "comma")["stats"]
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "t.csv").write_text(f"a{delimiter}label\nx{delimiter}y\n")
    with pytest.raises(InputError, match=r"no label column 'label'"):
        train_nb_in_process(
            load_config(None, {**settings, "train.path": str(tmp_path / "one")}), tmp_path / "m"
        )
    assert (
        f"{tmp_path}/one/t.csv: its header is one column, {'a' + delimiter + 'label'!r}: are its cells "
        f"separated by {delimiter!r}? Set the input's delimiter (train.delimiter or test.delimiter = "
        f"{delimiter!r})"
    ) in caplog.messages


#: one table, written as Excel writes it in much of Europe (cells separated by ';', a decimal comma,
#: points grouping thousands) and with points: heights and weights are numbers, colour and code
#: categories (code holds '7' and '12' beside 'A1': text), one height missing and one not a number
EUROPE = (
    "height;weight;colour;code;label\n1,75;1.234,5;red;A1;y\n1,6;-0,25;blue;7;n\n;2,5e1;red;12;y\n"
    ",5;900;blue;x;n\n-1,5;1.000.000;red;7;y\nNaN;3,5;blue;x;n\n"
)
POINTS = (
    "height,weight,colour,code,label\n1.75,1234.5,red,A1,y\n1.6,-0.25,blue,7,n\n,25.0,red,12,y\n"
    "0.5,900,blue,x,n\n-1.5,1000000,red,7,y\nNaN,3.5,blue,x,n\n"
)


@pytest.mark.parametrize("model", ["mixed", "gaussian"])
def test_numbers_written_with_a_decimal_comma_are_the_numbers_written_with_points(
    spark, tmp_path, model, caplog
):
    """``decimal = ","``: the European file's model (its numeric columns found by the one rule, in
    Spark and in process alike) is the pointed file's, row for row; without it, a mixed model reads
    its numbers as categories, after a warning that names the columns and the setting (it did so in
    silence), and a Gaussian one refuses every row."""
    (tmp_path / "europe.csv").write_text(EUROPE)
    (tmp_path / "points.csv").write_text(POINTS)
    settings = {"task": "naive_bayes", "train.format": "csv", "nb.label_column": "label", "nb.model": model}
    if model == "gaussian":
        settings["nb.numeric_columns"] = "height,weight"
    europe = {**settings, "train.path": str(tmp_path / "europe.csv"), "train.delimiter": ";"}
    _same_model(spark, tmp_path, {**europe, "train.decimal": ","})
    train_nb_in_process(
        load_config(None, {**settings, "train.path": str(tmp_path / "points.csv")}), tmp_path / "p"
    )
    assert _table(tmp_path / "local") == _table(tmp_path / "p")
    # classified, the European file's rows are the pointed file's (test.decimal, test.delimiter)
    from nbspark.inputs.resolve import resolve_input
    from nbspark.naive_bayes.jobs import classify_nb

    predicted = {}
    for name, extra in (("europe", {"test.delimiter": ";", "test.decimal": ","}), ("points", {})):
        run = load_config(
            None, {**settings, "test.format": "csv", "test.path": str(tmp_path / f"{name}.csv"), **extra}
        )
        classify_nb(spark, run, tmp_path / "p", resolve_input(run.test, None), tmp_path / f"r-{name}")
        rows = spark.read.parquet(str(tmp_path / f"r-{name}" / "predictions")).collect()
        predicted[name] = sorted((r["id"], r["predicted"][0], round(r["probability"], 12)) for r in rows)
    assert predicted["europe"] == predicted["points"] and len(predicted["points"]) == 6
    if model == "mixed":
        assert _manifest(tmp_path / "local")["columns"] == {
            "numeric": ["height", "weight"],
            "categorical": ["colour", "code"],
        }
        caplog.clear()  # no decimal: categories, in Spark and in process, each after the warning
        (tmp_path / "as-text").mkdir()
        _same_model(spark, tmp_path / "as-text", europe)
        assert _manifest(tmp_path / "as-text" / "local")["columns"]["numeric"] == []
        warned = f"{tmp_path / 'europe.csv'}: height, weight hold numbers written with a decimal comma (1,5)"
        assert caplog.text.count(warned) == 2
        caplog.clear()  # the same data with points, cells separated by ';': nothing to say
        (tmp_path / "pointed").mkdir()
        (tmp_path / "pointed" / "t.csv").write_text(POINTS.replace(",", ";"))
        _same_model(
            spark, tmp_path / "pointed", {**europe, "train.path": str(tmp_path / "pointed" / "t.csv")}
        )
        assert "decimal comma" not in caplog.text
    else:
        # every row refused (it said only "numeric=6"): the reason names the setting that reads them
        said = r"6 malformed records skipped \(decimal_comma=6, .*\); a number written with a decimal comma"
        with pytest.raises(InputError, match=said + r" \(1,5\): set the input's decimal mark"):
            train_nb_in_process(load_config(None, europe), tmp_path / "refused")
        with pytest.raises(InputError, match=r"europe.csv row 2: malformed line \(decimal_comma: a number"):
            train_nb_in_process(load_config(None, {**europe, "mode": "failfast"}), tmp_path / "failfast")
        (tmp_path / "words.csv").write_text(
            "height;weight;label\ntall;1;y\n"
        )  # not a number at all: as before
        with pytest.raises(InputError, match=r"\(numeric=1, the first at"):
            train_nb_in_process(
                load_config(None, {**europe, "train.path": str(tmp_path / "words.csv")}), tmp_path / "w"
            )


@pytest.mark.parametrize(
    "settings, says",
    [
        ({"train.decimal": "x"}, "train.decimal must be . or , (the decimal mark), got 'x'"),
        ({"train.decimal": ","}, "train.decimal ',' is also the delimiter between cells"),
        (
            {"train.decimal": ",", "train.delimiter": ";", "task": "density"},
            "train.decimal does not apply to a density task",
        ),
        (
            {"train.decimal": ",", "train.delimiter": ";", "train.format": "tsv"},
            "train.delimiter (read by csv), train.decimal (read by csv) do not apply to train.format 'tsv'",
        ),
    ],
)
def test_a_decimal_mark_that_cannot_apply_is_refused(settings, says):
    from nbspark.settings.capabilities import train_problem

    base = {"task": "naive_bayes", "train.format": "csv", "train.path": "t.csv"}
    base.update({} if "task" in settings or "train.format" in settings else {"nb.model": "mixed"})
    with pytest.raises(ConfigError, match=re.escape(says)):
        if problem := train_problem(load_config(None, {**base, **settings})):
            raise ConfigError(problem)


@pytest.mark.parametrize(
    "settings, says",
    [
        (
            {"train.delimiter": ";;"},
            "train.delimiter must be one character, not a quote or a line end, got ';;'",
        ),
        ({"train.delimiter": '"'}, "train.delimiter must be one character"),
        ({"train.delimiter": ""}, "train.delimiter must be one character"),
    ],
)
def test_a_delimiter_that_cannot_apply_is_refused(settings, says):
    with pytest.raises(ConfigError, match=re.escape(says)):
        load_config(None, {"task": "naive_bayes", "train.format": "csv", "train.path": "t.csv", **settings})


def test_an_input_with_nothing_to_count_says_what_it_held(tmp_path):
    """ "no training documents (no valid document or row)" left the user to guess; the line now says
    what was skipped and where, and a UTF-16 file (Notepad's "Unicode", read as UTF-8: a NUL
    before every ASCII letter, every line malformed) is named as one."""
    settings = {"task": "naive_bayes", "train.format": "tsv"}
    (tmp_path / "u16.tsv").write_bytes("spam\tcheap pills\nham\tlunch at noon\n".encode("utf-16"))
    (tmp_path / "plain.tsv").write_text("no tab here\nnor here\n")

    def refusal(name: str) -> str:
        with pytest.raises(InputError) as info:
            train_nb_in_process(
                load_config(None, {**settings, "train.path": str(tmp_path / name)}), tmp_path / "m"
            )
        return str(info.value)

    assert refusal("u16.tsv") == (
        f"{tmp_path}/u16.tsv: no training documents (no valid document or row; 3 malformed records skipped "
        f"(nul=3, the first at {tmp_path}/u16.tsv:1); 2 undecodable bytes read as U+FFFD; its lines hold "
        "NUL characters: a UTF-16 file? nbspark reads UTF-8 (iconv -f UTF-16 -t UTF-8)); nothing written"
    )
    assert refusal("plain.tsv") == (
        f"{tmp_path}/plain.tsv: no training documents (no valid document or row; 2 malformed records skipped "
        f"(fields=2, the first at {tmp_path}/plain.tsv:1); each tsv line is id TAB labels TAB text (labels "
        "comma-separated)); nothing written"
    )
    # the commonest slip, a label TAB text file named tsv, and a CSV file: what the lines look like
    (tmp_path / "sms.tsv").write_text("\n".join(["spam\tcheap pills", "ham\tlunch at noon"]))
    assert refusal("sms.tsv").endswith(
        "each tsv line is id TAB labels TAB text (labels comma-separated); the first one has one TAB, as an "
        'sms line (label TAB text): format = "sms"?); nothing written'
    )
    (tmp_path / "table.tsv").write_text("label,text\nham,lunch at noon\n")
    assert refusal("table.tsv").endswith(
        'the first one has commas and no TAB: a CSV table (a header row) is format = "csv"); nothing written'
    )
    # an empty file stopped the count with KeyError: 'lines_read'; a file of blank lines
    (tmp_path / "empty.tsv").write_text("")
    assert refusal("empty.tsv") == (
        f"{tmp_path}/empty.tsv: no training documents (no valid document or row; its files are empty); "
        "nothing written"
    )
    (tmp_path / "blank.tsv").write_text("\n \n\n")
    assert "(no valid document or row; its 3 lines are all blank)" in refusal("blank.tsv")
    assert not (tmp_path / "m").exists()


def test_a_csv_header_naming_a_column_twice_or_none_is_refused_in_one_line(tmp_path):
    def train(path, more=()):
        settings = {"task": "naive_bayes", "train.format": "csv", "nb.label_column": "label"}
        cfg = load_config(
            None, {**settings, "train.path": str(path), "nb.model": "categorical", **dict(more)}
        )
        train_nb_in_process(cfg, tmp_path / "m")

    (tmp_path / "t.csv").write_text("a,b,a,label\n1,2,3,x\n")
    with pytest.raises(InputError, match=r"t.csv: the header names column 'a' twice; name each column once"):
        train(tmp_path / "t.csv")
    (tmp_path / "t.csv").write_text("a,,c,label\n1,2,3,x\n")  # counted as a column named '' before
    with pytest.raises(InputError, match=r"t.csv: the header leaves column 2 unnamed; name each column$"):
        train(tmp_path / "t.csv")
    (tmp_path / "t.csv").write_text("a,,,label\n1,2,3,x\n")  # not "names column '' twice"
    with pytest.raises(InputError, match=r"t.csv: the header leaves column 2 unnamed; name each column$"):
        train(tmp_path / "t.csv")
    (tmp_path / "t.csv").write_text("\n\n")  # said "no label column 'label' (columns: )"
    with pytest.raises(InputError, match=r"t.csv: no header line: the table's files are empty$"):
        train(tmp_path / "t.csv")
    # files of one input share one header, as Spark reads them all by the first one's (pyarrow's
    # "Schema at index 1 was different" took 8 lines, without a file's name)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("a,b,label\n1,2,x\n")
    (tmp_path / "in" / "b.csv").write_text("")  # an empty file has no header to differ
    (tmp_path / "in" / "c.csv").write_text("a,B,label\n1,2,x\n")
    with pytest.raises(
        InputError, match=r"c.csv: its header \(a, B, label\) is not a.csv's \(a, b, label\); the CSV files"
    ):
        train(tmp_path / "in")
    # a feature column the config (or, classifying or streaming, the model) names that the table
    # lacks: which, and what the table has
    (tmp_path / "t.csv").write_text("a,c,label\n1,2,x\n")
    with pytest.raises(
        InputError, match=r"t.csv: no feature column\(s\) b \(the table's columns: a, c, label\)$"
    ):
        train(tmp_path / "t.csv", {"nb.model": "mixed", "nb.numeric_columns": "a,b"})


def _close(a, b) -> bool:
    return a == b if a is None or b is None else math.isclose(a, b, rel_tol=1e-12)


def _same_model(spark, tmp_path, settings):
    from nbspark.inputs.resolve import resolve_input

    cfg = load_config(None, settings)
    train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "spark")
    train_nb_in_process(cfg, tmp_path / "local")
    local, spark_rows = _table(tmp_path / "local"), _table(tmp_path / "spark")
    # counts equal; a Gaussian's sums of x and x² equal up to the order of the additions
    assert [r[:5] for r in local] == [r[:5] for r in spark_rows]
    assert all(_close(a, b) for r, q in zip(local, spark_rows) for a, b in zip(r[5:], q[5:]))
    assert _manifest(tmp_path / "local") == _manifest(tmp_path / "spark")


@pytest.mark.realdata
@pytest.mark.parametrize("config", [None, "conf/experiments/sms_multinomial.toml"], ids=["whole", "shipped"])
def test_the_sms_collection_in_process_is_the_spark_jobs(spark, data_dir, tmp_path, config):
    """The whole collection (the arrow engine's rule) and the shipped experiment (a seeded 80/20
    hold-out: the Python engines' rule), each against the Spark job."""
    from nbspark.inputs.resolve import resolve_input
    from tests.conftest import ROOT

    settings = (
        {
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "train.format": "sms",
            "train.path": "smsspam/SMSSpamCollection",
        }
        if config is None
        else {}
    )
    config = None if config is None else str(ROOT / config)
    cfg = load_config(config, settings)
    train_nb(spark, cfg, resolve_input(cfg.train, str(data_dir)), tmp_path / "spark")
    fitted = nbspark.fit(config, tmp_path / "local", settings=settings, data_dir=str(data_dir))
    assert _table(tmp_path / "local") == _table(tmp_path / "spark")
    assert _manifest(tmp_path / "local") == _manifest(tmp_path / "spark")
    texts = ["WINNER!! claim your prize now", "see you at 6"]
    assert (
        list(fitted.predict(texts))
        == list(nbspark.load(tmp_path / "spark").predict(texts))
        == ["spam", "ham"]
    )


def test_the_command_trains_in_process(tmp_path, capsys):
    path = str(FIXTURES / "china_train.tsv")
    sets = ["--set", "task=naive_bayes", "--set", "nb.tokenizer=words", "--set", "train.format=tsv"]
    assert (
        main(["train", "--in-process", *sets, "--set", f"train.path={path}", "--out", str(tmp_path / "m")])
        == 0
    )
    out = capsys.readouterr().out
    assert "documents: 5   classes: 2   features: 8   malformed (skipped): 2" in out
    assert nbspark.load(tmp_path / "m").classes_ == ("c", "j") or list(
        nbspark.load(tmp_path / "m").classes_
    ) == ["c", "j"]


@pytest.mark.parametrize("model", ["multinomial", "bernoulli"])
def test_an_update_in_process_equals_training_on_everything(tmp_path, caplog, model):
    """``nbspark train --update`` of small local files counts in process (no JVM: this test has no
    ``java`` to find) and adds to the model's table: the table and the manifest's counts are those
    of one train on both files, and the second file is refused a second time."""
    lines = (FIXTURES / "china_train.tsv").read_text().splitlines(keepends=True)
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.tsv").write_text("".join(lines[:3]))
    (tmp_path / "in" / "b.tsv").write_text("".join(lines[3:]))
    sets = [f"--set={k}={v}" for k, v in {**CHINA, "nb.model": model}.items()]

    def train(path, *how):
        return main(["train", *sets, "--set", f"train.path={path}", *how])

    assert train(tmp_path / "in", "--out", str(tmp_path / "all")) == 0
    assert train(tmp_path / "in" / "a.tsv", "--out", str(tmp_path / "m")) == 0
    caplog.set_level("INFO", logger="nbspark")
    assert train(tmp_path / "in" / "b.tsv", "--update", str(tmp_path / "m")) == 0
    assert "counting in process" in caplog.text
    assert _table(tmp_path / "m") == _table(tmp_path / "all")
    updated, everything = _manifest(tmp_path / "m"), _manifest(tmp_path / "all")
    for key in ("label_counts", "features", "count_rows", "model"):
        assert updated[key] == everything[key], key
    assert updated["version"] == 2 and updated["stats"]["documents"] == everything["stats"]["documents"]
    assert train(tmp_path / "in" / "b.tsv", "--update", str(tmp_path / "m")) == 1  # counted already
    # a model on another storage would start the JVM to reach it: refused before anything starts
    assert train(tmp_path / "in" / "b.tsv", "--in-process", "--update", "hdfs://127.0.0.1:1/m") == 2


def test_failfast_in_process_names_the_first_malformed_line(tmp_path):
    cfg = load_config(
        None, {**CHINA, "train.path": str(FIXTURES / "china_test_dirty.tsv"), "mode": "failfast"}
    )
    with pytest.raises(InputError, match=r"china_test_dirty.tsv:3: malformed line \(fields\): 'd10\\tc'"):
        train_nb_in_process(cfg, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_failfast_in_process_names_a_tables_file_and_row(tmp_path):
    """As the Spark job names it (tests/app/test_cli_refusals.py): the file, its row as a
    spreadsheet counts (the header is row 1), and the row's cells, not a Python dict."""
    from tests.naive_bayes.test_jobs_one_label import WEATHER

    weather = {
        **WEATHER,
        "train.format": "csv",
        "train.path": str(FIXTURES / "weather.csv"),
        "mode": "failfast",
    }
    message = (
        f"{FIXTURES / 'weather.csv'} row 16: malformed line (numeric): "
        "'outlook=cloudy, temperature=warm, humidity=80, windy=FALSE, play=yes'"
    )
    with pytest.raises(InputError, match=re.escape(message)):
        train_nb_in_process(load_config(None, weather), tmp_path / "m")


@pytest.mark.parametrize(
    "settings, says",
    [
        ({**CHINA, "engine": "dataframe"}, "engine = dataframe"),
        ({**CHINA, "train.path": "hdfs://127.0.0.1:1/corpus.tsv"}, "reads local files only"),
    ],
)
def test_what_needs_spark_is_refused_before_anything_starts(tmp_path, settings, says):
    settings = {"train.path": str(FIXTURES / "china_train.tsv"), **settings}
    cfg = load_config(None, settings)
    with pytest.raises(ConfigError, match=says):
        train_nb_in_process(cfg, tmp_path / "m")
    assert not (tmp_path / "m").exists()


def test_a_model_written_on_another_file_system_is_refused_in_process(capsys):
    """``--in-process`` (and ``nbspark.fit``) writing a model on another file system started a JVM to
    reach it, and failed there naming the file system; refused before, as a remote input is."""
    import nbspark
    from nbspark.app.command import main

    settings = {**CHINA, "train.path": str(FIXTURES / "china_train.tsv")}
    with pytest.raises(
        ConfigError, match="^in process, nbspark reads local files only, not --out hdfs://nn/m"
    ):
        nbspark.fit(None, "hdfs://nn/m", settings=settings)
    sets = [x for k, v in settings.items() for x in ("--set", f"{k}={v}")]
    assert main(["train", "--in-process", *sets, "--out", "viewfs://c/m"]) == 2
    assert (
        "in process, nbspark reads local files only, not --out viewfs://c/m: use Spark"
        in capsys.readouterr().err
    )


@pytest.mark.spark
def test_the_command_counts_a_small_local_input_in_process_unless_asked_for_spark(spark, tmp_path, caplog):
    """nbspark train without --in-process or --spark: in process below 64 MB of local files (the
    same table as Spark's), with Spark when --spark asks."""
    import logging

    path = str(FIXTURES / "china_train.tsv")
    sets = ["--set", "task=naive_bayes", "--set", "nb.tokenizer=words", "--set", "train.format=tsv"]
    # -q sets Spark's own submit arguments (no stage bars) in this process: not a request for Spark
    assert main(["-q", "train", *sets, "--set", f"train.path={path}", "--out", str(tmp_path / "q")]) == 0
    with caplog.at_level(logging.INFO, logger="nbspark"):
        assert main(["train", *sets, "--set", f"train.path={path}", "--out", str(tmp_path / "auto")]) == 0
    assert "counting in process (--spark counts with Spark)" in caplog.text
    assert main(["train", "--spark", *sets, "--set", f"train.path={path}", "--out", str(tmp_path / "s")]) == 0
    engines = [json.loads((tmp_path / m / "manifest.json").read_text())["engine"] for m in ("q", "auto", "s")]
    assert engines[:2] == ["local", "local"] and engines[2] != "local"
    assert _table(tmp_path / "auto") == _table(tmp_path / "s")
    assert _manifest(tmp_path / "auto") == _manifest(tmp_path / "s")


def test_what_decides_in_process_for_the_command(monkeypatch):
    import argparse

    from nbspark.app.options import may_run_here
    from nbspark.settings.capabilities import in_process_fits

    cfg = load_config(None, {**CHINA, "train.path": str(FIXTURES / "china_train.tsv")})
    plain = argparse.Namespace(spark=False, master=None, conf=None)
    local = (cfg.train.path, None, "M")  # the input, no data directory, a model to update
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    assert may_run_here(plain, "nbspark train", local)
    assert not may_run_here(plain, "train.py", local)  # spark-submit stays Spark
    for asked in ({"spark": True}, {"master": "local[1]"}, {"conf": ["a=b"]}):
        assert not may_run_here(argparse.Namespace(**{**vars(plain), **asked}), "nbspark train", local)
    for remote in ("hdfs://nn/m", "viewfs://c/d"):  # any path not local: a model, a data directory
        assert not may_run_here(plain, "nbspark classify", (cfg.train.path, remote))
    assert may_run_here(plain, "nbspark classify", (cfg.train.path, "file:///tmp/m"))
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--master local[1] pyspark-shell")
    assert not may_run_here(plain, "nbspark train", local)
    assert in_process_fits(cfg, 64_000_000) is None
    assert in_process_fits(cfg, 64_000_001) == (
        "64.0 MB to read (the input, and a model to update), over the 64 MB counted in process"
    )
    assert "dataframe" in in_process_fits(load_config(None, {**CHINA, "engine": "dataframe"}), 10)
    # a config no engine can count is refused as it is, not a reason to count with Spark (logged as
    # one, then refused by Spark in the same words); a directory's name names no format: say so
    with pytest.raises(ConfigError, match=r"set train.format: only a file's extension \(.csv, .parquet\)"):
        in_process_fits(
            load_config(None, {"task": "naive_bayes", "nb.model": "mixed", "train.path": "d"}), 10
        )


def test_a_compressed_input_counts_what_it_holds_toward_the_in_process_bound(tmp_path):
    """A .gz file is read whole once decompressed: 8 times its size (``EXPANSION``) is what decides."""
    import gzip

    from nbspark.inputs.files import EXPANSION
    from nbspark.inputs.resolve import input_bytes, resolve_input

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.tsv").write_text("d1\tc\tbeijing\n")
    (tmp_path / "in" / "b.tsv.gz").write_bytes(gzip.compress(b"d2\tj\ttokyo\n" * 50))
    cfg = load_config(None, {**CHINA, "train.path": str(tmp_path / "in")})
    plain, packed = (tmp_path / "in" / "a.tsv").stat().st_size, (tmp_path / "in" / "b.tsv.gz").stat().st_size
    assert EXPANSION == 8 and input_bytes(resolve_input(cfg.train, None)) == plain + 8 * packed


def test_an_unseen_category_is_counted_in_the_result_and_left_out_of_the_score(tmp_path, capsys):
    """``outlook=foggy`` (the weather table has sunny, overcast, rainy) is named in the row's
    ``unseen`` and scored as the row without it, in Python and on the command line."""
    from tests.naive_bayes.test_jobs_one_label import WEATHER

    weather = {**WEATHER, "train.format": "csv", "train.path": str(FIXTURES / "weather.csv")}
    train_nb_in_process(load_config(None, weather), tmp_path / "m")
    model = nbspark.load(tmp_path / "m")
    row = {"outlook": "foggy", "temperature": 70, "humidity": 80, "windy": "FALSE"}
    without = {k: v for k, v in row.items() if k != "outlook"}
    foggy, plain, sunny = model.explain([row, without, {**row, "outlook": "sunny"}])
    assert foggy["unseen"] == {"outlook": "foggy"} and plain["unseen"] == sunny["unseen"] == {}
    assert foggy["probabilities"] == plain["probabilities"] != sunny["probabilities"]
    capsys.readouterr()
    assert main(["predict", "--model", str(tmp_path / "m"), json.dumps(row)]) == 0
    assert capsys.readouterr().out.strip().endswith("(unseen, left out: outlook=foggy)")
    assert main(["predict", "--model", str(tmp_path / "m"), "--json", json.dumps(row)]) == 0
    assert json.loads(capsys.readouterr().out)["unseen"] == {"outlook": "foggy"}


def test_a_value_no_class_can_explain_gets_equal_posteriors_and_says_why(tmp_path, caplog):
    """A temperature of 1e200 is so far from every class's mean that (x - θ)² overflows: every
    class's density is 0 in floating point, as with alpha = 0, and the warning names both causes."""
    from tests.naive_bayes.test_jobs_one_label import WEATHER

    weather = {**WEATHER, "train.format": "csv", "train.path": str(FIXTURES / "weather.csv")}
    model = nbspark.fit(None, tmp_path / "m", settings=weather)
    with caplog.at_level("WARNING", logger="nbspark.naive_bayes.predictor"):
        proba = model.predict_proba(
            [{"temperature": 1e200, "humidity": 80}, {"temperature": 70, "humidity": 80}]
        )
    assert proba[0].tolist() == [0.5, 0.5] and proba[1].max() > 0.5
    (said,) = [r.getMessage() for r in caplog.records if r.name == "nbspark.naive_bayes.predictor"]
    assert (
        said.startswith("1 of 2 rows: no class can explain them") and "so far from every class's mean" in said
    )


def _story(newid: int, split: str, topics_attr: str, topics: tuple[str, ...], body: str) -> str:
    ds = "".join(f"<D>{t}</D>" for t in topics)
    return (
        f'<REUTERS TOPICS="{topics_attr}" LEWISSPLIT="{split}" NEWID="{newid}">\n'
        f"<TOPICS>{ds}</TOPICS>\n<TEXT><BODY>{body}</BODY></TEXT>\n</REUTERS>\n"
    )


def test_the_summary_says_why_each_reuters_story_was_left_out(tmp_path, capsys):
    """Six stories, each written for one reason (the first that applies: outside ModApte, another
    split, a first topic not in the top ten); before, the summary said only ``documents: 1``."""
    sgml = tmp_path / "reut2-000.sgm"
    sgml.write_text(
        _story(1, "TRAIN", "YES", ("earn",), "profit up")
        + _story(2, "TRAIN", "YES", ("cocoa", "earn"), "cocoa down")  # first topic off the ten
        + _story(3, "TEST", "YES", ("acq",), "bought a firm")  # another split
        + _story(4, "TRAIN", "NO", (), "no topics asked")  # outside ModApte: TOPICS="NO"
        + _story(5, "NOT-USED", "YES", ("earn",), "not used")  # outside ModApte: the split
        + _story(6, "TRAIN", "YES", (), "no topic given"),  # outside ModApte: no topic
        encoding="latin-1",
    )
    sets = [
        "--set",
        "task=naive_bayes",
        "--set",
        "train.format=reuters_topics",
        "--set",
        "train.splits=TRAIN",
    ]
    out = tmp_path / "m"
    assert (
        main(
            [
                "train",
                "--in-process",
                *sets,
                "--set",
                "nb.labels=top10",
                "--set",
                f"train.path={sgml}",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert (
        "stories read: 6   used: 1   left out: 3 outside ModApte (not TRAIN or TEST, TOPICS not YES, or no "
        "topic); 1 in splits other than train.splits; 1 first topic not among the top ten (nb.labels = top10)"
    ) in capsys.readouterr().out
    stats = json.loads((out / "manifest.json").read_text())["stats"]
    assert (stats["documents"], stats["stories_used"], stats["stories_off_top10"]) == (1, 1, 1)
    # every topic kept: the cocoa story is used, and nothing is said of the top ten
    assert (
        main(
            ["train", "--in-process", *sets, "--set", f"train.path={sgml}", "--out", str(out), "--overwrite"]
        )
        == 0
    )
    said = capsys.readouterr().out
    assert "stories read: 6   used: 2   left out: 3 outside ModApte" in said and "top ten" not in said


def test_a_tables_columns_that_are_no_feature_are_said(tmp_path, caplog):
    """Naming the features leaves the table's other columns out: said in one line, as a density's
    unmodelled columns are, and as an update (or a stream) reading a later file of more columns says."""
    (tmp_path / "a.csv").write_text("outlook,temp,id,play\nsunny,hot,1,no\nrainy,mild,2,yes\n")
    settings = {
        "task": "naive_bayes",
        "train.format": "csv",
        "nb.model": "categorical",
        "nb.label_column": "play",
        "nb.categorical_columns": "outlook",
        "train.path": str(tmp_path / "a.csv"),
    }
    caplog.set_level("INFO", logger="nbspark")
    model = nbspark.fit(None, tmp_path / "m", settings=settings)
    assert model.feature_names_in_.tolist() == ["outlook"]
    said = "column(s) temp, id not used (the features: nb.numeric_columns, nb.categorical_columns)"
    assert f"{tmp_path / 'a.csv'}: {said}" in caplog.text
    caplog.clear()
    nbspark.fit(None, tmp_path / "all", settings={**settings, "nb.categorical_columns": "outlook,temp,id"})
    assert "not used" not in caplog.text
