"""Plain text input (``format = "text"``) for the backoff models, counted by hand.

a.txt: "It would not affect the outcome.\\n\\nThe effect was small \\xff.\\n" (one undecodable byte)
b.txt.gz: "Effect on effect.\\n"
c.png: a PNG's head (NUL bytes) and "would not effect it": a binary file, not read
File documents: a.txt windows at affect (token 3) and effect (token 8: ". the effect was small");
b.txt.gz windows at effect (0) and effect (2). Paragraph documents: the second paragraph of
a.txt starts a document, so effect's window there is "<s> the effect was small".
"""

import gzip

import pytest

from nbspark.backoff.jobs import BACKOFF, train
from nbspark.inputs.parsers import text_documents
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from nbspark.spine.training import read_counts

pytestmark = pytest.mark.spark


def test_text_documents():
    assert text_documents("a\nb\n\n \nc\n", "paragraph") == [(1, "a\nb"), (5, "c\n")]
    # every paragraph's first line, on a text of many paragraphs (each line count used to start from
    # the top of the text: 17 s for 1.8 MB, quadratic in its length)
    many = text_documents("one\ntwo\n\n" * 200_000, "paragraph")
    assert [line for line, _ in many] == list(range(1, 600_000, 3)) and {doc for _, doc in many} == {
        "one\ntwo"
    }
    assert text_documents("a\n\nb", "file") == [(1, "a\n\nb")]
    # Windows (\r\n) and old Mac (\r) line ends: the same paragraphs on the same lines
    for end in ("\r\n", "\r"):
        assert text_documents(f"a{end}b{end}{end} {end}c{end}", "paragraph") == [(1, "a\nb"), (5, "c\n")]


@pytest.mark.parametrize("unit, a_left", [("file", "."), ("paragraph", "<s>")])
def test_text_windows_by_hand(spark, tmp_path, unit, a_left):
    src = tmp_path / "texts"
    src.mkdir()
    (src / "a.txt").write_bytes(b"It would not affect the outcome.\n\nThe effect was small \xff.\n")
    (src / "b.txt.gz").write_bytes(
        gzip.compress(b"\xef\xbb\xbfEffect on effect.\n")
    )  # a byte-order mark is no token
    (src / "c.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00 would not effect it")  # binary: not read
    cfg = load_config(None, {"train.format": "text", "train.path": str(src), "train.document": unit})
    manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    stats = manifest["stats"]
    assert stats["examples"] == 4 and stats["weight"] == 4 and stats["decode_replacements"] == 1
    assert stats["binary_files"] == 1
    assert stats["documents_read"] == (2 if unit == "file" else 3)
    assert manifest["label_counts"] == {"affect": 1, "effect": 3}
    rows = {
        tuple(r[1:-1]): r[-1]
        for r in read_counts(spark, tmp_path / "m", BACKOFF, manifest).collect()
        if r[0] == "ABDE"
    }
    assert rows == {
        ("would", "not", "the", "outcome", "affect"): 1,
        (a_left, "the", "was", "small", "effect"): 1,
        ("<s>", "<s>", "on", "effect", "effect"): 1,
        ("effect", "on", ".", "</s>", "effect"): 1,
    }


def test_compressed_text_files(spark, tmp_path):
    """bzip2 text reads as its text, as Hadoop's text source reads it for the line inputs; a .gz cut
    short, or a compression nbspark does not read (it was tokenized as noise: "no training
    examples"), fails naming the file."""
    import bz2

    from nbspark.app.cli import job_failure
    from nbspark.inputs.files import decode_text

    text = b"It would not affect the outcome.\n\xef\xbb\xbfThe effect was small.\n"
    assert (
        decode_text(bz2.compress(text), "x.txt.bz2")
        == decode_text(text, "x.txt")
        == decode_text(gzip.compress(text), "x.gz")
    )
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir(), packed.mkdir()
    (plain / "a.txt").write_bytes(text)
    (packed / "a.txt.bz2").write_bytes(bz2.compress(text))
    counted = []
    for src in (plain, packed):
        cfg = load_config(None, {"train.format": "text", "train.path": str(src)})
        manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / f"m-{src.name}")
        counted.append(sorted(read_counts(spark, tmp_path / f"m-{src.name}", BACKOFF, manifest).collect()))
    assert counted[0] == counted[1] and len(counted[0]) == 2 * 5  # two windows, five subsets each
    cut = gzip.compress(text * 100)
    (tmp_path / "cut.txt.gz").write_bytes(cut[: len(cut) // 2])
    (tmp_path / "a.txt.zst").write_bytes(b"(\xb5/\xfd" + bytes(20))
    for name, why in (
        ("cut.txt.gz", "cannot be read as gzip"),
        ("a.txt.zst", "a .zst file is not read as text"),
    ):
        cfg = load_config(None, {"train.format": "text", "train.path": str(tmp_path / name)})
        with pytest.raises(Exception) as info:
            train(spark, cfg, resolve_input(cfg.train, None), tmp_path / f"m-{name}")
        assert f"InputError: {tmp_path / name}: {why}" in job_failure(info.value)


def test_a_bad_document_setting_is_refused():
    from nbspark.errors import ConfigError

    with pytest.raises(ConfigError, match="train.document must be file or paragraph"):
        load_config(None, {"train.format": "text", "train.document": "sentence"})
