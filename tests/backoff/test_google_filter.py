"""The Google Books engine (``engine = dataframe``, what ``auto`` takes) gives the ``combine``
engine's table, statistics and first malformed lines, line for line, on hand-written lines chosen
to sit on every edge of its tests (blank ones among them): with shards read whole
(``backoff.google_scan``), streamed through the JVM's filter, and both in one run."""

import gzip

import pytest

from nbspark.backoff.jobs import train
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config

pytestmark = pytest.mark.spark

# (v2 line, v3 line): centred, tagged, upper case, malformed in every way, non-ASCII, out of years
LINES = [
    ("the cumulative effect_NOUN of the\t2000\t45\t5", "the cumulative effect_NOUN of the\t2000,45,5"),
    (
        "The Cumulative EFFECT_NOUN Of The\t1990\t41\t2",
        "The Cumulative EFFECT_NOUN Of The\t1990,41,2\t1991,1,1",
    ),
    ("would not affect_VERB the outcome\t2001\t39\t4", "would not affect_VERB the outcome\t2001,39,4"),
    ("_DET_ not affect the outcome\t2001\t500\t9", "_DET_ not affect the outcome\t2001,500,9"),
    ("a b effect_X d e\t2000\t60\t1", "a b effect_X d e\t2000,60,1"),
    ("a b effect_ d e\t2000\t60\t1", "a b effect_ d e\t2000,60,1"),
    ("a b Éffect d e\t2000\t60\t1", "a b Éffect d e\t2000,60,1"),
    ("a b affect d\t2000\t60\t1", "a b affect d\t2000,60,1"),
    ("a  b affect d e\t2000\t60\t1", "a  b affect d e\t2000,60,1"),
    ("a b affect d e\tMMX\t60\t1", "a b affect d e\tMMX,60,1"),
    ("a b affect d e\t2000\t123456789012345678901\t1", "a b affect d e\t2000,123456789012345678901,1"),
    ("a b affect d e\t2000\t60", "a b affect d e"),
    ("a b affect d e\t1700\t60\t1", "a b affect d e\t1700,60,1"),
    ("of the cause and so\t2001\t900\t9", "of the cause and so\t2001,900,9"),
    ("of the cause and so\t2001\t900\t9", "of the cause and so\t2001,900,9"),
    ("x y effect z w\t2000\t 7 \t1", "x y effect z w\t2000, 7 ,1"),
    ("x y effect z w\t2000\t40\t1", "x y effect z w\t2000,40,1"),
    (" \t", " \t"),  # blank: no record, never malformed
    ("", ""),
]


def shards(tmp_path, version: int):
    lines = [pair[version - 2] for pair in LINES]
    plain = tmp_path / f"v{version}" / "part-0.txt"
    plain.parent.mkdir()
    plain.write_text("\n".join(lines[:9]) + "\n", encoding="utf-8")
    (tmp_path / f"v{version}" / "part-1.gz").write_bytes(
        gzip.compress(("\n".join(lines[9:]) + "\n").encode())
    )
    return plain.parent


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize(
    "settings",
    [{}, {"train.pos": "keep", "train.min_count": "0"}, {"lowercase": "false", "train.min_count": "1"}],
)
def test_the_jvm_filter_equals_the_python_path(spark, tmp_path, version, settings):
    path = shards(tmp_path, version)
    results = {}
    # auto resolves to the JVM filter (tests/settings/test_config.py); the job follows it, shown once
    # a version, with the default settings
    for engine in ("combine", "dataframe", *(() if settings else ("auto",))):
        cfg = load_config(
            None,
            {
                "train.format": f"google_v{version}",
                "train.path": str(path),
                "engine": engine,
                "train.year_min": "1800",
                **settings,
            },
        )
        manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / engine)
        table = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / engine / "counts")).collect())
        results[engine] = (table, manifest["stats"], manifest["malformed_examples"], manifest["engine"])
    assert all(result[:3] == results["combine"][:3] for result in results.values())
    assert {result[3] for engine, result in results.items() if engine != "combine"} == {"dataframe"}
    stats = results["combine"][1]
    assert stats["lines_read"] == len(LINES) and stats["malformed"] >= 4 and stats["blank_lines"] == 2
    assert [m["line_number"] for m in results["combine"][2]][:2] == [8, 9]


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("mixed", [False, True])
def test_streamed_files_give_the_same_table(spark, tmp_path, version, mixed):
    """Every file streamed (``train.whole_file_mb = 0``), or the plain one streamed and the gzip one read
    whole."""
    path = shards(tmp_path, version)
    limit = (path / "part-1.gz").stat().st_size if mixed else 0
    assert (path / "part-0.txt").stat().st_size > limit
    results = {}
    for engine in ("combine", "dataframe"):
        cfg = load_config(
            None,
            {
                "train.format": f"google_v{version}",
                "train.path": str(path),
                "engine": engine,
                "train.year_min": "1800",
                "train.whole_file_mb": str(limit / (1 << 20)),
            },
        )
        manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / engine)
        table = sorted(tuple(r) for r in spark.read.parquet(str(tmp_path / engine / "counts")).collect())
        results[engine] = (table, manifest["stats"], manifest["malformed_examples"])
    assert results["combine"] == results["dataframe"]
    assert results["combine"][1]["lines_read"] == len(LINES)


def test_whole_file_mb_picks_the_files_read_whole(spark, tmp_path):
    """Gzip and plain files of at most train.whole_file_mb MB go whole to a task; larger ones, and other
    codecs, are streamed."""
    from nbspark.backoff.google_filter import _whole_files

    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "small.gz").write_bytes(gzip.compress(b"a b effect d e\t2000,45,5\n"))
    (tmp_path / "s" / "big.txt").write_bytes(b"x" * (3 << 20))
    (tmp_path / "s" / "other.bz2").write_bytes(b"BZh9")
    files = resolve_input(
        load_config(None, {"train.format": "google_v3", "train.path": str(tmp_path / "s")}).train, None
    ).files
    assert sorted(f.name for f in files) == ["big.txt", "other.bz2", "small.gz"]
    whole = {mb: sorted(f.name for f in _whole_files(spark, files, mb)) for mb in (256, 3, 2.99, 0)}
    assert whole == {256: ["big.txt", "small.gz"], 3: ["big.txt", "small.gz"], 2.99: ["small.gz"], 0: []}


def test_failfast_takes_the_python_path(tmp_path):
    from nbspark.settings.capabilities import resolve_engine

    cfg = load_config(None, {"train.format": "google_v3", "train.path": str(tmp_path), "mode": "failfast"})
    assert resolve_engine(cfg) == "combine"
