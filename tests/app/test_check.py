"""``nbspark check`` on folders as writers keep them: texts beside pictures and PDFs (no JVM)."""

import gzip

import pytest

import nbspark
from nbspark.app.command import main
from nbspark.inputs.files import BINARY_PROBE, decode_text

WRONG = "It would not effect the outcome.\n"
#: the head of a PNG (its signature, then a chunk's length: NUL bytes), and the words that the model
#: would flag in it, read as text
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + WRONG.encode() + bytes(range(256))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("check") / "m"
    windows = ["would not _ the outcome"] * 6 + ["the cumulative _ of the"] * 6
    nbspark.Backoff().fit(windows, ["affect"] * 6 + ["effect"] * 6).save(out)
    return out


def test_binary_bytes_are_no_text_and_text_is_text():
    """A NUL byte in the first ``BINARY_PROBE`` bytes (after decompression) is a binary file, as git
    and grep decide; UTF-16 with its byte-order mark holds NULs and is text; a NUL further on is a
    character of a text."""
    assert decode_text(PNG, "p.png") == ("", 0, True)
    assert decode_text(gzip.compress(PNG), "p.png.gz").binary
    assert decode_text(b"\xff\xfe" + WRONG.encode("utf-16-le"), "u.txt") == (WRONG, 0, False)
    late = b"x" * BINARY_PROBE + b"\x00"
    assert decode_text(late, "late.txt") == (late.decode(), 0, False)
    assert decode_text(late[1:], "early.txt").binary


def test_a_folder_is_checked_without_its_binary_files(model_dir, tmp_path, capsys):
    """A picture in a folder of essays was read as UTF-8: a warning asking whether it was UTF-8, and
    the words among its bytes checked (flagged here). It is skipped, and the summary names it."""
    docs = tmp_path / "docs"
    (docs / "img").mkdir(parents=True)
    (docs / "a.txt").write_text(WRONG)
    (docs / "img" / "p.png").write_bytes(PNG)
    (docs / "u16.txt").write_bytes(b"\xff\xfe" + WRONG.encode("utf-16-le"))
    assert main(["check", "--model", str(model_dir), str(docs)]) == 0
    out, err = capsys.readouterr()
    flag = ": 'effect' → 'affect'? (ratio 388961.0, level ABDE) It would not effect the outcome."
    assert out.splitlines() == [f"{docs}/a.txt:1:14{flag}", f"{docs}/u16.txt:1:14{flag}"]
    # (the logger's prefix is the first command's of this process: "nbspark" run alone)
    assert err.split(": ", 1)[1] == (
        f"checked 2 files (1 binary skipped: {docs}/img/p.png): 2 of 2 confusion-set words "
        "flagged; the model checks affect/effect, and no other words\n"
    )


def test_a_binary_file_named_is_said_at_once(model_dir, tmp_path, capsys):
    """A binary file given by name is not checked either, and is said on its own line, even with
    ``-q``; the other files are checked, and the exit status is 2, an error, not 0: a CI step that
    names a file it cannot check has not passed."""
    picture = tmp_path / "p.png"
    picture.write_bytes(PNG)
    text = tmp_path / "a.txt"
    text.write_text(WRONG)
    assert main(["-q", "check", "--model", str(model_dir), "--fail-on-flag", str(picture)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (
        f"nbspark check: {picture}: not text (a NUL byte near its start: an image, a PDF, an archive; "
        "or UTF-16 without a byte-order mark); not checked\n"
    )
    assert main(["-q", "check", "--model", str(model_dir), str(picture), str(text)]) == 2
    out, err = capsys.readouterr()
    assert out.startswith(f"{text}:1:14: 'effect' → 'affect'?") and err.count("not checked") == 1


def test_predict_refuses_binary_stdin(tmp_path, capsys, monkeypatch):
    import io

    model = tmp_path / "nb"
    nbspark.NaiveBayes().fit(["win cash", "see you"], ["spam", "ham"]).save(model)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(PNG)))
    assert main(["predict", "--model", str(model), "-"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(
        "nbspark predict: error: stdin is not text: a NUL byte near its start"
    )
    nbspark.Density().fit([{"a": "x"}]).save(tmp_path / "d")  # a table's rows: --csv - refuses it too
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(PNG)))
    assert main(["predict", "--model", str(tmp_path / "d"), "--csv", "-"]) == 1
    assert capsys.readouterr().err.startswith("nbspark predict: error: stdin is not text: a NUL byte")


def test_a_closed_stdin_or_stdout_is_said_in_one_line(model_dir, tmp_path, capsys, monkeypatch):
    """``-`` with stdin closed (``<&-``: ``sys.stdin`` is None) was a traceback in predict, predict
    --csv and check, and so was any command with stdout closed; now one line and an error code."""
    nbspark.NaiveBayes().fit(["win cash", "see you"], ["spam", "ham"]).save(tmp_path / "nb")
    nbspark.Density().fit([{"a": "x"}, {"a": "y"}]).save(tmp_path / "d")
    monkeypatch.setattr("sys.stdin", None)
    for argv, code in (
        (["predict", "--model", str(tmp_path / "nb"), "-"], 1),
        (["predict", "--model", str(tmp_path / "d"), "--csv", "-"], 1),
        (["check", "--model", str(model_dir), "-"], 2),
    ):
        assert main(argv) == code
        said = capsys.readouterr().err
        assert said.endswith("error: '-' reads stdin, and this command's stdin is closed\n"), said
    monkeypatch.undo()
    monkeypatch.setattr("sys.stdout", None)  # >&-: every report would vanish, and flush was a traceback
    assert main(["config"]) == 2 and capsys.readouterr().err == (
        "nbspark: error: stdout is closed: where would the answer go?\n"
    )
