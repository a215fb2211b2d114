"""scripts/make_ngrams.py: a larger n-gram file from the Books 5-grams, for the in-process bound."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.realdata


def test_copies_are_distinct_real_ngrams_within_the_size(data_dir, tmp_path):
    """Three megabytes (two copies and part of a third): within them, the same bytes again, each
    copy's five-token lines new n-grams with the real centre, context words between and count."""
    made = []
    for name in ("a.txt", "b.txt"):
        args = [tmp_path / name, "--mb", "3", "--data-dir", data_dir]
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "make_ngrams.py"), *map(str, args)], check=True
        )
        made.append((tmp_path / name).read_bytes())
    assert made[0] == made[1] and 2.99e6 < len(made[0]) <= 3e6
    source = (data_dir / "aeffect" / "aeffect-train.txt").read_text(encoding="utf-8").splitlines()
    lines = made[0].decode("utf-8").splitlines()
    assert len(lines) > len(source)  # more than one copy
    grams = [line.partition("\t")[0].split(" ") for line in lines]
    whole = [" ".join(g) for g in grams if len(g) == 5]
    assert len(set(whole)) == len(whole)  # the copies' n-grams do not repeat
    for line, original in zip(lines[len(source) :], source):  # the second copy: suffix 1
        gram, _, count = line.partition("\t")
        tokens, real = gram.split(" "), original.partition("\t")[0].split(" ")
        assert count == original.partition("\t")[2]
        if len(real) == 5:
            assert tokens == [real[0] + "1", *real[1:4], real[4] + "1"]
        else:
            assert tokens == real
