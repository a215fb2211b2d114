"""The textbook variants of naive Bayes, each on an example worked by hand: the value written in the
test, with where it comes from. (The IR book's China/Japan example, multinomial and Bernoulli, is in
tests/naive_bayes/test_model.py: test_iir_multinomial_golden, test_iir_bernoulli_golden.)"""

import dataclasses
import math

import pytest

from nbspark.errors import ConfigError
from nbspark.naive_bayes.events import doc_events, row_events
from nbspark.naive_bayes.model import build_nb_model, log_posteriors, score_docs
from nbspark.naive_bayes.table_scores import score_rows
from nbspark.report.metrics import pr_curve
from nbspark.settings.config import load_config
from nbspark.settings.naive_bayes import model_options
from tests.naive_bayes.test_events import count


def nb_of(**settings):
    cfg = load_config(None, {"task": "naive_bayes", **{f"nb.{k}": v for k, v in settings.items()}})
    return dataclasses.asdict(cfg.nb)


# Cohen's v1 on a 20-row table, 3 classes, X1 in {p, q}, X2 in {r, s}:
#   a: 2 rows, both (p, r); b: 8 rows, X1 = p in 3, X2 = r in 3; c: 10 rows, X1 = p in 1, X2 = r in 2.
V1_ROWS = (
    [("a", "p", "r")] * 2
    + [("b", "p", "r"), ("b", "p", "s"), ("b", "p", "s"), ("b", "q", "r"), ("b", "q", "r")]
    + [("b", "q", "s")] * 3
    + [("c", "p", "s"), ("c", "q", "r"), ("c", "q", "r")]
    + [("c", "q", "s")] * 7
)


def v1_model(preset):
    rows = count(e for y, x1, x2 in V1_ROWS for e in row_events(y, {"x1": x1, "x2": x2}, {}))
    nb = nb_of(model="categorical", preset=preset, domains="x1=p|q,x2=r|s")
    return build_nb_model(rows, "categorical", **model_options(nb))


def test_cohen_v1_smoothed_prior_by_hand():
    """Row (p, r). Features, m·q = 1 over |dom| = 2: P(p|a) = P(r|a) = (2+1)/(2+2) = 3/4;
    P(p|b) = P(r|b) = (3+1)/(8+2) = 2/5; P(p|c) = (1+1)/(10+2) = 1/6, P(r|c) = (2+1)/12 = 1/4.
    v1 prior (n_y + 1)/(20 + 3): 3/23, 9/23, 11/23 -> a: 3/23·9/16, b: 9/23·4/25, c: 11/23·1/24: a wins.
    The MLE prior (scikit-learn) 2/20, 8/20, 10/20 -> a: 0.05625 < b: 0.064: b wins."""
    joint = {"a": 3 / 23 * 9 / 16, "b": 9 / 23 * 4 / 25, "c": 11 / 23 * 1 / 24}
    total = sum(joint.values())
    v1 = v1_model("cohen_v1")
    post = math.e ** log_posteriors(score_rows(v1, [({"x1": "p", "x2": "r"}, {})])[0])[0]
    assert dict(zip(v1.classes, post)) == pytest.approx({k: v / total for k, v in joint.items()})  # a: 0.4706
    assert v1.classes[post.argmax()] == "a"
    mle = v1_model("sklearn")
    assert mle.classes[score_rows(mle, [({"x1": "p", "x2": "r"}, {})])[0][0].argmax()] == "b"


TWO_PAGES = [("academic", ["research", "paper", "research"]), ("commercial", ["buy", "now"])]


