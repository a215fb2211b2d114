"""The server as LanguageTool's clients and other programs use it: ``language_tool_python`` (a real
client), ``/v1/predict`` against ``nbspark predict --json``, and every bad request answered as
documented while other clients are served."""

import json
import logging
import math
import socket
import threading
import time

import language_tool_python
import pytest
import requests

from nbspark.app.command import main
from nbspark.serve.app import REQUESTS, Limits
from tests.serve.conftest import FIXTURE_LIMITS, running

TEXT = "It would not effect the outcome. The cumulative effect of the plan was small."


@pytest.fixture(scope="module")
def served(checker_model, nb_model):
    with running([checker_model, f"china={nb_model}"]) as (url, models):
        yield url, models


@pytest.fixture(scope="module")
def tool(served):
    client = language_tool_python.LanguageTool("en-US", remote_server=served[0])
    yield client
    client.close()


@pytest.mark.parametrize("before", ["", "😀 ", "中文 ", "😀中 "])
def test_a_real_client_gets_one_match_and_the_corrected_text(tool, before):
    text = before + TEXT
    (match,) = tool.check(text)
    assert match.replacements == ["affect"]
    assert match.rule_id == "NBSPARK_AFFECT_EFFECT"
    # the client turns LanguageTool's UTF-16 offsets into Python's: the written word, whatever came before
    assert text[match.offset : match.offset + match.error_length] == "effect"
    assert match.offset == len(before) + 13
    assert tool.correct(text) == before + TEXT.replace("not effect", "not affect")


def test_a_clients_rule_lists_apply(served, tool):
    tool.disabled_rules = {"NBSPARK_AFFECT_EFFECT"}
    try:
        assert tool.check(TEXT) == []
    finally:
        tool.disabled_rules = set()
    tool.enabled_rules, tool.enabled_rules_only = {"NBSPARK_THEIR_THERE"}, True
    try:
        assert tool.check(TEXT) == []
    finally:
        tool.enabled_rules, tool.enabled_rules_only = set(), False
    assert len(tool.check(TEXT)) == 1


def test_languages_models_and_annotated_text(served):
    url, _ = served
    languages = requests.get(f"{url}/v2/languages", timeout=10).json()
    assert {"name": "English (US)", "code": "en", "longCode": "en-US"} in languages
    listed = {m["name"]: m for m in requests.get(f"{url}/v1/models", timeout=10).json()["models"]}
    assert set(listed) == {"checker", "china"}
    assert listed["checker"]["kind"] == "backoff" and listed["checker"]["version"] == 1
    assert [r["id"] for r in listed["checker"]["rules"]] == ["NBSPARK_AFFECT_EFFECT", "NBSPARK_THEIR_THERE"]
    assert listed["china"]["kind"] == "multinomial" and listed["china"]["classes"] == ["c", "j"]
    for path, wrong in (("/v2/languages", "POST"), ("/v1/models", "DELETE"), ("/v1/predict", "GET")):
        assert requests.request(wrong, f"{url}{path}", timeout=10).status_code == 405
    data = json.dumps(
        {
            "annotation": [
                {"markup": "<p>"},
                {"text": "It would not "},
                {"markup": "<b>"},
                {"text": "effect the outcome."},
            ]
        }
    )
    body = requests.post(f"{url}/v2/check", data={"data": data, "language": "en-US"}, timeout=10).json()
    (m,) = body["matches"]
    assert (m["offset"], m["length"]) == (3 + 13 + 3, 6)  # in the document, markup included
    assert m["nbspark"]["level"] == "ABDE" and m["nbspark"]["ratio"] == 6.0  # 6 against 1, counted by hand


