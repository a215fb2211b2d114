"""``nbspark predict --csv``: a CSV's rows scored by a table or density model in process (no JVM),
checked against the model's own ``predict_proba`` / ``score_samples`` on the rows as Python's
``csv`` module reads them."""

import csv
import io
import json

import pytest

import nbspark
from nbspark.app.command import main
from tests.conftest import FIXTURES

WEATHER = FIXTURES / "weather.csv"


def _predicted(capsys, *argv) -> list[dict]:
    assert main(["predict", *argv, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _same_posteriors(got: list[dict], model, rows) -> None:
    """Each result's probabilities, in the model's class order, are ``model.predict_proba(rows)``'s."""
    expected = model.predict_proba(rows)
    assert len(got) == len(expected)
    for g, p in zip(got, expected):
        assert [g["probabilities"][c] for c in model.classes_] == pytest.approx(list(p), abs=1e-12)


@pytest.fixture(scope="module")
def weather_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("weather") / "m"
    settings = {
        "task": "naive_bayes",
        "nb.model": "mixed",
        "nb.label_column": "play",
        "train.path": str(WEATHER),
    }
    return nbspark.fit(None, out, settings=settings), out


def test_a_csvs_rows_score_as_the_model_scores_them(weather_model, capsys, monkeypatch):
    """Each row of the file, numbers and categories, in order; from stdin the same; the label column
    is no feature, and an id column is left out with --extra-column."""
    model, path = weather_model
    rows = list(csv.DictReader(WEATHER.open()))
    got = _predicted(capsys, "--model", str(path), "--csv", str(WEATHER))
    assert [g["label"] for g in got] == list(model.predict(rows)) and len(got) == len(rows) == 15
    _same_posteriors(got, model, rows)
    assert [json.loads(g["text"]) for g in got] == rows  # the row, as read
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(WEATHER.read_bytes())))
    assert _predicted(capsys, "--model", str(path), "--csv", "-") == got
    with_id = io.StringIO()
    writer = csv.DictWriter(with_id, ["id", *rows[0]])
    writer.writeheader()
    writer.writerows({"id": i, **r} for i, r in enumerate(rows))
    (path.parent / "ids.csv").write_text(with_id.getvalue())
    ided = _predicted(
        capsys, "--model", str(path), "--csv", str(path.parent / "ids.csv"), "--extra-column", "id"
    )
    assert [g["probabilities"] for g in ided] == [g["probabilities"] for g in got]


def test_a_decimal_comma_models_rows_are_read_as_it_counted_them(tmp_path, capsys, caplog):
    """A model counted from ';'-separated cells with decimal commas scores that file's rows with
    that delimiter and mark (its numbers 1,75 read as 1.75, not refused), and says which setting
    to change when a file's header is one column."""
    (tmp_path / "e.csv").write_text("height;colour;label\n1,75;red;y\n1,6;blue;n\n-0,5;red;y\n2;blue;n\n")
    settings = {
        "task": "naive_bayes",
        "nb.model": "mixed",
        "train.path": str(tmp_path / "e.csv"),
        "train.delimiter": ";",
        "train.decimal": ",",
    }
    model = nbspark.fit(None, tmp_path / "m", settings=settings)
    rows = [
        {"height": h, "colour": c} for h, c in ((1.75, "red"), (1.6, "blue"), (-0.5, "red"), (2.0, "blue"))
    ]
    got = _predicted(capsys, "--model", str(tmp_path / "m"), "--csv", str(tmp_path / "e.csv"))
    _same_posteriors(got, model, rows)
    (tmp_path / "p.csv").write_text("height|colour\n1,75|red\n")
    assert main(["predict", "--model", str(tmp_path / "m"), "--csv", str(tmp_path / "p.csv")]) == 1
    assert f"{tmp_path / 'p.csv'} row 2 has none of the model's columns" in capsys.readouterr().err  # its row
    assert (
        "its header is one column, 'height|colour': are its cells separated by '|'? Set --delimiter '|'"
        in (caplog.text)
    )
    got = _predicted(
        capsys, "--model", str(tmp_path / "m"), "--csv", str(tmp_path / "p.csv"), "--delimiter", "|"
    )
    _same_posteriors(got, model, rows[:1])


