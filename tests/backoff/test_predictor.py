"""``nbspark check``: confused words in plain text, flagged with their line and column (counted by
hand from tests/data/ngrams.txt: ABDE ``would not _ the outcome`` = affect 6, effect 1;
``does not _ the ratio`` = affect 3; ``the cumulative _ of the`` = effect 10, affect 2)."""

import json
from collections import Counter

import pytest

import nbspark
from nbspark.app.command import main
from nbspark.backoff.jobs import train
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config

pytestmark = pytest.mark.spark

TEXT = (
    "It would not effect the outcome.\nThe cumulative effect of the plan was small.\n  It does not "
    "effect the ratio.\n"
)


@pytest.fixture(scope="module")
def model_dir(spark, tmp_path_factory):
    from tests.conftest import FIXTURES

    out = tmp_path_factory.mktemp("check") / "m"
    cfg = load_config(
        None, {"train.path": str(FIXTURES / "ngrams.txt"), "confusion_sets": "affect,effect;their,there"}
    )
    train(spark, cfg, resolve_input(cfg.train, None), out)
    return out


def test_flags_positions_and_ratios(model_dir):
    flags = nbspark.load(model_dir).flags(TEXT, factor=5, rule="chain")
    assert [
        (f["line"], f["column"], f["written"], f["suggestion"], f["ratio"], f["level"]) for f in flags
    ] == [
        (1, 14, "effect", "affect", 6.0, "ABDE"),  # 6 against 1
        (3, 15, "effect", "affect", float("inf"), "ABDE"),  # effect never seen there
    ]
    assert flags[0]["snippet"] == "It would not effect the outcome."
    # many flags in one text: each one's line and column (lines were counted from the top per flag)
    many = nbspark.load(model_dir).flags(TEXT * 3000, factor=5, rule="chain")
    assert [(f["line"], f["column"]) for f in many] == [
        (3 * k + line, col) for k in range(3000) for line, col in ((1, 14), (3, 15))
    ]
    # the suggestion takes the written word's case (the model counts lower-cased words)
    shouted = nbspark.load(model_dir).flags(
        "WOULD NOT EFFECT THE OUTCOME. Would not Effect the outcome.", factor=5, rule="chain"
    )
    assert [(f["written"], f["suggestion"]) for f in shouted] == [("EFFECT", "AFFECT"), ("Effect", "Affect")]
    # a character whose lower case is longer (İ -> i + U+0307) before the word: counted as written
    turkish = "İİ İ would not effect the outcome.\nİ It would not effect the outcome."
    flags = nbspark.load(model_dir).flags(turkish, factor=5, rule="chain")
    assert [(f["line"], f["column"], f["offset"], f["written"]) for f in flags] == [
        (1, 16, 15, "effect"),  # "İİ İ " is 5 characters, "would not " 10
        (2, 16, 50, "effect"),  # the first line and its "\n" are 35
    ]


def test_a_text_checked_in_pieces_gives_the_flags_of_the_whole(model_dir, monkeypatch):
    """Long texts are tokenized a piece of lines at a time (a 16 MB text took 0.9 GB whole); windows
    span the cuts. Cut after every line, and after every 3 lines, the flags are the whole text's."""
    import functools

    from nbspark.backoff import predictor as models
    from nbspark.inputs.tokens import line_pieces

    model = nbspark.load(model_dir)
    text = (
        "Affect\n"
        + (
            "It would not\neffect the outcome.\n\n\nThe cumulative effect\nof the\nplan. effect\n"
            "It does not effect the ratio.\n"
        )
        * 4
        + "would not effect"
    )
    whole = model.flags(text, factor=2, rule="chain")
    # windows across lines; the first word alone on its line is not flagged: its window is all padding,
    # so the prior decides (28 effect to 11 affect), a thin level below check.thin_factor (200)
    assert [(f["line"], f["column"], f["level"]) for f in whole[:2]] == [(3, 1, "ABDE"), (9, 13, "ABDE")]
    # (the last "would not effect" is decided at B, "not _", 9 to 1: thin too)
    assert len(whole) == 8 and whole[-1]["line"] == 33
    for size in (1, 30):
        monkeypatch.setattr(models, "line_pieces", functools.partial(line_pieces, size=size))
        assert model.flags(text, factor=2, rule="chain") == whole, size