def test_half_an_emoji_in_json_is_one_utf16_unit_and_comes_back(served):
    """A JSON string may hold a lone surrogate (``\\ud83d``, half an emoji: a JavaScript string cut
    in two); it has no UTF-8, so the answer escapes it, and it counts one UTF-16 unit, as in Java."""
    url, _ = served
    data = '{"annotation": [{"text": "\\ud83d "}, {"text": "' + TEXT + '"}]}'
    answer = requests.post(f"{url}/v2/check", data={"data": data, "language": "en-US"}, timeout=10)
    (m,) = answer.json()["matches"]
    assert (m["offset"], m["length"]) == (2 + 13, 6)
    assert m["context"]["text"].startswith("\ud83d It would not effect")
    body = '{"model": "china", "texts": ["\\ud800 Chinese", "Chinese"]}'
    (half, whole) = requests.post(f"{url}/v1/predict", data=body, timeout=10).json()["results"]
    assert half["label"] == whole["label"] == "c" and half["text"] == "\ud800 Chinese"


def _predict_json(args) -> list[dict]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["predict", "--json", *args]) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_predictions_are_the_commands_objects(served, checker_model, nb_model):
    url, _ = served
    texts = ["Chinese Chinese Tokyo", "Tokyo Japan"]
    got = requests.post(f"{url}/v1/predict", json={"model": "china", "texts": texts}, timeout=10).json()
    assert got["model"] == "china" and got["version"] == 1
    assert got["results"] == _predict_json(["--model", str(nb_model), *texts])
    mixed = ["would not _ the outcome", TEXT]  # a window, and a text whose set words are scored
    got = requests.post(f"{url}/v1/predict", json={"model": "checker", "texts": mixed}, timeout=10).json()
    assert got["results"] == _predict_json(["--model", str(checker_model), *mixed])
    assert [r["label"] for r in got["results"]] == ["affect", "affect", "effect"]
    assert got["results"][0]["probability"] == 6 / 7
    got = requests.post(
        f"{url}/v1/predict", json={"model": "checker", "windows": mixed[:1]}, timeout=10
    ).json()
    assert got["results"] == _predict_json(["--model", str(checker_model), *mixed[:1]])


@pytest.mark.parametrize(
    "body, status, says",
    [
        ({"model": "nope", "texts": ["a"]}, 404, "no model 'nope'"),
        ({"texts": ["a"]}, 400, "name the model to use in 'model': one of "),
        ({"model": ["checker"], "texts": ["a"]}, 400, "'model' is a model's name, a string"),
        ({"model": "china", "rows": [{"a": "1"}]}, 400, "scores texts, not rows"),
        ({"model": "china", "texts": "a"}, 400, "as a JSON list"),
        ({"model": "checker", "windows": ["would _ the"]}, 400, "a window has 5 tokens"),
        # said in JSON's words: Python's refusal spoke of a matrix and CountVectorizer
        ({"model": "china", "texts": [[1, 2]]}, 400, "each of 'texts' is a JSON string; item 0 is [1, 2]"),
        ({"model": "checker", "windows": ["would not _ the outcome", None]}, 400, "item 1 is null"),
        ([1, 2], 400, "a JSON object"),
        # a misspelt key is refused, not ignored: here every column would have been scored
        (
            {"model": "china", "texts": ["a"], "extra_colums": ["id"]},
            400,
            "unknown key(s) 'extra_colums'; the keys: model, texts, windows, rows, extra_columns",
        ),
        # columns to leave out of rows, for a model of texts: refused, not ignored
        (
            {"model": "china", "texts": ["a"], "extra_columns": ["id"]},
            400,
            "a multinomial model scores texts",
        ),
        ({"model": "checker", "texts": ["a"], "extra_columns": ["id"]}, 400, "a backoff model takes none"),
    ],
)
def test_bad_predictions_are_4xx_in_one_line(served, body, status, says):
    r = requests.post(f"{served[0]}/v1/predict", json=body, timeout=10)
    assert r.status_code == status and says in r.text and "\n" not in r.text.strip()


