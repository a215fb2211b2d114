"""Property-based agreement (Hypothesis, seeded and bounded): arbitrary n-gram lines, with count
edge cases, control characters, invalid UTF-8 and long lines, give every counting engine the same
count table, statistics and first malformed lines as a plain-Python count of the same bytes; a
count that does not fit in 64 bits is malformed, and a sum that would not fit is an error in
every engine, never a wrapped count."""

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbspark.backoff.events import example_events, ngram_example
from nbspark.backoff.jobs import BACKOFF, train
from nbspark.inputs.decoding import JVM_REPLACE
from nbspark.inputs.parsers import MAX_COUNT, MalformedLine, parse_ngram_line
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from nbspark.spine.training import read_counts, train_in_process
from tests.conftest import ROOT

pytestmark = pytest.mark.spark

ENGINES = ("pairs", "combine", "arrow", "local", "local-combine")


def _train(spark, path, engine: str, out, **settings):
    """Train with one engine: ``local`` in this process (``nbspark train --in-process``: the arrow
    rule, or with ``local-combine`` the Python engines'), the others by the Spark job."""
    if engine.startswith("local"):
        named = {"engine": "combine"} if engine == "local-combine" else {}
        cfg = load_config(None, {"train.path": str(path), **named, **settings})
        return train_in_process(cfg, BACKOFF, out)
    cfg = load_config(None, {"train.path": str(path), "engine": engine, **settings})
    return train(spark, cfg, resolve_input(cfg.train, None), out)


WORDS = [
    "effect",
    "affect",
    "Effect",
    "AFFECT",
    "the",
    "İ",
    "über",
    "",
    "x\x07y",
    "a\u00a0b",
    "\ufffd",
    "w" * 300,
]
COUNTS = [
    "0",
    "1",
    "7",
    " 3 ",
    "\u00a05",
    "٣",
    "-1",
    "+2",
    "abc",
    "",
    str(MAX_COUNT),
    str(MAX_COUNT + 1),
    "0" + str(MAX_COUNT),
    "9" * 25,
]