def test_windows_and_old_mac_line_ends(model_dir):
    """A file with \\r\\n or lone \\r line ends (old Mac) is flagged on the lines and columns an
    editor shows, its snippets without the \\r (lines were counted on \\n alone: a lone-\\r file was
    all on line 1, and each snippet of a Windows file ended in \\r)."""
    model = nbspark.load(model_dir)
    want = [(f["line"], f["column"], f["snippet"]) for f in model.flags(TEXT, factor=5, rule="chain")]
    assert want == [(1, 14, "It would not effect the outcome."), (3, 15, "  It does not effect the ratio.")]
    for end in ("\r\n", "\r"):
        text = TEXT.replace("\n", end)
        got = model.flags(text, factor=5, rule="chain")
        assert [(f["line"], f["column"], f["snippet"]) for f in got] == want
        # the offset is in the text as given: "\r\n" counts two characters there
        assert [f["offset"] for f in got] == [
            13,
            len("It would not effect the outcome.") + len(end) * 2 + 44 + 14,
        ]
        assert all(text[f["offset"] : f["offset"] + 6] == "effect" for f in got)


def test_the_factor_edge(model_dir):
    model = nbspark.load(model_dir)
    assert [f["line"] for f in model.flags(TEXT, factor=6, rule="chain")] == [
        1,
        3,
    ]  # exactly 6 times: flagged
    assert [f["line"] for f in model.flags(TEXT, factor=6.000001, rule="chain")] == [3]
    # a factor below 1 would flag words that are more probable than their alternatives: one rule refuses it
    # everywhere
    for factor in (0.5, 0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match=f"^factor must be a finite number >= 1, got {factor!r}$"):
            model.flags(TEXT, factor=factor)
    with pytest.raises(
        ValueError, match="^check.factor\\(s\\) must be a finite number >= 1, got 0.5$"
    ):  # a ConfigError
        load_config(None, {"check.factor": "0.5"})


def test_correct_text_and_a_set_never_counted(model_dir):
    model = nbspark.load(model_dir)
    assert model.flags("The cumulative effect of the changes was small.", factor=1) == []
    # their/there are a confusion set of the model that no training line held: nothing to say
    assert model.flags("They left their coats over there.", factor=1) == []
    assert model.flags("No confusable word here.", factor=1) == []


def test_command_line(model_dir, tmp_path, capsys):
    doc = tmp_path / "doc.txt"
    doc.write_text(TEXT)
    assert main(["check", "--model", str(model_dir), "--factor", "5", "--rule", "chain", str(doc)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        lines[0]
        == f"{doc}:1:14: 'effect' → 'affect'? (ratio 6.0, level ABDE) It would not effect the outcome."
    )
    assert lines[1].startswith(f"{doc}:3:15: 'effect' → 'affect'? (ratio inf, level ABDE)")
    # the summary says what was checked, and so what was not; -q leaves it out
    assert main(["check", "--model", str(model_dir), "--factor", "5", str(doc), str(doc)]) == 0
    # (the logger's prefix is the first command's of this process: "nbspark" run alone)
    assert capsys.readouterr().err.splitlines()[-1].split(": ", 1)[1] == (
        "checked 2 files: 4 of 6 confusion-set words flagged; the model checks "
        "affect/effect; their/there, and no other words"
    )
    assert main(["-q", "check", "--model", str(model_dir), str(doc)]) == 0
    assert capsys.readouterr().err == ""
    # a pipe (a shell's <(cmd), a FIFO) is read as stdin is; it was "no such file or directory"
    import os
    import threading

    os.mkfifo(tmp_path / "fifo")
    writer = threading.Thread(target=(tmp_path / "fifo").write_text, args=(TEXT,), daemon=True)
    writer.start()
    fifo = str(tmp_path / "fifo")
    assert main(["-q", "check", "--model", str(model_dir), "--factor", "5", "--rule", "chain", fifo]) == 0
    writer.join(10)
    piped = capsys.readouterr().out.splitlines()
    assert piped == [line.replace(str(doc), str(tmp_path / "fifo"), 1) for line in lines]
    assert main(["-q", "check", "--model", str(model_dir), "/dev/null"]) == 0  # as an empty file
    assert capsys.readouterr().out == ""
    from nbspark.app.check import _flag_line

    flag = {
        "file": "d",
        "line": 1,
        "column": 2,
        "written": "affect",
        "suggestion": "effect",
        "level": "",
        "snippet": "s",
    }
    assert [
        _flag_line({**flag, "ratio": r}).split(" (")[1] for r in (38355612300524945408.0, 999999.94, 50.0)
    ] == ["ratio 3.8e+19, level ∅) s", "ratio 999999.9, level ∅) s", "ratio 50.0, level ∅) s"]
    assert (
        main(["check", "--model", str(model_dir), "--json", "--fail-on-flag", "--rule", "chain", str(doc)])
        == 1
    )
    flags = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [sorted(f) for f in flags] == [
        sorted(
            ["file", "line", "column", "offset", "written", "suggestion", "ratio", "level", "snippet"]
            + ["window", "flagged"]  # the shape check() gives every word: one result type
        )
    ]
    assert flags[0]["line"] == 3 and flags[0]["ratio"] is None  # at the default factor 50 only the unseen one


def test_command_line_checks_a_directory_as_the_job_lists_it(model_dir, tmp_path, capsys):
    """A directory gives its files in name order, hidden and _ names skipped, .gz read; an empty one
    is refused rather than reported clean."""
    import gzip

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "b.txt.gz").write_bytes(gzip.compress(TEXT.encode()))
    (docs / "a.txt").write_text("It would not effect the outcome.\n")
    (docs / ".hidden.txt").write_text(TEXT)
    (docs / "_skip.txt").write_text(TEXT)
    assert main(["check", "--model", str(model_dir), "--factor", "5", "--rule", "chain", str(docs)]) == 0
    heads = [line.split(" ")[0] for line in capsys.readouterr().out.splitlines()]
    assert heads == [f"{docs / 'a.txt'}:1:14:", f"{docs / 'b.txt.gz'}:1:14:", f"{docs / 'b.txt.gz'}:3:15:"]
    (tmp_path / "empty").mkdir()
    assert main(["check", "--model", str(model_dir), str(tmp_path / "empty")]) == 2  # an error, not a flag
    assert "no text files in this directory" in capsys.readouterr().err


