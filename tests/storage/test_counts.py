"""Readers that trust nothing: a model is checked whole on every read (the marker, the manifest
against its declared fields, the count table's counts and keys), and every damage is one line
from ``nbspark.load`` and from the ``nbspark`` command, never a traceback or a silent answer."""

import json
import re
import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import nbspark
from nbspark.app.command import main
from nbspark.errors import NbsparkError
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config
from nbspark.storage.manifests import BACKOFF_KIND, NB_KIND
from nbspark.storage.tables import MARKER


def test_the_kinds_written_into_models_never_change():
    """Models written by earlier versions keep loading: the kinds are fixed strings."""
    assert BACKOFF_KIND == "nbspark.backoff-counts" and NB_KIND == "nbspark.nb-counts"


@pytest.fixture(scope="module")
def models(spark, tmp_path_factory):
    """A naive Bayes model (the China fixture) and a backoff model (the n-gram fixture)."""
    from pathlib import Path

    from nbspark.backoff.jobs import train
    from nbspark.naive_bayes.jobs import train_nb

    data = Path(__file__).parents[1] / "data"
    root = tmp_path_factory.mktemp("models")
    nb = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "train.format": "tsv",
            "train.path": str(data / "china_train.tsv"),
        },
    )
    train_nb(spark, nb, resolve_input(nb.train, None), root / "nb")
    backoff = load_config(None, {"train.path": str(data / "ngrams.txt")})
    train(spark, backoff, resolve_input(backoff.train, None), root / "backoff")
    return root


def _damaged(models, tmp_path, which: str, damage):
    model = tmp_path / which
    shutil.copytree(models / which, model)
    damage(model)
    return model


def _manifest(edit):
    def damage(model):
        manifest = json.loads((model / "manifest.json").read_text())
        (model / "manifest.json").write_text(json.dumps(edit(manifest)))

    return damage


def _drop(path):
    def edit(manifest):
        *parents, last = path.split(".")
        node = manifest
        for part in parents:
            node = node[part]
        del node[last]
        return manifest

    return edit


def _retype(path, value):
    def edit(manifest):
        *parents, last = path.split(".")
        node = manifest
        for part in parents:
            node = node[part]
        node[last] = value
        return manifest

    return edit


def _table(edit):
    """Rewrite the count table's one part file with ``edit(table)`` (the row count kept)."""

    def damage(model):
        (part,) = sorted((model / "counts").glob("part-*.parquet"))
        table = pq.read_table(part)
        pq.write_table(edit(table), part)
        (part.parent / f".{part.name}.crc").unlink(missing_ok=True)  # as if written so: Spark reads it

    return damage


def _negative(column):
    def edit(table):
        values = table[column].to_pylist()
        values[0] = -1
        return table.set_column(
            table.column_names.index(column), column, pa.array(values, table[column].type)
        )

    return edit


def _duplicate_first_row(table):
    return pa.concat_tables([table.slice(0, 1), table.slice(0, table.num_rows - 1)])


