"""A naive Bayes model trained on a seeded sample of its documents (``sample``, in process) and its
learning curve (``naive_bayes.curves``, ``nbspark curve``): the documents a plain-Python hash picks,
nested fractions, and the curve's last row equal to the classify run of a model of every document.
No JVM: every test here runs in process."""

import hashlib
import json
import random

import pytest

import nbspark
from nbspark.app.curve import curve_main
from nbspark.settings.capabilities import resolve_engine
from nbspark.settings.config import load_config


def _picked(record_id: str, seed: int, fraction: float) -> bool:
    """The sample's rule written out: BLAKE2b (8 bytes, big-endian) of ``SEED:sample:ID``, over 2**64,
    below the fraction."""
    digest = hashlib.blake2b(f"{seed}:sample:{record_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < fraction


def _corpus(path, n: int, seed: int) -> list[tuple[str, str, str]]:
    """``n`` tsv documents of two classes with words of their own and shared ones (id, label, text)."""
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        label = rng.choice(["a", "b"])
        words = ["x", "y", "z", "w"] if label == "a" else ["x", "q", "r", "s"]
        docs.append((f"d{seed}-{i}", label, " ".join(rng.choice(words) for _ in range(6))))
    path.write_text("".join(f"{i}\t{y}\t{t}\n" for i, y, t in docs))
    return docs


TEXT = {"task": "naive_bayes", "nb.tokenizer": "words", "train.format": "tsv", "test.format": "tsv"}


def test_a_sample_counts_the_documents_a_plain_hash_picks_nested(tmp_path):
    docs = _corpus(tmp_path / "train.tsv", 300, 1)
    counted = {}
    for fraction in (0.2, 0.5, 1.0):
        settings = {
            **TEXT,
            "train.path": str(tmp_path / "train.tsv"),
            "sample": str(fraction),
            "sample_seed": "7",
        }
        model = nbspark.fit(None, tmp_path / f"m{fraction}", settings=settings)
        picked = [y for i, y, _ in docs if _picked(i, 7, fraction)]
        assert dict(zip(model.classes_, model.class_count_)) == {c: picked.count(c) for c in ("a", "b")}
        stats = model.manifest["stats"]
        assert (stats["documents"], stats.get("documents_not_sampled", 0)) == (len(picked), 300 - len(picked))
        counted[fraction] = model.class_count_
    assert all(counted[0.2] <= counted[0.5]) and all(counted[0.5] <= counted[1.0])  # nested
    assert 0 < counted[0.2].sum() < counted[0.5].sum() < 300


def test_a_table_samples_its_rows_by_their_place(tmp_path):
    """A table's record id is its row's place in the table, files in path order (0-based)."""
    rng = random.Random(3)
    rows = [(rng.choice("uv"), f"{rng.gauss(1, 1):.3f}", rng.choice("pq")) for _ in range(200)]
    (tmp_path / "t.csv").write_text("y,a,c\n" + "".join(",".join(r) + "\n" for r in rows))
    settings = {"task": "naive_bayes", "nb.model": "mixed", "nb.label_column": "y", "train.format": "csv"}
    settings |= {"train.path": str(tmp_path / "t.csv"), "sample": "0.4"}
    model = nbspark.fit(None, tmp_path / "m", settings=settings)
    picked = [r[0] for i, r in enumerate(rows) if _picked(str(i), 0, 0.4)]
    assert dict(zip(model.classes_, model.class_count_)) == {c: picked.count(c) for c in "uv"}
    assert model.manifest["stats"]["documents_not_sampled"] == 200 - len(picked)


@pytest.mark.spark
@pytest.mark.parametrize("engine", ["auto", "pairs"])
def test_spark_samples_the_documents_and_rows_the_process_samples(spark, tmp_path, engine):
    """The same sample in Spark (the ``combine`` engine, which auto picks: the arrow engine reads no
    record ids; and ``pairs``): the same count table and manifest as in process, for text and a
    table (its rows numbered beforehand, as a hold-out's are)."""
    from tests.naive_bayes.test_in_process import _same_model

    _corpus(tmp_path / "train.tsv", 300, 1)
    text = {**TEXT, "train.path": str(tmp_path / "train.tsv"), "sample": "0.3", "sample_seed": "4"}
    _same_model(spark, tmp_path / "text", {**text, "engine": engine})
    rng = random.Random(5)
    rows = [(rng.choice("uv"), str(rng.randint(0, 9)), rng.choice("pq")) for _ in range(200)]
    (tmp_path / "t.csv").write_text("y,a,c\n" + "".join(",".join(r) + "\n" for r in rows))
    table = {"task": "naive_bayes", "nb.model": "categorical", "nb.label_column": "y", "train.format": "csv"}
    table |= {"train.path": str(tmp_path / "t.csv"), "sample": "0.4", "engine": engine}
    if engine == "auto":
        _same_model(spark, tmp_path / "table", table)
    else:  # the pairs engine reads every row before it samples (its rows_read differ): the same counts
        from nbspark.inputs.resolve import resolve_input
        from nbspark.naive_bayes.jobs import train_nb

        cfg = load_config(None, table)
        train_nb(spark, cfg, resolve_input(cfg.train, None), tmp_path / "pairs")
        here = nbspark.fit(None, tmp_path / "here", settings=table)
        there = nbspark.load(tmp_path / "pairs")
        assert (there.class_count_.tolist(), there.category_count_[0].tolist()) == (
            here.class_count_.tolist(),
            here.category_count_[0].tolist(),
        )
        assert sum(here.class_count_) == sum(1 for i in range(200) if _picked(str(i), 0, 0.4))
    assert resolve_engine(load_config(None, text)) == "combine"


def test_the_curve_ends_at_the_classify_run_of_every_document(tmp_path, capsys):
    _corpus(tmp_path / "train.tsv", 400, 1)
    _corpus(tmp_path / "test.tsv", 150, 2)
    settings = {**TEXT, "train.path": str(tmp_path / "train.tsv"), "test.path": str(tmp_path / "test.tsv")}
    sets = [x for k, v in settings.items() for x in ("--set", f"{k}={v}")]
    argv = [*sets, "--fractions", "0.1,0.5,1", "--seed", "3", "--out", str(tmp_path / "c")]
    assert curve_main(argv, prog="nbspark curve") == 0  # in process: local and small
    out = capsys.readouterr().out
    assert "fraction   documents  accuracy  macro-F1  log-loss  baseline" in out
    rows = json.loads((tmp_path / "c" / "curve.json").read_text())["rows"]
    assert [r["fraction"] for r in rows] == [0.1, 0.5, 1.0]
    assert rows[0]["documents"] < rows[1]["documents"] < rows[2]["documents"] == 400
    nbspark.fit(None, tmp_path / "all", settings=settings)
    whole = nbspark.classify(None, tmp_path / "all", tmp_path / "r", settings=settings)
    last = rows[-1]
    assert (last["accuracy"], last["macro_f1"], last["log_loss"], last["test_documents"]) == (
        whole["accuracy"],
        whole["macro_f1"],
        whole["log_loss"],
        whole["documents"],
    )
    gold = [line.split("\t")[1] for line in (tmp_path / "test.tsv").read_text().splitlines()]
    counts = json.loads((tmp_path / "all" / "manifest.json").read_text())["label_counts"]
    majority = max(sorted(counts), key=counts.get)  # the training sample's commonest class
    assert last["majority_baseline"] == pytest.approx(gold.count(majority) / len(gold))
    csv = (tmp_path / "c" / "curve.csv").read_text().splitlines()
    assert csv[0] == "fraction,documents,test_documents,accuracy,macro_f1,log_loss,majority_baseline"
    assert len(csv) == 4 and (tmp_path / "c" / "curve.png").stat().st_size > 0


@pytest.mark.spark
def test_the_curve_with_spark_is_the_curve_in_process(spark, tmp_path):
    from nbspark.inputs.resolve import resolve_input
    from nbspark.naive_bayes.curves import nb_learning_curve

    _corpus(tmp_path / "train.tsv", 300, 1)
    _corpus(tmp_path / "test.tsv", 100, 2)
    settings = {**TEXT, "train.path": str(tmp_path / "train.tsv"), "test.path": str(tmp_path / "test.tsv")}
    cfg = load_config(None, settings)
    train, test = resolve_input(cfg.train, None), resolve_input(cfg.test, None)
    curves = [
        nb_learning_curve(session, cfg, train, test, tmp_path / name, [0.2, 0.6, 1.0], seed=2)
        for name, session in (("spark", spark), ("here", None))
    ]
    assert len(curves[0]) == 3 and all(a == pytest.approx(b) for a, b in zip(*curves))
    assert curves[0][0]["documents"] < curves[0][1]["documents"] < curves[0][2]["documents"] == 300
