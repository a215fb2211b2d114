"""A model that changes under the server: new versions are served within a poll, requests in flight
finish on the version they started with, none fails and none sees a mix; SIGTERM drains."""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
import requests

from tests.serve.conftest import running, train_checker

# under A (tests/data/ngrams.txt: ABDE "would not _ the outcome" = affect 6, effect 1) the first
# sentence is flagged; under B (effect 60, affect 1) the second; a mix of the two versions would
# flag both or neither
TEXT = "It would not effect the outcome. It would not affect the outcome."
FIRST, SECOND = TEXT.index("effect"), TEXT.index("affect")


def _b_counts(tmp_path):
    path = tmp_path / "b.txt"
    path.write_text("would not effect the outcome\t60\nwould not affect the outcome\t1\n")
    return path


def test_swapped_ten_times_under_load_no_request_fails_or_mixes(spark, tmp_path):
    model = train_checker(spark, tmp_path / "served" / "model")
    b = _b_counts(tmp_path)
    answers, failures, stop = [], [], threading.Event()
    with running([model], reload_seconds=0.1) as (url, models):

        def client():
            with requests.Session() as session:
                while not stop.is_set():
                    r = session.post(f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, timeout=10)
                    if r.status_code != 200:
                        failures.append((r.status_code, r.text))
                        continue
                    answers.append(tuple(m["offset"] for m in r.json()["matches"]))

        clients = [threading.Thread(target=client) for _ in range(4)]
        for c in clients:
            c.start()
        served = []
        try:
            for i in range(10):
                source = b if i % 2 == 0 else None
                train_checker(spark, model, **({"path": source} if source else {}), overwrite=True)
                deadline = time.monotonic() + 10
                want = (SECOND,) if source else (FIRST,)
                while time.monotonic() < deadline:
                    r = requests.post(f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, timeout=10)
                    if tuple(m["offset"] for m in r.json()["matches"]) == want:
                        break
                    time.sleep(0.05)
                else:
                    raise AssertionError(f"swap {i}: the new version was not served within 10 s")
                served.append(want)
        finally:
            stop.set()
            for c in clients:
                c.join(10)
    assert failures == []
    assert set(answers) <= {(FIRST,), (SECOND,)}  # one version or the other, never a mix
    assert {(FIRST,), (SECOND,)} <= set(answers) and len(answers) > 20
    assert served == [(SECOND,), (FIRST,)] * 5


def test_an_update_is_a_new_version_and_a_damaged_one_is_not_served(spark, tmp_path):
    model = train_checker(spark, tmp_path / "grown" / "model")
    with running([model], reload_seconds=0.1) as (url, models):
        assert requests.get(f"{url}/v1/models", timeout=10).json()["models"][0]["version"] == 1
        train_checker(spark, model, path=_b_counts(tmp_path), update=True)
        deadline = time.monotonic() + 10
        while models.current["grown"].version != 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        listed = requests.get(f"{url}/v1/models", timeout=10).json()["models"][0]
        assert listed["version"] == 2
        # 6 + 1 and 1 + 60 at ABDE: the update's counts are served
        r = requests.post(f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, timeout=10)
        assert [m["offset"] for m in r.json()["matches"]] == [SECOND]
        # a damaged new version (a part file cut short) is refused: version 2 stays served
        part = next((model / "counts").glob("part-*"))
        manifest = (model / "manifest.json").read_text()
        part.write_bytes(part.read_bytes()[:100])
        (model / "manifest.json").write_text(manifest + "\n")  # a new manifest: the server reads again
        time.sleep(1)
        assert models.current["grown"].version == 2
        r = requests.post(f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, timeout=10)
        assert r.status_code == 200 and [m["offset"] for m in r.json()["matches"]] == [SECOND]


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_lets_the_request_in_flight_finish(checker_model, workers):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [
            *(sys.executable, "-m", "nbspark", "serve", "--model", str(checker_model), "--port", "0"),
            *("--factor", "5", "--workers", str(workers)),
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        url = None
        for line in server.stderr:
            if found := re.search(r"serving on (http://\S+)", line):
                url = found.group(1)
                break
        assert url, "the server did not start"
        answer = {}

        def body():  # a request still arriving when SIGTERM comes: its body takes 1.5 s
            yield b"language=en-US&text="
            for _ in range(15):
                time.sleep(0.1)
                yield b"It+would+not+effect+the+outcome.+"

        def slow():
            r = requests.post(
                f"{url}/v2/check",
                data=body(),
                headers={"content-type": "application/x-www-form-urlencoded"},
                timeout=60,
            )
            answer["status"], answer["matches"] = r.status_code, len(r.json()["matches"])

        request = threading.Thread(target=slow)
        request.start()
        time.sleep(0.3)
        server.send_signal(signal.SIGTERM)
        request.join(60)
        assert server.wait(30) == 0
        assert answer == {"status": 200, "matches": 15}
        rest = server.stderr.read()  # the request's line, written in a batch, was written at the stop
        assert re.search(r"^nbspark: POST /v2/check 200 \d+ [\d.]+ ms$", rest, re.M), rest
    finally:
        server.kill()


def test_a_saved_version_a_delta_beside_the_table_is_served(spark, tmp_path):
    """``update`` + ``save`` (a stream's batch alike) writes a delta, not a new manifest.json: the
    server sees the new version by the model's fingerprint (storage.versions) and serves its counts."""
    import nbspark

    model = train_checker(spark, tmp_path / "grown" / "model")
    with running([model], reload_seconds=0.1) as (url, models):
        before = requests.post(f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, timeout=10)
        assert [m["offset"] for m in before.json()["matches"]] == [FIRST]
        learner = nbspark.load(model)
        learner.update(["would not effect the outcome"], weights=[60])
        assert learner.save() == 2 and (model / "versions" / "v00000002").is_dir()
        deadline = time.monotonic() + 10
        while models.current["grown"].version != 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert models.current["grown"].version == 2
        r = requests.post(f"{url}/v2/check", data={"text": TEXT, "language": "en-US"}, timeout=10)
        assert [m["offset"] for m in r.json()["matches"]] == [SECOND]  # 6 against 1 + 60 at ABDE


def test_a_model_removed_under_the_server_is_said_once_and_still_served(checker_model, tmp_path, caplog):
    import logging
    import shutil

    from nbspark.serve.models import RETRIES, Models

    model = tmp_path / "copy" / "model"
    shutil.copytree(checker_model, model)
    models = Models({"copy": str(model)})
    caplog.set_level(logging.WARNING, logger="nbspark.serve")
    for removals in (1, 2):  # said again after it came back and went again
        shutil.move(model, tmp_path / "away")
        for _ in range(RETRIES * 3):
            assert models.poll() == [] and models.current["copy"].version == 1
        said = [r.getMessage() for r in caplog.records if "keeping version 1" in r.getMessage()]
        assert len(said) == removals and "copy: keeping version 1:" in said[-1]
        shutil.move(tmp_path / "away", model)
        assert models.poll() == []  # back as it was: nothing to swap, nothing said
        assert len([r for r in caplog.records if "keeping" in r.getMessage()]) == removals