DAMAGES = [
    ("nb", "no config", _manifest(_drop("config")), "field 'config' is missing"),
    ("nb", "no nb settings", _manifest(_drop("config.nb")), "field 'config.nb' is missing"),
    ("nb", "no model", _manifest(_drop("model")), "field 'model' is missing"),
    ("nb", "count_rows a string", _manifest(_retype("count_rows", "13")), "field 'count_rows' is a string"),
    ("nb", "label_counts a list", _manifest(_retype("label_counts", [])), "field 'label_counts' is a list"),
    ("nb", "alpha a string", _manifest(_retype("config.nb.alpha", "1")), "'config.nb.alpha' is a string"),
    ("nb", "a JSON list", _manifest(lambda m: [m]), "a JSON list, expected an object"),
    ("backoff", "no letters", _manifest(_drop("letters")), "field 'letters' is missing"),
    ("backoff", "width a string", _manifest(_retype("config.width", "5")), "'config.width' is a string"),
    (
        "backoff",
        "kind of the other family",
        _manifest(_retype("kind", NB_KIND)),
        # read as what it says it is (a naive Bayes model); a backoff job says that it is not its own
        "field 'model' is missing|a naive_bayes model, not a backoff one|a model of kind 'nbspark.nb-counts'",
    ),
    ("nb", "no marker", lambda m: (m / MARKER).unlink(), "not a complete nbspark model \\(no _nbspark.json"),
    (
        "nb",
        "a results marker",
        lambda m: (m / MARKER).write_text('{"kind": "results"}'),
        "_nbspark.json of kind a string \\('results'\\)",
    ),
    ("nb", "a negative count", _table(_negative("n")), "a negative count \\(-1\\) in column 'n'"),
    (
        "backoff",
        "a negative count",
        _table(_negative("count")),
        "a negative count \\(-1\\) in column 'count'",
    ),
    ("backoff", "a key written twice", _table(_duplicate_first_row), "1 row\\(s\\) repeat a key"),
    ("nb", "a key written twice", _table(_duplicate_first_row), "1 row\\(s\\) repeat a key"),
]


def _readers(which: str, model, tmp_path) -> dict:
    """Every command that reads a model, as a user types it: ``(prog, argv)`` by name."""
    from pathlib import Path

    data = Path(__file__).parents[1] / "data"
    text = tmp_path / "text.txt"
    text.write_text("It would not effect the outcome.\n")
    m = str(model)
    if which == "nb":
        test = [
            "--set",
            "task=naive_bayes",
            "--set",
            "test.format=tsv",
            "--set",
            f"test.path={data / 'china_test.tsv'}",
        ]
        return {
            "predict": ["predict", "--model", m, "beijing chinese"],
            "classify": ["classify", "--model", m, *test, "--out", str(tmp_path / "r")],
        }
    test = ["--set", "test.format=ngrams", "--set", f"test.path={data / 'ngrams.txt'}"]
    return {
        "predict": ["predict", "--model", m, "would not _ the outcome"],
        "check": ["check", "--model", m, str(text)],
        "classify": ["classify", "--model", m, *test, "--out", str(tmp_path / "r")],
        "query": ["query", "--model", m, "--A", "would", "--B", "not", "--C", "_"],
    }


@pytest.mark.parametrize("which, what, damage, message", DAMAGES, ids=[f"{d[0]}: {d[1]}" for d in DAMAGES])
def test_a_damaged_model_is_one_line_from_every_reader(
    spark, models, tmp_path, capsys, which, what, damage, message
):
    """``nbspark.load`` raises nbspark's error; every command that reads the model (predict, check,
    and the classify and query jobs, with Spark) says one line naming the damage and exits non-zero."""
    model = _damaged(models, tmp_path, which, damage)
    with pytest.raises(NbsparkError, match=message):
        nbspark.load(model)
    for name, argv in _readers(which, model, tmp_path).items():
        capsys.readouterr()
        assert main(["-q", *argv]) != 0, name
        err = [x for x in capsys.readouterr().err.strip().splitlines() if x.strip()]
        assert len(err) == 1 and "Traceback" not in err[0] and " error: " in err[0], (name, err)
        assert re.search(message, err[0]), (name, err)