def test_cohen_v2_an_unseen_word_counts():
    """v2: |V| = 4 training words + 1 unseen. "hockey": academic (0+1)/(3+5) = 1/8, commercial
    (0+1)/(2+5) = 1/7, priors (1+1)/(2+2) each -> P(academic) = 7/15 = 0.4667, commercial wins.
    "research hockey": academic 3/8 · 1/8, commercial 1/7 · 1/7 -> P(academic) = (3/64) / (3/64 + 1/49).
    Dropping unseen words (scikit-learn), "hockey" is a tie: 0.5, and the first class wins."""
    rows = count(e for y, toks in TWO_PAGES for e in doc_events([y], toks, "multinomial"))
    v2 = build_nb_model(rows, "multinomial", **model_options(nb_of(preset="cohen_v2")))
    post = math.e ** log_posteriors(score_docs(v2, [["hockey"], ["research", "hockey"]])[0])
    assert post[0][0] == pytest.approx(7 / 15)
    assert post[1][0] == pytest.approx((3 / 64) / (3 / 64 + 1 / 49))
    drop = build_nb_model(rows, "multinomial", **model_options(nb_of(preset="sklearn")))
    assert (math.e ** log_posteriors(score_docs(drop, [["hockey"]])[0]))[0][0] == pytest.approx(0.5)


def test_cohen_v0_zero_counts_lose_and_all_zero_ties():
    """v0 (α = 0): "research" never occurs in commercial pages, so P(commercial | research) = 0;
    "research buy" has a zero factor in both classes: uniform posteriors, the first class."""
    rows = count(e for y, toks in TWO_PAGES for e in doc_events([y], toks, "multinomial"))
    v0 = build_nb_model(rows, "multinomial", **model_options(nb_of(preset="cohen_v0")))
    post = math.e ** log_posteriors(score_docs(v0, [["research"], ["research", "buy"]])[0])
    assert post[0].tolist() == [1.0, 0.0]
    assert post[1].tolist() == [0.5, 0.5]


@pytest.mark.parametrize("n", [1, 10, 365])
def test_laplace_sunrise(n):
    """After n days of sunrise, P(sunrise tomorrow) = (n+1)/(n+2) (Laplace's rule of succession):
    a Bernoulli column that was 1 on every one of n rows, (Σx + 1)/(n + 2)."""
    rows = count(e for _ in range(n) for e in row_events("day", {"sunrise": "1"}, {}))
    model = build_nb_model(
        rows, "categorical", **model_options(nb_of(model="categorical", bernoulli_columns="sunrise"))
    )
    assert math.exp(model.weights[0, model.vocab[("sunrise", "1")]]) == pytest.approx((n + 1) / (n + 2))
    assert math.exp(model.weights[0, model.vocab[("sunrise", "0")]]) == pytest.approx(1 / (n + 2))


def test_bernoulli_column_constant_in_training():
    """flag is 1 on every training row (y: 3 rows, z: 1). Values seen only: P(1|y) = 1 and a test
    0 is skipped as unknown, so the posterior is the prior, P(y) = 3/4. Declared 0/1 (a Bernoulli
    column): P(0|y) = (0+1)/(3+2) = 1/5, P(0|z) = (0+1)/(1+2) = 1/3 -> P(y) = (3/4 · 1/5) / (3/4 · 1/5 + 1/4
    · 1/3)."""
    rows = count(e for label in "yyyz" for e in row_events(label, {"flag": "1"}, {}))
    test = [({"flag": "0"}, {})]
    seen = build_nb_model(rows, "categorical", alpha=1.0)
    assert math.exp(seen.weights[0, seen.vocab[("flag", "1")]]) == pytest.approx(1.0)
    assert (math.e ** log_posteriors(score_rows(seen, test)[0]))[0][0] == pytest.approx(3 / 4)
    for settings in ({"bernoulli_columns": "flag"}, {"domains": "flag=0|1"}):
        declared = build_nb_model(
            rows, "categorical", **model_options(nb_of(model="categorical", **settings))
        )
        post = (math.e ** log_posteriors(score_rows(declared, test)[0]))[0]
        assert post[0] == pytest.approx((3 / 4 * 1 / 5) / (3 / 4 * 1 / 5 + 1 / 4 * 1 / 3))  # 0.6429