@st.composite
def ngram_line(draw) -> bytes:
    if draw(st.integers(0, 9)) == 0:  # a blank line: no record, never a malformed one
        return draw(st.sampled_from([b"", b"  ", b"\r", b" \t ", b"\xc2\xa0"]))
    tokens = draw(st.lists(st.sampled_from(WORDS), min_size=3, max_size=6))
    if draw(st.booleans()):  # centred on the confusion set, mostly
        tokens[len(tokens) // 2] = draw(st.sampled_from(["effect", "affect", "Effect"]))
    line = (
        " ".join(tokens)
        + draw(st.sampled_from(["\t", "\t", "\t", " ", "\t\t"]))
        + draw(st.sampled_from(COUNTS))
    )
    raw = line.encode("utf-8") + draw(st.sampled_from([b"", b"", b"\r", b"\xff", b"\xe9"]))
    return raw


def python_count(data: bytes, cfg) -> tuple[Counter, dict]:
    """The reference: every line decoded (invalid UTF-8 as U+FFFD, as the JVM decodes it), parsed and
    counted in plain Python. A statistic is recorded only above 0 (a line of count 0 is an example of
    weight 0)."""
    events, stats = Counter(), Counter()
    for line in data.decode("utf-8", JVM_REPLACE).split("\n")[:-1]:
        stats["lines_read"] += 1
        if "\ufffd" in line:
            stats["decode_replacements"] += line.count("\ufffd")
        if line.strip() == "":  # white space alone (U+00A0 too, as Python's strip takes it)
            stats["blank_lines"] += 1
            continue
        try:
            parse_ngram_line(line, cfg.width)
            example = ngram_example(line, "", frozenset(cfg.centres), cfg.width, cfg.lowercase)
        except MalformedLine as exc:
            stats["malformed"] += 1
            stats[f"malformed.{exc.reason}"] += 1
            continue
        if example is None:
            stats["lines_not_in_confusion_set"] += 1
            continue
        stats["examples"] += 1
        stats["weight"] += example.weight
        for key, weight in example_events(example, cfg.counted_subsets, cfg.letters):
            events[key] += weight
    return events, {k: v for k, v in stats.items() if v}


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(ngram_line(), min_size=1, max_size=30))
def test_every_engine_agrees_with_plain_python(spark, lines):
    data = b"".join(raw + b"\n" for raw in lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lines.txt"
        path.write_bytes(data)
        base = load_config(None, {"train.path": str(path), "partitions": "3"})
        events, stats = python_count(data, base)
        overflow = stats.get("weight", 0) > MAX_COUNT or any(n > MAX_COUNT for n in events.values())
        results = {}
        for engine in ENGINES:
            out = Path(tmp) / engine
            if overflow:
                with pytest.raises(Exception, match="(?i)overflow"):
                    _train(spark, path, engine, out, partitions="3")
                assert not out.exists()
                continue
            if not stats.get("examples"):
                with pytest.raises(Exception, match="no training examples"):
                    _train(spark, path, engine, out, partitions="3")
                continue
            manifest = _train(spark, path, engine, out, partitions="3")
            table = Counter(
                {tuple(r[:-1]): r[-1] for r in read_counts(spark, out, BACKOFF, manifest).collect()}
            )
            assert table == events, engine
            assert manifest["stats"] == dict(sorted(stats.items())), engine
            results[engine] = [(b["line_number"], b["reason"]) for b in manifest["malformed_examples"]]
        if results:
            first = [(number, reason) for number, reason in results["pairs"]]
            assert all(found == first for found in results.values()), results


def test_a_count_past_64_bits_is_malformed_and_a_sum_past_64_bits_is_an_error(spark, tmp_path):
    """Two lines of 2**63 − 1 for one event used to train, with the arrow engine, into a count of −2."""
    path = tmp_path / "big.txt"
    path.write_text(f"a b effect d e\t{MAX_COUNT}\na b effect d e\t{MAX_COUNT}\n", encoding="utf-8")
    for engine in ENGINES:
        with pytest.raises(Exception, match="(?i)overflow"):
            _train(spark, path, engine, tmp_path / engine)
        assert not (tmp_path / engine).exists()
    # one count above 2**63 − 1 is a malformed line, skipped and counted (it used to abort the run)
    path.write_text(f"a b effect d g\t{MAX_COUNT + 1}\na b effect d e\t{MAX_COUNT}\n", encoding="utf-8")
    for engine in ENGINES:
        manifest = _train(spark, path, engine, tmp_path / f"{engine}-ok")
        assert manifest["stats"]["malformed.count"] == 1 and manifest["stats"]["weight"] == MAX_COUNT
        assert [(b["line_number"], b["reason"]) for b in manifest["malformed_examples"]] == [(1, "count")]


def test_blank_lines_are_no_records_in_failfast_mode_with_every_engine(spark, tmp_path):
    """An n-gram file with a white-space line and an editor's empty last line: every engine counts
    them as ``blank_lines``, none as malformed, and failfast trains (it stopped at the first, as a
    malformed line of fields ''), the table that of the file without them; ``query --ngrams`` the
    same."""
    from nbspark.app.cli import query_main

    lines = (
        (ROOT / "tests" / "data" / "ngrams.txt").read_text(encoding="utf-8").splitlines()[:7]
    )  # well formed
    (tmp_path / "clean.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    blank = [lines[0], " \t", *lines[1:], ""]
    (tmp_path / "blank.txt").write_text("\n".join(blank) + "\n", encoding="utf-8")
    want = _train(spark, tmp_path / "clean.txt", "pairs", tmp_path / "clean", mode="failfast")
    for engine in ENGINES:
        got = _train(spark, tmp_path / "blank.txt", engine, tmp_path / engine, mode="failfast")
        assert got["stats"] == {
            **want["stats"],
            "lines_read": want["stats"]["lines_read"] + 2,
            "blank_lines": 2,
        }
        table = Counter(tuple(r) for r in read_counts(spark, tmp_path / engine, BACKOFF, got).collect())
        clean = Counter(tuple(r) for r in read_counts(spark, tmp_path / "clean", BACKOFF, want).collect())
        assert table == clean, engine
    argv = ["--mode", "failfast", "--C", "_", "--json", str(tmp_path / "q.json"), "--ngrams"]
    assert query_main([*argv, str(tmp_path / "blank.txt")]) == 0
    got = json.loads((tmp_path / "q.json").read_text())
    assert query_main([*argv, str(tmp_path / "clean.txt")]) == 0
    clean = json.loads((tmp_path / "q.json").read_text())
    assert got.pop("input_stats") == {**clean.pop("input_stats"), "lines_read": 9, "blank_lines": 2}
    assert {**got, "source": ""} == {**clean, "source": ""}
