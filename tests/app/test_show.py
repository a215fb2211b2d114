"""``nbspark show``: a model directory described in lines or as JSON, without Spark; a directory
that holds no model, or a bad ``--top``, refused in one line."""

import json

import pytest

import nbspark
from nbspark.app.command import main


@pytest.fixture()
def sms_like(tmp_path):
    texts = ["win cash now", "win a prize", "lunch at noon", "see you at lunch", "cash prize now"]
    labels = ["spam", "spam", "ham", "ham", "spam"]
    nbspark.NaiveBayes(tokenizer="words").fit(texts, labels).save(tmp_path / "m")
    return tmp_path / "m"


def test_show_prints_what_a_model_holds(sms_like, capsys):
    assert main(["show", "--model", str(sms_like), "--top", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == str(sms_like)
    assert out[1].startswith("  naive Bayes model, multinomial; version 1, trained ")
    assert "  examples per class: ham 2 (40.0 %), spam 3 (60.0 %)" in out
    assert "  tokens: 10; those that speak most for each class" in out
    # spam counts win 2, cash 2, prize 2, now 2, a 1 of 9; ham lunch 2, at 2, noon 1, see 1, you 1 of 7
    ham, spam = (line.split() for line in out[-2:])
    assert ham[0] == "ham" and ham[1] == "at" and ham[3] == "lunch"  # a tie: the token first
    assert spam[0] == "spam" and spam[1:5:2] == ["cash", "now"]


def test_show_json_and_refusals(sms_like, tmp_path, capsys):
    assert main(["show", "--model", str(sms_like), "--json", "--top", "0"]) == 0
    described = json.loads(capsys.readouterr().out)
    assert described["classes"] == ["ham", "spam"] and "indicative_tokens" not in described
    assert described["stats"]["documents"] == 5 and described["updates"][0]["format"] is not None
    assert main(["show", "--model", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("nbspark show: error: ") and "no such model directory" in err and "\n" not in err
    with pytest.raises(SystemExit) as refused:
        main(["show", "--model", str(sms_like), "--top", "-1"])
    assert refused.value.code == 2 and "--top must be >= 0" in capsys.readouterr().err


def test_show_names_the_first_records_skipped(tmp_path, capsys):
    (tmp_path / "sms.txt").write_text("spam\tfree money now\nno tab on this line\nham\tsee you at six\n")
    sets = [
        "--set",
        "task=naive_bayes",
        "--set",
        "train.format=sms",
        "--set",
        f"train.path={tmp_path / 'sms.txt'}",
    ]
    assert main(["train", "-q", "--in-process", *sets, "--out", str(tmp_path / "m")]) == 0
    capsys.readouterr()
    assert main(["show", "--model", str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out.splitlines()
    at = out.index("  the first records skipped:")
    assert (
        out[at + 1].startswith(f"    {tmp_path / 'sms.txt'}:2 (") and "'no tab on this line'" in out[at + 1]
    )


def test_a_reader_that_stops_reading_ends_the_command_quietly():
    """``nbspark config show | head -0``: the pipe closed before the command writes ends it with
    141 (128 + SIGPIPE), as it ends Unix tools, and no traceback (there was one, BrokenPipeError)."""
    import subprocess
    import sys

    command = subprocess.Popen(
        [sys.executable, "-m", "nbspark", "config", "show"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    command.stdout.close()
    said = command.stderr.read()
    assert command.wait() == 141 and said == b""
    # a job's report (spark-submit jobs/*.py, nbspark query …) ends so too: not "error: [Errno 32]"
    report = "from nbspark.app.cli import _run; import sys; sys.exit(_run('query', lambda: print('P' * 99)))"
    job = subprocess.Popen([sys.executable, "-c", report], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    job.stdout.close()
    said = job.stderr.read()
    assert job.wait() == 141 and said == b""