@pytest.mark.parametrize(
    "body, says",
    [
        ("[" * 100_000 + "]" * 100_000, "JSON nested too deep to read"),
        ('{"model": "china", "texts": [NaN]}', "not valid JSON: NaN is not a JSON number"),
        ('{"model": "china", "rows": [{"a": -Infinity}]}', "-Infinity is not a JSON number"),
        ('{"model": "china", "rows": [{"a": 1e400}]}', "1e400 is past a double's range"),
    ],
)
def test_json_that_python_reads_but_no_answer_holds_is_a_400(served, body, says):
    """Python's parser reads NaN, Infinity and 1e400 (no answer could write them back) and recurses
    once per level (a 1 MiB body nests 500,000 deep): each was a 500."""
    url, _ = served
    r = requests.post(f"{url}/v1/predict", data=body, timeout=10)
    assert r.status_code == 400 and r.text.startswith("Error: the body ") and says in r.text
    r = requests.post(f"{url}/v2/check", data={"data": body, "language": "en-US"}, timeout=10)
    assert r.status_code == 400 and r.text.startswith("Error: 'data' ") and says in r.text


def _raw(url: str, request: bytes, wait: float = 10.0) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as s:
        s.sendall(request)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                break
        return b"".join(chunks)


def test_bad_requests_are_answered_as_languagetool_answers(served):
    url, _ = served
    check = f"{url}/v2/check"
    cases = [
        ({"language": "en-US"}, 400, "Error: Missing 'text' or 'data' parameter"),
        ({"text": "a", "language": "xx-YY"}, 400, "Error: 'xx-YY' is not a language code known"),
        ({"data": "{not json", "language": "en-US"}, 400, "Error: 'data' is not valid JSON"),
    ]
    for fields, status, says in cases:
        r = requests.post(check, data=fields, timeout=10)
        assert (r.status_code, r.headers["content-type"].split(";")[0]) == (status, "text/plain")
        assert r.text.startswith(says)
    r = requests.post(
        check,
        data=b"language=en-US&text=caf\xe9",  # Latin-1, not UTF-8
        headers={"content-type": "application/x-www-form-urlencoded"},
        timeout=10,
    )
    assert (r.status_code, r.text) == (400, "Error: the request is not valid UTF-8")
    r = requests.post(check, data={"language": "en-US", "text": "caf%E9"}, timeout=10)
    assert r.status_code == 200  # a percent sign in the text is text
    r = requests.post(
        check,
        data="language=en-US&text=caf%E9",
        headers={"content-type": "application/x-www-form-urlencoded"},
        timeout=10,
    )
    assert (r.status_code, r.text) == (400, "Error: the request is not valid UTF-8")
    r = requests.get(f"{check}?language=en-US&text=caf%E9", timeout=10)  # in the query string too
    assert (r.status_code, r.text) == (400, "Error: the request is not valid UTF-8")
    r = requests.post(check, json={"text": TEXT, "language": "en-US"}, timeout=10)
    assert r.status_code == 415 and "not application/json" in r.text


def test_the_fields_may_come_in_the_query_string(served):
    """LanguageTool takes a check as a GET with a query string, or a POST whose body's fields
    follow (and override) its query string's."""
    check = f"{served[0]}/v2/check"
    posted = requests.post(check, data={"text": TEXT, "language": "en-US"}, timeout=10).json()
    assert [m["offset"] for m in posted["matches"]] == [13]
    assert requests.get(check, params={"text": TEXT, "language": "en-US"}, timeout=10).json() == posted
    mixed = requests.post(
        f"{check}?language=xx-YY&text=nothing", data={"text": TEXT, "language": "en-US"}, timeout=10
    )
    assert mixed.json() == posted


def _head(length: int) -> bytes:
    return (
        b"POST /v2/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: %d\r\n\r\n" % length
    )