def test_a_density_model_scores_a_csvs_rows(weather_model, tmp_path, capsys):
    density = nbspark.fit(None, tmp_path / "d", settings={"task": "density", "train.path": str(WEATHER)})
    rows = list(csv.DictReader(WEATHER.open()))
    got = _predicted(capsys, "--model", str(tmp_path / "d"), "--csv", str(WEATHER))
    assert [g["log_density"] for g in got] == pytest.approx(list(density.score_samples(rows)), abs=1e-12)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--csv", "WEATHER", "a"], "give TEXT or --csv, not both"),
        ([], "give TEXT (or '-') or --csv FILE"),
        (["--delimiter", ";", "x"], "--delimiter applies to --csv"),
        (["--csv", "NOPE"], "nope.csv: no such file"),
        (["--csv", "DIR"], ": a directory, not a CSV file"),
        (["--csv", "FIFO"], "fifo: neither a file nor a directory (a pipe or a device)"),  # not "a directory"
        (["--csv", "PNG"], "p.png.gz is not text: a NUL byte near its start (an image"),  # its rows were keys
        (["--csv", "CUT"], "cut.csv.gz: cannot be read as gzip (Compressed file ended before"),
    ],
)
def test_what_predict_csv_refuses(weather_model, tmp_path, capsys, argv, says):
    import os

    _, path = weather_model
    import gzip

    os.mkfifo(tmp_path / "fifo")
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"  # a header line, then a NUL
    (tmp_path / "p.png.gz").write_bytes(gzip.compress(png))
    (tmp_path / "cut.csv.gz").write_bytes(gzip.compress(WEATHER.read_bytes())[:60])
    named = {
        "WEATHER": WEATHER,
        "NOPE": tmp_path / "nope.csv",
        "DIR": tmp_path,
        "FIFO": tmp_path / "fifo",
        "PNG": tmp_path / "p.png.gz",
        "CUT": tmp_path / "cut.csv.gz",
    }
    argv = [str(named.get(a, a)) for a in argv]
    try:
        code = main(["predict", "--model", str(path), *argv])
    except SystemExit as exc:  # argparse's refusal of the command line
        code = exc.code
    assert code in (1, 2) and says in capsys.readouterr().err


def test_a_text_model_takes_no_csv(tmp_path, capsys):
    nbspark.NaiveBayes().fit(["win cash", "see you"], ["spam", "ham"]).save(tmp_path / "nb")
    assert main(["predict", "--model", str(tmp_path / "nb"), "--csv", str(WEATHER)]) == 1
    assert capsys.readouterr().err == (
        "nbspark predict: error: a CSV's rows are for a table or density model; this model scores texts\n"
    )


def test_predict_answers_each_line_of_stdin_once_it_is_read(weather_model, tmp_path):
    """``predict -`` is a filter: a line written to a pipe that stays open is answered before the
    next is written (it read stdin to its end first, so that ``tail -f | nbspark predict -`` said
    nothing), and a bad line later names its number, the lines before it answered."""
    import select
    import subprocess
    import sys

    model, path = weather_model
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbspark", "predict", "--model", str(path), "--json", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    rows = [{"outlook": "sunny", "humidity": 90}, {"outlook": "overcast", "windy": "TRUE"}]
    answers = []
    try:
        for row in rows:
            proc.stdin.write((json.dumps(row) + "\n").encode())
            proc.stdin.flush()
            assert select.select([proc.stdout], [], [], 60)[0], "no answer while stdin stays open"
            answers.append(json.loads(proc.stdout.readline()))
        proc.stdin.write(b"\n")  # a table model's row is a JSON object, not an empty line
        proc.stdin.close()
        assert proc.wait(60) == 1 and proc.stdout.read() == b""
    finally:
        proc.kill()
    assert [a["label"] for a in answers] == list(model.predict(rows))
    assert proc.stderr.read().decode().startswith("nbspark predict: error: <stdin> line 3: a table model")


