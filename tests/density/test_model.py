"""The lecture's density estimators on its Boolean A, B, C truth table, worked by hand. Pure."""

import math

import pytest

from nbspark.density.model import DensityModel, count_rows, row_key

# (A, B, C) -> P, the lecture's joint distribution
TABLE = {
    ("0", "0", "0"): 0.30,
    ("0", "0", "1"): 0.05,
    ("0", "1", "0"): 0.10,
    ("0", "1", "1"): 0.05,
    ("1", "0", "0"): 0.05,
    ("1", "0", "1"): 0.10,
    ("1", "1", "0"): 0.25,
    ("1", "1", "1"): 0.10,
}
COLUMNS = ("A", "B", "C")


def _model(m: float = 0.0) -> DensityModel:
    return DensityModel.from_rows(count_rows(TABLE.items(), COLUMNS), COLUMNS, m)


def test_the_joint_gives_the_table_back_exactly():
    model = _model()
    for (a, b, c), p in TABLE.items():
        assert model.probability({"A": a, "B": b, "C": c}) == p
    assert model.total == 1.0  # the weights add to what they say (math.fsum)


def test_conditionals_by_hand():
    model = _model()
    # P(A | B) = P(A, B) / P(B) = (0.25 + 0.10) / (0.10 + 0.05 + 0.25 + 0.10) = 0.7
    assert model.probability({"A": "1"}, {"B": "1"}) == pytest.approx(0.7)
    # P(C | A, ¬B) = 0.10 / (0.05 + 0.10)
    assert model.probability({"C": "1"}, {"A": "1", "B": "0"}) == pytest.approx(2 / 3)
    # P(A, B | ¬C) = 0.25 / (0.30 + 0.10 + 0.05 + 0.25)
    assert model.probability({"A": "1", "B": "1"}, {"C": "0"}) == pytest.approx(0.25 / 0.70)
    assert model.probability({"A": "1"}) == pytest.approx(0.5)
    assert model.probability({"A": "1"}, {"A": "0"}) == 0.0  # one column asked two values


def test_the_naive_density_is_the_product_of_the_marginals():
    model = _model()
    # P(A) = 0.5, P(¬B) = 0.30 + 0.05 + 0.05 + 0.10 = 0.5, P(C) = 0.05 + 0.05 + 0.10 + 0.10 = 0.3
    assert model.probability({"A": "1", "B": "0", "C": "1"}, model="naive") == pytest.approx(0.5 * 0.5 * 0.3)
    assert model.probability({"A": "1", "B": "0", "C": "1"}) == 0.10  # the joint's own
    # naive conditionals: the columns are independent, so the given ones drop out
    assert model.probability({"A": "1"}, {"C": "1"}, model="naive") == pytest.approx(0.5)


def test_dirichlet_smoothing_by_hand():
    """(# + m·q) / (N + m), q = 1 / the column's values: a row never seen gets some mass."""
    rows = [(("x", "p"), 3.0), (("y", "p"), 1.0)]  # A in {x, y}, B only ever p
    model = DensityModel.from_rows(count_rows(rows, ("A", "B")), ("A", "B"), m=2.0)
    # joint: P(A=x) = (3 + 2 · 1/2) / (4 + 2)
    assert model.probability({"A": "x"}) == pytest.approx(4 / 6)
    # joint, a whole row: q = 1/2 · 1/1
    assert model.probability({"A": "y", "B": "p"}) == pytest.approx((1 + 2 * 0.5) / 6)
    # naive: each column smoothed alone
    assert model.probability({"A": "y", "B": "p"}, model="naive") == pytest.approx((1 + 1) / 6 * (4 + 2) / 6)
    # a value never seen: m·q with q of the values seen
    assert model.probability({"A": "z"}) == pytest.approx(2 * 0.5 / 6)
    unsmoothed = DensityModel.from_rows(count_rows(rows, ("A", "B")), ("A", "B"))
    assert unsmoothed.log_density([{"A": "x", "B": "p"}, {"A": "x", "B": "q"}]) == [math.log(0.75), -math.inf]


def test_refusals_say_what_is_wrong():
    model = _model()
    with pytest.raises(ValueError, match="no column 'D'; the model's columns are A, B, C"):
        model.probability({"D": "1"})
    said = "^values: a cell is text as the table writes it, or None for an empty one; got 1 for 'A'"
    with pytest.raises(ValueError, match=said + r" \(a density counts categories: give a number as text"):
        model.probability({"A": 1})
    with pytest.raises(ValueError, match="model must be 'joint' or 'naive'"):
        model.probability({"A": "1"}, model="both")
    with pytest.raises(ValueError, match="P\\(given\\) = 0 under the joint model"):
        model.probability({"A": "1"}, {"B": "2"})
    with pytest.raises(TypeError, match="^values: a mapping of column -> cell, got list .*log_density"):
        model.probability([{"A": "1"}])  # many rows: log_density (an AttributeError was all it said)


def test_a_row_names_every_column_the_model_knows_and_no_other():
    """A column the model does not know was dropped in silence (a misspelt one too: {"A", "B",
    "C", "colour"} scored as if "colour" were not there), where a naive Bayes table model refuses
    it; ``extra_columns`` leaves an id out. Each refusal names its row."""
    model = _model()
    row = {"A": "1", "B": "1", "C": "0"}
    with pytest.raises(
        ValueError, match=r"^column\(s\) the model does not know: 'id'; its columns: A, B, C \("
    ):
        model.log_density([row, {**row, "id": "7"}])
    assert model.log_density([{**row, "id": "7"}], extra_columns=["id"]) == [math.log(0.25)]
    with pytest.raises(TypeError, match="extra_columns is a list of column names, not 'id'"):
        model.log_density([{**row, "id": "7"}], extra_columns="id")
    with pytest.raises(ValueError, match=r"^row 1 lacks column\(s\) C: a density is of whole rows$"):
        model.log_density([row, {"A": "1", "B": "1"}])
    with pytest.raises(ValueError, match=r"^row 1: a cell is text .*got 1 for 'A' \(a density counts categ"):
        model.log_density([row, {**row, "A": 1}])
    with pytest.raises(TypeError, match=r"^rows are mappings of column -> cell; row 0 is a list$"):
        model.log_density([["1", "1", "0"]])


def test_a_row_key_is_compact_json_with_nulls():
    assert row_key(["a", None, "é"]) == '["a",null,"é"]'