@pytest.mark.parametrize(
    "damage, message",
    [
        (_table(_negative("count")), "a negative count \\(-1\\) in column 'count'"),
        (_table(_duplicate_first_row), "1 row\\(s\\) repeat a key"),
    ],
    ids=["a negative count", "a key written twice"],
)
def test_the_backoff_classify_job_refuses_a_damaged_table_as_load_does(
    spark, models, tmp_path, damage, message
):
    """The job built its model from a Spark read that checked neither: the count was used as
    written (a negative one moved the decision to another level) or twice."""
    from pathlib import Path

    from nbspark.backoff.jobs import classify

    model = _damaged(models, tmp_path, "backoff", damage)
    data = Path(__file__).parents[1] / "data"
    cfg = load_config(None, {"test.format": "ngrams", "test.path": str(data / "ngrams.txt")})
    with pytest.raises(NbsparkError, match=message):
        classify(spark, cfg, model, resolve_input(cfg.test, None), tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_the_undamaged_models_load(models):
    """The corpus's models as trained load and predict (the damages above are what breaks them)."""
    assert nbspark.load(models / "nb").predict(["Chinese Beijing"]).tolist() == ["c"]
    assert nbspark.load(models / "backoff").predict(["would not _ the outcome"])[0] in ("affect", "effect")
    with pytest.raises(NbsparkError, match="model does not apply to .*, a backoff model"):
        nbspark.load(models / "backoff", model="complement")  # refused, never ignored
    with pytest.raises(NbsparkError, match="model='bernoulli': a multinomial model is read as complement"):
        nbspark.load(models / "nb", model="bernoulli")


def test_the_checks_of_a_table_read_are_one_pass_over_its_columns():
    """``check_counts`` alone, on a table written by hand: counts >= 0 and each key once."""
    from nbspark.errors import OutputError
    from nbspark.storage.counts import check_counts

    good = pa.table(
        {"subset": ["AB", "AB", "B"], "a": ["x", "y", None], "label": ["e", "e", "e"], "count": [1, 2, 3]}
    )
    check_counts(good, "t")
    with pytest.raises(OutputError, match="repeat a key"):
        check_counts(pa.concat_tables([good, good.slice(2, 1)]), "t")
    with pytest.raises(OutputError, match="negative count"):
        check_counts(good.set_column(3, "count", pc.subtract(good["count"], 2)), "t")


@pytest.mark.parametrize(
    "damage, message",
    [
        (_table(_negative("n")), "a negative count \\(-1\\) in column 'n'"),
        (_table(_duplicate_first_row), "1 row\\(s\\) repeat a key"),
    ],
    ids=["a negative count", "a key written twice"],
)
def test_the_join_scorer_refuses_a_damaged_table_as_load_does(spark, models, tmp_path, damage, message):
    """The join scorer reads the count table in Spark (a model too large for the driver): checked
    there by one aggregation job (``check_counts_spark``), as ``nbspark.load`` checks it."""
    from pathlib import Path

    from nbspark.naive_bayes.jobs import classify_nb

    model = _damaged(models, tmp_path, "nb", damage)
    data = Path(__file__).parents[1] / "data"
    cfg = load_config(
        None,
        {
            "task": "naive_bayes",
            "nb.tokenizer": "words",
            "scoring": "join",
            "test.format": "tsv",
            "test.path": str(data / "china_test.tsv"),
        },
    )
    with pytest.raises(NbsparkError, match=message):
        classify_nb(spark, cfg, model, resolve_input(cfg.test, None), tmp_path / "results")
    assert not (tmp_path / "results").exists()


def test_the_spark_check_agrees_with_the_arrow_one(spark):
    """``check_counts_spark`` and ``check_counts`` on the same tables: NULL keys equal, the same refusals."""
    from nbspark.errors import OutputError
    from nbspark.storage.counts import check_counts, check_counts_spark

    good = pa.table(
        {"subset": ["AB", "AB", "B"], "a": ["x", "y", None], "label": ["e", "e", "e"], "count": [1, 2, 3]}
    )
    tables = {
        "good": good,
        "twice": pa.concat_tables([good, good.slice(2, 1)]),
        "negative": good.set_column(3, "count", pc.subtract(good["count"], 2)),
    }
    for name, table in tables.items():
        said = []
        for check, given in (
            (check_counts, table),
            (check_counts_spark, spark.createDataFrame(table.to_pandas())),
        ):
            try:
                check(given, "t")
                said.append(None)
            except OutputError as exc:
                said.append(str(exc).split(",")[0])
        assert said[0] == said[1] and (said[0] is None) == (name == "good"), (name, said)