def test_a_huge_body_and_a_slow_client_do_not_hold_the_others(checker_model):
    limits = Limits(max_bytes=10_000, seconds=1.0, factor=FIXTURE_LIMITS.factor, rule=FIXTURE_LIMITS.rule)
    with running([checker_model], limits) as (url, _):
        # 100 MB announced: refused before a byte of it is read
        start = time.monotonic()
        head = _raw(
            url,
            _head(104_857_600) + b"language=en",
        )
        assert head.startswith(b"HTTP/1.1 413") and time.monotonic() - start < 5
        # over the limit without announcing it (chunked): refused once the limit is passed
        r = requests.post(
            f"{url}/v2/check",
            data=iter([b"language=en-US&text=", b"a" * 20_000]),
            headers={"content-type": "application/x-www-form-urlencoded"},
            timeout=10,
        )
        assert r.status_code == 413 and "10,000 bytes" in r.text
        # a slow-loris client: headers, then a body that never comes; others are answered meanwhile
        answers = []
        slow = threading.Thread(
            target=lambda: answers.append(
                _raw(
                    url,
                    _head(500) + b"language=en",
                )
            )
        )
        slow.start()
        served_meanwhile = [
            requests.post(f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, timeout=5).status_code
            for _ in range(5)
        ]
        slow.join(10)
        assert served_meanwhile == [200] * 5
        assert answers and answers[0].startswith(b"HTTP/1.1 408")


def test_one_log_line_per_request(served, caplog):
    def lines():
        return [r.getMessage() for r in caplog.records if r.name == REQUESTS]

    with caplog.at_level(logging.INFO, logger=REQUESTS):
        requests.get(f"{served[0]}/v2/languages", timeout=10)
        requests.post(f"{served[0]}/v2/check", data={"language": "en-US"}, timeout=10)
        head = requests.head(f"{served[0]}/v2/languages", timeout=10)
        deadline = time.monotonic() + 5  # a line is written once its answer is sent: after the client has it
        while len(lines()) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    lines = lines()
    assert len(lines) == 3
    method, path, status, size, ms, unit = lines[1].split()
    assert (method, path, status, unit) == ("POST", "/v2/check", "400", "ms")
    assert int(size) == len("Error: Missing 'text' or 'data' parameter") and float(ms) >= 0
    assert (head.status_code, head.content) == (200, b"")
    assert lines[2].split()[:4] == ["HEAD", "/v2/languages", "200", "0"]  # no body went out


