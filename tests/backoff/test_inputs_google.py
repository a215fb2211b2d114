"""Google Books Ngram readers (versions 2 and 3), on the hand-made fixtures of tests/data/README.md."""

import gzip

import pytest
from pyspark.testing import assertDataFrameEqual

from nbspark.backoff.events import count_ddl
from nbspark.backoff.jobs import train
from nbspark.inputs.parsers import MalformedLine, parse_google_v2, parse_google_v3, strip_pos
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from nbspark.storage.tables import read_parquet_checked


def test_strip_pos():
    assert strip_pos("effect_NOUN") == "effect"
    assert strip_pos("_NOUN_") is None and strip_pos("_START_") is None
    assert strip_pos("under_score") == "under_score" and strip_pos("_") == "_"
    assert strip_pos("._.") == "."


def test_parse_google_lines():
    assert parse_google_v2("a b effect d e\t1999\t41\t2") == (("a", "b", "effect", "d", "e"), 1999, 41)
    assert parse_google_v3("a b effect d e\t1999,41,2\t2000,3,1") == (
        ("a", "b", "effect", "d", "e"),
        [(1999, 41), (2000, 3)],
    )
    for bad, reason in [
        ("a b c d\t1\t2\t3", "tokens"),
        ("a b c d e\t1\t2", "fields"),
        ("a b c d e\tx\t2\t3", "year"),
        ("a b c d e\t1\tx\t3", "count"),
    ]:
        with pytest.raises(MalformedLine) as info:
            parse_google_v2(bad)
        assert info.value.reason == reason
    with pytest.raises(MalformedLine, match="year"):
        parse_google_v3("a b c d e\t2000;50;1")


@pytest.mark.spark
def test_both_versions_and_gzip_give_the_same_table(spark, fixtures, tmp_path):
    gz = tmp_path / "5-00000-of-00001.gz"
    gz.write_bytes(gzip.compress((fixtures / "google_v3.txt").read_bytes()))
    tables = []
    for fmt, path in (
        ("google_v2", fixtures / "google_v2.txt"),
        ("google_v3", fixtures / "google_v3.txt"),
        ("google_v3", gz),
    ):
        cfg = load_config(
            None,
            {
                "train.format": fmt,
                "train.path": str(path),
                "train.year_min": "1900",
                "train.year_max": "2008",
            },
        )
        out = tmp_path / f"m-{len(tables)}"
        manifest = train(spark, cfg, resolve_input(cfg.train, None), out)
        stats = manifest["stats"]
        assert stats["examples"] == 2 and stats["weight"] == 86
        assert stats["malformed"] == 2 and stats["ngrams"] == 3 and stats["ngrams_below_min_count"] == 1
        assert stats["lines_with_pos_tag_tokens"] == 1 and stats["lines_not_in_confusion_set"] == 1
        tables.append(read_parquet_checked(spark, out / "counts", count_ddl("ABCDE")))
    rows = {tuple(r[:-1]): r[-1] for r in tables[0].collect()}
    assert rows[("ABDE", "the", "cumulative", "of", "the", "effect")] == 45
    assert rows[("", None, None, None, None, "effect")] == 86
    assertDataFrameEqual(tables[1], tables[0], checkRowOrder=False)
    assertDataFrameEqual(tables[2], tables[0], checkRowOrder=False)


@pytest.mark.spark
def test_keep_pos_and_min_count(spark, fixtures, tmp_path):
    cfg = load_config(
        None,
        {
            "train.format": "google_v2",
            "train.path": str(fixtures / "google_v2.txt"),
            "train.pos": "keep",
            "train.min_count": "0",
            "train.year_min": "1900",
            "train.year_max": "2008",
        },
    )
    manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    # with tags kept, effect_noun and affect_verb are not in the set, and "_DET_ not affect the
    # outcome" (500) is an example like "the big effect of it" (41); min_count 0 keeps both
    assert manifest["stats"]["examples"] == 2 and manifest["stats"]["weight"] == 541


@pytest.mark.spark
def test_a_shard_cut_short_is_one_line_and_no_failed_task(fixtures, tmp_path):
    """A gzip shard cut short among good ones: the task that reads it returns it as a statistic
    (``google_filter.UNREADABLE``), the driver refuses the run with one line naming the shard, and no
    task fails (no executor log of a traceback, no retries on a cluster)."""
    from tests.conftest import spark_submit

    (tmp_path / "in").mkdir()
    text = (fixtures / "google_v3.txt").read_bytes() * 50
    (tmp_path / "in" / "5-00000-of-00002.gz").write_bytes(gzip.compress(text))
    cut = gzip.compress(text)
    (tmp_path / "in" / "5-00001-of-00002.gz").write_bytes(cut[: len(cut) // 2])
    run = spark_submit(
        "train",
        "--set",
        "train.format=google_v3",
        "--set",
        f"train.path={tmp_path / 'in'}",
        "--out",
        tmp_path / "m",
    )
    said = (run.stdout + "\n" + run.stderr).strip().splitlines()  # spark-submit: error lines on stdout
    errors = [x for x in said if x.startswith("train.py: error:")]
    assert run.returncode == 1 and len(errors) == 1, said[-8:]
    assert errors[0].startswith(
        f"train.py: error: {tmp_path / 'in' / '5-00001-of-00002.gz'}: cannot be read as gzip ("
    ), errors
    assert not [x for x in said if "ERROR" in x or "Traceback" in x or x.startswith("\tat ")], said
    assert not (tmp_path / "m").exists()
