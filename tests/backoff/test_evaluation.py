"""The checker's evaluation report (``nbspark.backoff.evaluation``)."""

import pytest


def test_the_pr_plot_is_a_grid_with_every_direction_pooled(tmp_path):
    """Nine confusion sets drew 18 panels in one row (10,890 × 462 pixels): now rows of four and a
    pooled panel, axes that stay readable when every point has p = 1."""
    import struct

    pytest.importorskip("matplotlib")
    from nbspark.backoff.evaluation import plot_pr
    from nbspark.storage.locations import location

    rows = [
        {
            "rule": "chain",
            "set": f"a{k} b{k}",
            "written": w,
            "intended": i,
            "factor": f,
            "occurrences": 10,
            "false_alarms": 0,
            "catches": 10 - f,
            "p": 1.0,
            "r": (10 - f) / 10,
            "precision": 1.0,
        }
        for k in range(9)
        for w, i in ((f"a{k}", f"b{k}"), (f"b{k}", f"a{k}"))
        for f in (1, 2, 5)
    ]
    plot_pr(rows, location(tmp_path / "pr.png"), "nine sets")
    width, height = struct.unpack(">II", (tmp_path / "pr.png").read_bytes()[16:24])
    assert width < 2500 and height > width  # 19 panels: 4 across, 5 down


def test_clean_reuters_text_is_read_from_compressed_sgml_too(tmp_path):
    """``--evaluate reuters:DIR`` reads the directory's ``.sgm.gz`` and ``.sgm.bz2`` as its ``.sgm``
    (they were left out), and nothing else in it; the fixture's story bodies (tests/data/mini.sgm)."""
    import bz2
    import gzip

    from nbspark.backoff.evaluation import clean_documents
    from tests.conftest import FIXTURES

    sgml = (FIXTURES / "mini.sgm").read_bytes()
    plain = list(clean_documents("reuters", FIXTURES / "mini.sgm"))
    (tmp_path / "a.sgm.gz").write_bytes(gzip.compress(sgml))
    (tmp_path / "b.sgm.bz2").write_bytes(bz2.compress(sgml))
    (tmp_path / "README.txt").write_text("not SGML <REUTERS> at all\n")
    assert len(plain) == 4 and list(clean_documents("reuters", tmp_path)) == plain + plain