def test_command_line_reads_compressed_text(model_dir, tmp_path, capsys):
    """A .bz2 text is checked as its text; a .gz cut short exits 1 with one line naming it (it
    was a traceback: EOFError from gzip)."""
    import bz2
    import gzip

    text = b"It would not effect the outcome.\n"
    (tmp_path / "a.txt.bz2").write_bytes(bz2.compress(text))
    assert (
        main(
            [
                "check",
                "--model",
                str(model_dir),
                "--factor",
                "5",
                "--rule",
                "chain",
                str(tmp_path / "a.txt.bz2"),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith(
        f"{tmp_path / 'a.txt.bz2'}:1:14: 'effect' → 'affect'? (ratio 6.0, level ABDE)"
    )
    cut = gzip.compress(text * 1000)
    (tmp_path / "cut.txt.gz").write_bytes(cut[:40])
    assert main(["check", "--model", str(model_dir), str(tmp_path / "cut.txt.gz")]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"nbspark check: error: {tmp_path / 'cut.txt.gz'}: cannot be read as gzip (")
        and err.count("\n") == 1
    )


def test_command_line_reads_utf16_with_its_byte_order_mark(model_dir, tmp_path, capsys):
    """Notepad's "Unicode" is UTF-16 with a byte-order mark: read as UTF-8, a NUL between letters
    split every word and nothing was flagged (only 'is it UTF-8?' for the mark's two bytes)."""
    text = "Caf\u00e9 talk.\r\nIt would not effect the outcome.\r\n"
    for codec, mark in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        doc = tmp_path / f"{codec}.txt"
        doc.write_bytes(mark + text.encode(codec))
        quiet = ["-q", "check", "--model", str(model_dir)]  # no summary: stderr would show a warning alone
        assert main([*quiet, "--factor", "5", "--rule", "chain", str(doc)]) == 0
        out, err = capsys.readouterr()
        assert (
            out
            == f"{doc}:2:14: 'effect' → 'affect'? (ratio 6.0, level ABDE) It would not effect the outcome.\n"
            and err == ""
        )


def test_command_line_says_when_a_text_is_not_utf8(model_dir, tmp_path, capsys, monkeypatch):
    """Latin-1 bytes are read as U+FFFD and the text is still checked, with a line on stderr; stdin
    is read as bytes by the same rule (not a UnicodeDecodeError)."""
    import io

    latin = "Caf\xe9 talk: it would not effect the outcome.\n".encode("latin-1")
    doc = tmp_path / "latin.txt"
    doc.write_bytes(latin)
    quiet = ["-q", "check", "--model", str(model_dir)]  # the warning stays; the summary goes
    assert main([*quiet, "--factor", "5", "--rule", "chain", str(doc)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"{doc}:1:25: 'effect' → 'affect'? (ratio 6.0, level ABDE)")
    assert err == f"nbspark check: {doc}: 1 undecodable byte sequence(s) read as U+FFFD: is it UTF-8?\n"
    marked = tmp_path / "marked.txt"  # a byte-order mark is not a column of the first line
    marked.write_bytes(b"\xef\xbb\xbfIt would not effect the outcome.\n")
    assert main(["check", "--model", str(model_dir), "--factor", "5", "--rule", "chain", str(marked)]) == 0
    assert capsys.readouterr().out.startswith(
        f"{marked}:1:14: 'effect' → 'affect'? (ratio 6.0, level ABDE) It would"
    )
    honest = tmp_path / "honest.txt"  # valid UTF-8 that holds a U+FFFD of its own: nothing to say
    honest.write_text("A \ufffd here; it would not effect the outcome.\n", encoding="utf-8")
    assert main([*quiet, "--factor", "5", "--rule", "chain", str(honest)]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(latin)))
    assert main(["check", "--model", str(model_dir), "--factor", "5", "--rule", "chain", "-"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("<stdin>:1:25: 'effect' → 'affect'?") and err.startswith(
        "nbspark check: <stdin>: 1 undecodable"
    )


def test_the_interpolation_rule_by_hand(model_dir):
    """Every level counts: from the prior (affect 11, effect 23) up through B and BD (not / not the:
    affect 9, effect 1), ABD and ABDE (affect 6, effect 1), P_k = (c_k + m P_k+1) / (n_k + m), m = 0.3."""
    p = {"affect": 0.5, "effect": 0.5}
    for a, e in [(11, 23), (9, 1), (9, 1), (6, 1), (6, 1)]:
        p = {
            "affect": (a + 0.3 * p["affect"]) / (a + e + 0.3),
            "effect": (e + 0.3 * p["effect"]) / (a + e + 0.3),
        }
    model = nbspark.load(model_dir)
    (flag, third) = model.flags(TEXT, factor=5, rule="interpolate")
    assert flag["ratio"] == pytest.approx(p["affect"] / p["effect"]) == pytest.approx(6.0035, abs=1e-4)
    assert flag["level"] == "ABDE"
    assert third["line"] == 3 and 1000 < third["ratio"] < float(
        "inf"
    )  # effect never seen there, but the levels below saw it


def test_the_evaluation_protocol(model_dir, tmp_path, capsys):
    """One correct affect (ABDE: affect 6, effect 1) and one correct effect (ABDE: effect 10,
    affect 2): neither flagged as written; swapped, they are caught up to factors 6 and 5."""
    from nbspark.backoff.evaluation import evaluate
    from nbspark.settings.check import Rule

    docs = [("d", "It would not affect the outcome. The cumulative effect of the plan.")]
    rows = evaluate(nbspark.load(model_dir), docs, {"chain": Rule("chain")}, factors=(1, 5, 6, 10))
    got = {
        (r["written"], r["intended"], r["factor"]): (
            r["occurrences"],
            r["false_alarms"],
            r["catches"],
            r["p"],
            r["r"],
        )
        for r in rows
    }
    assert got[("effect", "affect", 6)] == (1, 0, 1, 1.0, 1.0)
    assert got[("effect", "affect", 10)] == (1, 0, 0, 1.0, 0.0)
    assert got[("affect", "effect", 5)] == (1, 0, 1, 1.0, 1.0)
    assert got[("affect", "effect", 6)] == (1, 0, 0, 1.0, 0.0)
    clean = tmp_path / "clean.txt"
    clean.write_text(docs[0][1])
    assert (
        main(
            [
                "check",
                "--model",
                str(model_dir),
                "--evaluate",
                f"text:{clean}",
                "--out",
                str(tmp_path / "ev"),
                "--rule",
                "chain",
            ]
        )
        == 0
    )
    assert "effect for affect" in capsys.readouterr().out
    report = json.loads((tmp_path / "ev" / "evaluation.json").read_text())
    assert (
        report["texts"][0]["rows"][0]["rule"] == "chain" and (tmp_path / "ev" / "pr.png").stat().st_size > 0
    )


def test_the_spark_job_flags_as_the_single_document_path(spark, model_dir, tmp_path):
    import gzip

    from nbspark.backoff.check_job import check_corpus

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text(TEXT)
    (corpus / "b.txt.gz").write_bytes(
        gzip.compress(b"Nothing here.\n\nBut it would not effect the outcome either.\n")
    )
    (corpus / "c.txt").write_bytes("The cumulative affect of the \xff move.\n".encode("latin-1"))
    (corpus / "d.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR It would not effect the outcome.\n")
    metrics = check_corpus(spark, model_dir, corpus, tmp_path / "out", factor=2, rule="chain")
    got = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / "out" / "flags")).collect())
    model = nbspark.load(model_dir)
    expected = []
    for f in sorted(corpus.iterdir()):
        if f.suffix == ".png":  # binary: not checked
            continue
        data = gzip.decompress(f.read_bytes()) if f.name.endswith(".gz") else f.read_bytes()
        for flag in model.flags(data.decode("utf-8", "replace"), 2, "chain"):
            expected.append(
                (
                    str(f),
                    *(
                        flag[k]
                        for k in ("line", "column", "written", "suggestion", "ratio", "level", "snippet")
                    ),
                )
            )
    assert got == sorted(expected)
    assert len(got) == 4  # a.txt lines 1 and 3, b.txt.gz line 3, c.txt: affect -> effect (10 against 2)
    assert (metrics["files"], metrics["flags"], metrics["decode_replacements"], metrics["binary_files"]) == (
        3,
        4,
        1,
        1,
    )
    by_level = ", ".join(f"{k or '∅'}={v}" for k, v in sorted(Counter(r[6] for r in got).items()))
    assert (tmp_path / "out" / "report.txt").read_text() == (
        f"checked 3 files: 4 flags (by level: {by_level})\nbinary files skipped: 1 (a NUL byte near the "
        "start: an image, a PDF, an archive; or UTF-16 without a byte-order mark)\nundecodable bytes "
        "replaced by U+FFFD: 1 (is the input UTF-8?)\n"
    )


def test_the_check_job_command(spark, model_dir, tmp_path, capsys):
    from nbspark.app.cli import check_main
    from tests.conftest import spark_submit

    doc = tmp_path / "doc.txt"
    doc.write_text(TEXT)
    done = spark_submit(
        "check",
        "--model",
        model_dir,
        "--text",
        doc,
        "--out",
        tmp_path / "out",
        "--rule",
        "chain",
        "--factor",
        "5",
    )
    assert done.returncode == 0, done.stderr
    assert "checked 1 file: 2 flags (by level: " in done.stdout and "undecodable" not in done.stdout
    # the same job in this process (its session the tests'): an output that holds something is refused
    capsys.readouterr()
    assert check_main(["--model", str(model_dir), "--text", str(doc), "--out", str(tmp_path / "out")]) == 1
    assert "already holds something" in capsys.readouterr().err


def test_a_rule_and_factor_per_confusion_set(model_dir):
    from nbspark.backoff.events import count_ddl
    from nbspark.backoff.predictor import BackoffPredictor
    from nbspark.settings.config import ConfigError
    from nbspark.storage.counts import read_count_rows

    model = nbspark.load(model_dir)
    rows = read_count_rows(model_dir, count_ddl(model.letters), model.manifest)
    config = {
        **model.manifest["config"],
        "check": {"rules": ["chain", "interpolate"], "factors": [6.0, 1000.0]},
    }
    per_set = BackoffPredictor({**model.manifest, "config": config}, rows)
    assert (
        per_set.rule_for(["effect", "affect"])[1] == 6.0
        and per_set.rule_for(["there", "their"])[0].name == "interpolate"
    )
    assert [(f["line"], f["ratio"]) for f in per_set.flags(TEXT)] == [
        (1, 6.0),
        (3, float("inf")),
    ]  # chain at 6: both
    with pytest.raises(ConfigError, match="one value per confusion set"):
        load_config(None, {"confusion_sets": "affect,effect;their,there", "check.factors": "10"})


def test_a_snippet_is_cut_as_the_whole_line_would_be_cut():
    """``_snippet`` searches only ``around`` characters each side for the line's ends (a text of one
    very long line stays linear); on random texts it equals the rule stated on whole lines."""
    import random

    from nbspark.backoff.predictor import _snippet

    def whole_line(text, start, length, around):
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        left, right = max(line_start, start - around), min(line_end, start + length + around)
        return ("…" if left > line_start else "") + text[left:right] + ("…" if right < line_end else "")

    rng = random.Random(1)
    for _ in range(5000):
        text = "".join(rng.choice("ab \n") for _ in range(rng.randint(1, 120)))
        start = rng.randrange(len(text))
        length = rng.randint(0, len(text) - start)
        if "\n" not in text[start : start + length]:  # a word holds no line end
            around = rng.choice([0, 1, 5, 25])
            assert _snippet(text, start, length, around) == whole_line(text, start, length, around)
