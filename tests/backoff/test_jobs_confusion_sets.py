"""Several confusion sets in one pass, on a tiny Brown-format zip written by hand here."""

import zipfile

import pytest

from nbspark.backoff.jobs import classify, train
from nbspark.inputs.parsers import parse_brown_zip
from nbspark.inputs.resolve import resolve_input
from nbspark.settings.config import load_config

BROWN = {
    "brown/ca01": "\n\n\tThey/ppss lost/vbd their/pp$ way/nn ./.\n\tGo/vb there/rb now/rb ./.\n",
    "brown/cb02": "\n\tIt/pps will/md affect/vb their/pp$ way/nn ./.\n\tMore/ap than/cs ever/rb ./.\n",
    "brown/cats.txt": "ca01 news\ncb02 editorial\n",
    "brown/README": "not a text\n",
}


def brown_zip(path):
    with zipfile.ZipFile(path, "w") as z:
        for name, text in BROWN.items():
            z.writestr(name, text)
    return path


def test_parse_brown_zip(tmp_path):
    docs = list(parse_brown_zip(brown_zip(tmp_path / "brown.zip").read_bytes()))
    assert [d for d, _ in docs] == ["ca01", "cb02"]
    assert docs[0][1] == ["They", "lost", "their", "way", ".", "Go", "there", "now", "."]
    # bytes that are not a zip, a zip cut short, and another zip given as Brown (it counted nothing, in
    # silence)
    from nbspark.errors import InputError

    data = (tmp_path / "brown.zip").read_bytes()
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("notes/readme.txt", "hello")
    for bad, why in (
        (b"plain text", "not a readable zip"),
        (data[: len(data) // 2], "not a readable zip"),
        ((tmp_path / "other.zip").read_bytes(), "no Brown corpus text files"),
    ):
        with pytest.raises(InputError, match=f"^b.zip: {why}"):
            list(parse_brown_zip(bad, "b.zip"))


@pytest.mark.spark
def test_sets_in_one_pass(spark, tmp_path):
    zpath = brown_zip(tmp_path / "brown.zip")
    test = tmp_path / "test.zip"
    with zipfile.ZipFile(test, "w") as z:
        z.writestr("brown/cc03", "\n\tThey/ppss lost/vbd there/ex way/nn ./.\n\tless/ap then/rb ever/rb\n")
    cfg = load_config(
        None,
        {
            "confusion_sets": "their,there;then,than;affect,effect",
            "worked_examples": "",
            "train.format": "brown",
            "train.path": str(zpath),
            "test.format": "brown",
            "test.path": str(test),
        },
    )
    manifest = train(spark, cfg, resolve_input(cfg.train, None), tmp_path / "m")
    assert manifest["stats"]["examples"] == 5 and manifest["stats"]["documents_read"] == 2
    assert manifest["label_counts"] == {"affect": 1, "than": 1, "their": 2, "there": 1}
    metrics = classify(spark, cfg, tmp_path / "m", resolve_input(cfg.test, None), tmp_path / "r")
    sets = {"/".join(r["set"]): r for r in metrics["sets"]}
    # "they lost _ way ." : ABDE seen with their -> their (gold there: wrong)
    # "less then ever </s>" : BD (_ less _ ever) unseen... B=less unseen; ∅ within {then, than} -> than
    # (wrong)
    assert (sets["their/there"]["examples"], sets["their/there"]["correct"]) == (1, 0)
    assert (sets["then/than"]["examples"], sets["then/than"]["correct"]) == (1, 0)
    assert sets["affect/effect"]["examples"] == 0
    assert sets["their/there"]["majority_label"] == "their" and sets["then/than"]["majority_label"] == "than"
