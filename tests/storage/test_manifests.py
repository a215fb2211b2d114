"""Manifest rules that need no model on disk."""

import json

import pytest

from nbspark.errors import InputError
from nbspark.settings.config import load_config
from nbspark.storage.manifests import check_update, counted_files, counted_signatures, fold_stream_updates
from nbspark.storage.tables import json_text


def test_an_update_compares_settings_as_the_manifest_holds_them():
    """Confusion sets given as a string are tuples in the config and lists in the manifest's JSON:
    the same sets, so the update is allowed (it was refused, naming two equal values)."""
    cfg = load_config(None, {"confusion_sets": "affect,effect;their,there"})
    old = {"config": {"confusion_sets": [["affect", "effect"], ["their", "there"]], "width": 5}}
    check_update(old, cfg, ("confusion_sets", "width"))
    other = {"config": {"confusion_sets": [["affect", "effect"]], "width": 5}}
    with pytest.raises(InputError, match="confusion_sets"):
        check_update(other, cfg, ("confusion_sets",))


def _run(created, root, paths, stream=None, documents=1):
    """An update as a run or a stream's batch records it: files and their signatures, statistics."""
    update = {
        "created": created,
        "inputs": {
            "format": "sms",
            "root": root,
            "files": paths,
            "signatures": [[p, 100 + len(p), 1_700_000_000_000 + i] for i, p in enumerate(paths)],
        },
        "stats": {"documents": documents, "lines_read": documents},
    }
    return {**update, "stream": stream} if stream else update


def test_a_streams_batches_fold_into_one_update_that_names_the_same_files():
    updates = [
        _run("t0", "/data/train.txt", ["/data/train.txt"]),  # the batch train, no stream
        _run("t1", "/w", ["/w/a.txt"], "ck-a", 1),
        _run("t2", "/w/", ["/w/sub/b.txt", "/w/c.txt"], "ck-a", 2),  # a root written with its slash
        _run("t3", "/w", ["/w/d.txt"]),  # an --update between two batches of the stream
        _run("t4", "/w", ["/w/e.txt"], "ck-a", 4),
        _run("t5", "/v", ["/v/f.txt"], "ck-b", 8),
        _run("t6", "/v", ["/elsewhere/g.txt"], "ck-b", 16),  # not under its root: kept as it is
    ]
    folded = fold_stream_updates(updates)
    assert [(u["created"], u.get("stream"), u.get("batches")) for u in folded] == [
        ("t0", None, None),
        ("t2", "ck-a", 2),
        ("t3", None, None),
        ("t4", "ck-a", 1),
        ("t5", "ck-b", 1),
        ("t6", "ck-b", None),
    ]
    a = folded[1]
    assert a["inputs"] == {
        "format": "sms",
        "root": "/w",
        "relative": True,
        "signatures": [
            ["a.txt", 108, 1_700_000_000_000],
            ["sub/b.txt", 112, 1_700_000_000_000],
            ["c.txt", 108, 1_700_000_000_001],
        ],
    }
    assert a["stats"] == {"documents": 3, "lines_read": 3}  # 1 + 2
    # what --update compares and what the overlap check finds are the same files, by their full names
    assert [s for u in folded for s in counted_signatures(u["inputs"])] == [
        s for u in updates for s in counted_signatures(u["inputs"])
    ]
    assert [f for u in folded for f in counted_files(u["inputs"])] == [
        f for u in updates for f in counted_files(u["inputs"])
    ]
    assert fold_stream_updates(folded) == folded  # a second compaction folds nothing more
    assert fold_stream_updates(folded + [_run("t7", "/v", ["/v/h.txt"], "ck-b")])[-1]["batches"] == 1


def test_json_files_hold_a_list_of_plain_values_on_one_line():
    value = {
        "parts": [["/m/counts", 12], ["/m/versions/v2/counts", 3]],
        "stats": {"n": 1},
        "empty": [],
        "x": "é",
    }
    text = json_text(value)
    assert json.loads(text) == value
    assert '    ["/m/counts", 12],\n' in text and '"x": "é"' in text
    assert (
        text
        == json.dumps(value, indent=2, ensure_ascii=False)
        .replace('[\n      "/m/counts",\n      12\n    ]', '["/m/counts", 12]')
        .replace('[\n      "/m/versions/v2/counts",\n      3\n    ]', '["/m/versions/v2/counts", 3]')
        + "\n"
    )


def test_a_saved_pipeline_given_as_a_model_names_its_stages_models(tmp_path):
    """A saved pyspark.ml Pipeline(Model) holds each nbspark stage's model in
    ``stages/N_Name_uid/nbspark``: given the pipeline's directory, ``nbspark.load`` names them, in
    stage order (stage 10 after stage 2), where it said only "no manifest.json"."""
    import nbspark
    from nbspark.errors import OutputError

    saved = tmp_path / "pipe"
    for stage in ("0_StringIndexer_a1", "1_RegexTokenizer_b2"):
        (saved / "stages" / stage / "metadata").mkdir(parents=True)
    (saved / "metadata").mkdir()
    first, last = (
        saved / "stages" / "2_CountingNaiveBayesModel_c3",
        saved / "stages" / "10_CountingDensityModel_d4",
    )
    nbspark.NaiveBayes().fit(["cash now", "lunch at noon"], ["spam", "ham"]).save(first / "nbspark")
    said = f"^{saved}: not an nbspark model \\(no manifest.json\\); a saved pipeline, whose stage's model is "
    with pytest.raises(OutputError, match=f"{said}{first / 'nbspark'}$"):
        nbspark.load(saved)
    nbspark.Density().fit([{"a": "x"}]).save(last / "nbspark")
    with pytest.raises(
        OutputError, match=f"whose stages' models are {first / 'nbspark'}, {last / 'nbspark'}$"
    ):
        nbspark.load(saved)
    assert list(nbspark.load(first / "nbspark").classes_) == ["ham", "spam"]