def test_a_server_that_cannot_serve_says_so_in_one_line_before_binding(
    checker_model, nb_model, tmp_path, capsys
):
    assert main(["serve", "--model", str(tmp_path / "nothing"), "--port", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("nbspark serve: error: ") and "no such model directory" in err and "\n" not in err
    # two models checking one set: which would answer?
    assert (
        main(["serve", "--model", f"a={checker_model}", "--model", f"b={checker_model}", "--port", "0"]) == 2
    )
    assert "models 'a' and 'b' both check 'affect'" in capsys.readouterr().err
    assert main(["serve", "--model", f"a={checker_model}", "--model", f"a={checker_model}"]) == 2
    assert "two models named 'a'" in capsys.readouterr().err
    # the checker's settings with no checker served: they would be ignored
    for option, value in (("--factor", "20"), ("--rule", "chain")):
        assert main(["serve", "--model", str(nb_model), option, value, "--port", "0"]) == 2
        assert "--factor and --rule set how a backoff model checks text" in capsys.readouterr().err
    # a port that is not one, and one that is taken: a line each, no traceback
    with pytest.raises(SystemExit) as exit:
        main(["serve", "--model", str(checker_model), "--port", "99999"])
    assert exit.value.code == 2 and "--port must be <= 65535, got 99999" in capsys.readouterr().err
    for option, value, says in (
        ("--timeout", "inf", "--timeout must be a finite number, got inf"),
        ("--reload-seconds", "nan", "--reload-seconds must be a finite number, got nan"),
        ("--max-bytes", "0", "--max-bytes must be >= 1, got 0"),
        ("--workers", "0", "--workers must be >= 1, got 0"),
    ):
        with pytest.raises(SystemExit) as exit:
            main(["serve", "--model", str(checker_model), option, value])
        assert exit.value.code == 2 and says in capsys.readouterr().err
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["serve", "--model", str(checker_model), "--port", str(port)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"nbspark serve: error: 127.0.0.1:{port} is in use (choose another --port)"
    assert (
        main(["serve", "--model", str(checker_model), "--host", "198.51.100.254"]) == 2
    )  # TEST-NET-2: no one's
    err = capsys.readouterr().err.strip()
    assert err == "nbspark serve: error: 198.51.100.254:8081 is not an address of this machine (--host)"


def test_other_web_pages_may_call_only_when_allowed(checker_model, served):
    page = {"Origin": "https://editor.example"}
    r = requests.post(
        f"{served[0]}/v2/check", data={"text": TEXT, "language": "en-US"}, headers=page, timeout=10
    )
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    limits = Limits(
        factor=FIXTURE_LIMITS.factor, rule=FIXTURE_LIMITS.rule, allow_origins=("https://editor.example",)
    )
    with running([checker_model], limits) as (url, _):
        r = requests.post(
            f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, headers=page, timeout=10
        )
        assert r.headers["access-control-allow-origin"] == "https://editor.example"
        assert len(r.json()["matches"]) == 1
        # through Starlette's CORS middleware, a refusal is still LanguageTool's plain-text answer
        bad = requests.post(f"{url}/v2/check", data={"language": "en-US"}, headers=page, timeout=10)
        assert (bad.status_code, bad.text) == (400, "Error: Missing 'text' or 'data' parameter")
        assert bad.headers["content-type"].startswith("text/plain")
        other = requests.get(
            f"{url}/v2/languages", headers={"Origin": "https://elsewhere.example"}, timeout=10
        )
        assert "access-control-allow-origin" not in other.headers


def test_a_client_that_leaves_mid_body_is_a_400_in_the_log(served, caplog):
    host, port = served[0].removeprefix("http://").split(":")
    with caplog.at_level(logging.INFO, logger=REQUESTS):
        with socket.create_connection((host, int(port)), timeout=10) as s:
            s.sendall(_head(500) + b"language=en")  # 11 bytes of the 500 announced, then gone
        deadline = time.monotonic() + 5
        while not caplog.records and time.monotonic() < deadline:
            time.sleep(0.01)
    (line,) = [r.getMessage() for r in caplog.records if r.name == REQUESTS]
    assert line.split()[:3] == ["POST", "/v2/check", "400"]  # not a 500 with a traceback


def test_a_density_model_answers_each_rows_density(tmp_path):
    """/v1/predict of a density model: the hand-counted share of each row (2 of 4 rows are A=1,
    B=1), null log where a row was never seen; /v1/models lists it."""
    from nbspark.density.jobs import train_density_in_process
    from nbspark.settings.config import load_config

    (tmp_path / "ab.csv").write_text("A,B\n1,0\n1,1\n0,1\n1,1\n")
    cfg = {"task": "density", "train.format": "csv", "train.path": str(tmp_path / "ab.csv")}
    train_density_in_process(load_config(None, cfg), tmp_path / "ab")
    with running([f"ab={tmp_path / 'ab'}"], Limits()) as (url, _):  # no checker: no factor, no rule
        (listed,) = requests.get(f"{url}/v1/models", timeout=10).json()["models"]
        assert (listed["kind"], listed["classes"], listed["columns"]) == ("density", [], ["A", "B"])
        rows = [{"A": "1", "B": "1"}, {"A": "0", "B": "0"}]
        got = requests.post(f"{url}/v1/predict", json={"rows": rows}, timeout=10).json()
        assert [(r["text"], r["density"]) for r in got["results"]] == list(zip(rows, [0.5, 0.0]))
        cells = [["1", "1"], ["0", "0"]]  # rows as arrays: the listed columns, in order
        by_position = requests.post(f"{url}/v1/predict", json={"rows": cells}, timeout=10).json()
        assert [r["density"] for r in by_position["results"]] == [0.5, 0.0]
        said = _predict_json(["--model", str(tmp_path / "ab"), *map(json.dumps, cells)])  # the command too
        assert [{**r, "text": json.loads(r["text"])} for r in said] == by_position["results"]
        mixed = [cells[0], rows[1]]  # each row its own way, in one batch: each read as its kind is
        one_batch = requests.post(f"{url}/v1/predict", json={"rows": mixed}, timeout=10).json()
        assert [r["density"] for r in one_batch["results"]] == [0.5, 0.0]
        said = _predict_json(["--model", str(tmp_path / "ab"), *map(json.dumps, mixed)])
        assert [{**r, "text": json.loads(r["text"])} for r in said] == one_batch["results"]
        assert got["results"][0]["log_density"] == pytest.approx(math.log(0.5))
        assert got["results"][1]["log_density"] is None and got["unscored"] == 0
        # why a density is 0: (0, 0) was never counted, though each value was; "2" never was in A
        assert [r["unseen"] for r in got["results"]] == [{}, {}]
        odd = requests.post(f"{url}/v1/predict", json={"rows": [{"A": "2", "B": "1"}]}, timeout=10).json()
        assert [(r["density"], r["unseen"]) for r in odd["results"]] == [(0.0, {"A": "2"})]
        refused = requests.post(f"{url}/v1/predict", json={"texts": ["A B"]}, timeout=10)
        assert (refused.status_code, refused.text) == (400, "Error: model 'ab' scores rows, not texts")


def test_a_model_of_class_numbers_lists_and_answers_them_as_numbers(tmp_path):
    """A Gaussian model fitted on y of ints (0, 2, 10): /v1/models lists the numbers in their order
    (it was a 500: numpy's ints are not JSON), /v1/predict answers a row's class as a number."""
    import numpy as np

    import nbspark

    X = np.array([[0.0, 0.1], [0.2, 0.0], [5.0, 5.1], [5.2, 4.9], [9.0, 9.2], [9.1, 8.8]])
    nbspark.NaiveBayes(model="gaussian").fit(X, [0, 0, 2, 2, 10, 10]).save(tmp_path / "g")
    with running([f"g={tmp_path / 'g'}"], Limits()) as (url, _):
        (listed,) = requests.get(f"{url}/v1/models", timeout=10).json()["models"]
        assert (listed["classes"], listed["columns"]) == ([0, 2, 10], ["x0", "x1"])
        got = requests.post(f"{url}/v1/predict", json={"rows": [[9.0, 9.0], [0.1, 0.1]]}, timeout=10).json()
        assert [r["label"] for r in got["results"]] == [10, 0]
    # the command takes a row as an array too, and answers the same objects (it refused arrays), its
    # text the argument as given
    said = _predict_json(["--model", str(tmp_path / "g"), "[9.0, 9.0]", "[0.1, 0.1]"])
    assert [{**r, "text": json.loads(r["text"])} for r in said] == got["results"]


def test_a_refusal_that_quotes_half_an_emoji_is_still_answered():
    """A refusal's message may quote the request, and a lone surrogate from its JSON has no UTF-8:
    it is written escaped (it was a 500)."""
    import asyncio

    from nbspark.serve.app import _Endpoint
    from nbspark.serve.languagetool import RequestError

    async def refuse(scope, receive, send):
        raise RequestError(400, "Error: row 0 has none of the model's columns; its keys: \ud800")

    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(_Endpoint(refuse)({}, None, send))
    assert sent[0]["status"] == 400 and sent[1]["body"].endswith(b"its keys: \\ud800")