def test_stdins_batches_are_its_lines_as_one_read_of_it_gives_them(monkeypatch):
    """``_stdin_batches`` in reads of 7 bytes (a character, a line end and a CRLF cut between reads)
    gives the lines, numbers and undecodable count of the whole text decoded at once
    (``decode_text``: its byte-order mark dropped, universal newlines)."""
    import io

    from nbspark.app import predict
    from nbspark.inputs.files import decode_text

    data = "\ufeffcafé au lait\r\nnaïve\rΣ one\n\ntwo €\r\nend".encode() + b"\xff no UTF-8\nlast"
    text, replaced, _ = decode_text(data, "-")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    said = []
    monkeypatch.setattr(predict, "report_undecodable", lambda cmd, name, n: said.append(n))
    batches = list(predict._stdin_batches(7))
    assert len(batches) > 4 and [line for _, b in batches for line in b] == text.splitlines()
    assert [n for n, _ in batches] == [1 + sum(len(b) for _, b in batches[:i]) for i in range(len(batches))]
    assert said == [replaced] == [1]


def test_ctrl_c_stops_a_filter_as_a_shells_tools_stop(weather_model):
    """SIGINT to ``predict -`` waiting on an open pipe: ended by SIGINT (so that a calling shell
    stops too) and nothing on stderr (it was a KeyboardInterrupt traceback), the answers before it
    given."""
    import select
    import signal
    import subprocess
    import sys

    _, path = weather_model
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbspark", "predict", "--model", str(path), "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's job has it
    )
    try:
        proc.stdin.write(b'{"outlook": "sunny"}\n')
        proc.stdin.flush()
        assert select.select([proc.stdout], [], [], 60)[0]
        assert proc.stdout.readline().split()[0] in (b"yes", b"no")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == -signal.SIGINT and proc.stderr.read() == b""
    finally:
        proc.kill()


def test_predict_csv_answers_each_batch_of_rows_once_it_is_read(weather_model):
    """``--csv -`` is a filter too: a row written to a pipe that stays open is answered before the
    next is written (stdin was read to its end first), and a bad row later is named by its row as a
    spreadsheet counts (the header row 1), the rows before it answered."""
    import select
    import subprocess
    import sys

    model, path = weather_model
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbspark", "predict", "--model", str(path), "--json", "--csv", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines = WEATHER.read_text().splitlines()
    rows = list(csv.DictReader(lines[:3]))
    answers = []
    try:
        proc.stdin.write((lines[0] + "\n").encode())
        for line in lines[1:3]:
            proc.stdin.write((line + "\n").encode())
            proc.stdin.flush()
            assert select.select([proc.stdout], [], [], 60)[0], "no answer while stdin stays open"
            answers.append(json.loads(proc.stdout.readline()))
        proc.stdin.write(b"sunny,85,high,FALSE,no\n")  # humidity is a number in this model
        proc.stdin.close()
        assert proc.wait(60) == 1 and proc.stdout.read() == b""
    finally:
        proc.kill()
    _same_posteriors(answers, model, rows)
    assert proc.stderr.read().decode() == (
        "nbspark predict: error: <stdin> row 4, column 'humidity': 'high' is not a number\n"
    )


def test_a_large_csv_scores_in_batches_as_it_scores_whole(weather_model, tmp_path, capsys):
    """A CSV of several reads (over 64 KB), a short row and a long one among its rows, empty lines
    and CRLF line ends: the rows as Python's ``csv`` module reads them (a short row's missing cells
    None, a long row's extra cells dropped), each scored as ``predict_proba`` scores it."""
    model, path = weather_model
    lines = WEATHER.read_text().splitlines()
    body = [*lines[1:] * 300]
    body[100], body[2000] = "rainy,70", body[2000] + ",extra,cells"
    (tmp_path / "big.csv").write_bytes(("\r\n".join([lines[0], "", *body]) + "\r\n").encode())
    assert (tmp_path / "big.csv").stat().st_size > 1 << 16
    header = lines[0].split(",")
    rows = [dict(zip(header, (r.split(",") + [None] * 5)[:5])) for r in body]
    got = _predicted(capsys, "--model", str(path), "--csv", str(tmp_path / "big.csv"))
    assert len(got) == len(rows) == 4500 and json.loads(got[100]["text"])["humidity"] is None
    _same_posteriors(got, model, rows)