def test_a_loaded_bernoulli_column_reads_cells_as_training_did():
    """nbspark.load's rows read a Bernoulli column by the jobs' rule: 1, 1.0, "1", True and "TRUE" are the
    event flag=1 (1.0 was the unseen category "1.0", left out in silence); 2 is refused. Same model
    as above: a 0 gives P(y) = 0.6429, a 1 gives (3/4 · 4/5) / (3/4 · 4/5 + 1/4 · 2/3) = 0.7826."""
    from nbspark.naive_bayes.predictor import NBPredictor

    rows = count(e for label in "yyyz" for e in row_events(label, {"flag": "1"}, {}))
    nb = nb_of(model="categorical", bernoulli_columns="flag")
    manifest = {
        "model": "categorical",
        "config": {"nb": nb},
        "columns": {"numeric": [], "categorical": ["flag"]},
    }
    loaded = NBPredictor(manifest, rows)
    one = (3 / 4 * 4 / 5) / (3 / 4 * 4 / 5 + 1 / 4 * 2 / 3)
    assert loaded.predict_proba([{"flag": v} for v in (1, 1.0, "1", True, " 1 ", "TRUE")])[
        :, 0
    ] == pytest.approx([one] * 6)
    assert loaded.predict_proba([{"flag": v} for v in (0.0, False, "false")])[:, 0] == pytest.approx(
        [0.6429] * 3, abs=1e-4
    )
    with pytest.raises(ValueError, match="row 1, column 'flag': 2 is not 0 or 1"):
        loaded.predict([{"flag": 1}, {"flag": 2}])


def test_pr_curve_by_hand():
    """Scores P(pos): 2/3 (pos), 2/3 (pos), 1/3 (pos), 1/3 (neg), 2/3 (neg). At t >= 2/3: tp 2, fp 1;
    at t >= 1/3: tp 3, fp 2. AP = 2/3 · 2/3 + (1 − 2/3) · 3/5."""
    pr = pr_curve([(2 / 3, True), (2 / 3, True), (1 / 3, True), (1 / 3, False), (2 / 3, False)], 0.5)
    assert pr["precision"] == pytest.approx([2 / 3, 3 / 5]) and pr["recall"] == pytest.approx([2 / 3, 1.0])
    assert pr["average_precision"] == pytest.approx(2 / 3 * 2 / 3 + 1 / 3 * 3 / 5)
    assert (pr["precision_at_threshold"], pr["recall_at_threshold"]) == pytest.approx((2 / 3, 2 / 3))


def test_presets_refuse_what_they_contradict():
    assert nb_of(preset="mllib", alpha="0.5")["prior_alpha"] == 0.5  # MLlib's prior pseudo-count is λ
    with pytest.raises(ConfigError, match="nb.preset = cohen_v2 sets nb.unseen = 'smooth'"):
        nb_of(preset="cohen_v2", unseen="drop")
    with pytest.raises(ConfigError, match="nb.preset must be one of"):
        nb_of(preset="cohen_v3")
    with pytest.raises(ConfigError, match="unseen = smooth"):
        nb_of(model="bernoulli", unseen="smooth")


def test_bernoulli_mle_with_words_every_document_had():
    """α = 0, Bernoulli: class a's documents {x}, {x, y} all hold x, so a document without x has
    probability 0 under a; class b's only document {y} never holds x. {y}: only b is possible;
    {x}: only a ((1)(1 − 1/2) against 0); {x, y}: a, 1 · 1/2."""
    docs = [("a", ["x"]), ("a", ["x", "y"]), ("b", ["y"])]
    rows = count(e for y, toks in docs for e in doc_events([y], toks, "bernoulli"))
    v0 = build_nb_model(rows, "bernoulli", alpha=0.0)
    post = math.e ** log_posteriors(score_docs(v0, [["y"], ["x"], ["x", "y"]])[0])
    assert post.tolist() == [[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]
