"""The reports' own rules (``nbspark.report.format``), no JVM."""

from nbspark.app.command import main
from nbspark.report.format import cells_said, near_unique_columns


def test_a_column_of_nearly_a_value_a_row_is_named_in_the_density_train_report(tmp_path, capsys):
    """40 rows: an id (40 values) and an amount (30 values) are named; a city (3 values) and a day of
    the month (20 values, half the rows: not more) are not."""
    assert near_unique_columns({"id": 40, "amount": 30, "city": 3, "day": 20}, 40) == ["id", "amount"]
    assert near_unique_columns({"id": 19}, 19) == []  # too few values to judge
    rows = ["id,city,amount,day"] + [f"{i},{'abc'[i % 3]},{1000 + i % 30}.5,{i % 20}" for i in range(40)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    args = ["train", "--in-process", "--set", "task=density", "--set", f"train.path={tmp_path / 't.csv'}"]
    assert main([*args, "--out", str(tmp_path / "m")]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: ")]
    assert [n.split()[1] for n in notes] == ["id", "amount"]
    assert notes[1].startswith("note: amount has 30 values in 40 rows, nearly one a row")
    assert notes[1].endswith("(density.bins, e.g. amount=quantiles:4)")
    binned = [*args, "--set", "density.bins=amount=quantiles:4", "--out", str(tmp_path / "b")]
    assert main(binned) == 0  # as the note says: four bins of ten rows each (1000.5 … 1029.5, 30 values)
    out = capsys.readouterr().out
    assert "amount (4 values)" in out and [
        n.split()[1] for n in out.splitlines() if n.startswith("note: ")
    ] == ["id"]


def test_a_densitys_cells_are_named_one_way_everywhere():
    """The predict line, the query's answer and its refusal named a cell three ways (A="7", A=7,
    B='7'); now one: bare where it reads plainly, JSON-quoted where it could be misread, (empty)
    for a missing cell, with a binned number's bin."""
    assert cells_said({"A": "7", "B": "", "C": None}) == 'A=7, B="", C=(empty)'
    assert cells_said({"A": " 7", "B": "x,y", "C": "a=b", "D": 'say "hi"', "E": "(n)"}) == (
        'A=" 7", B="x,y", C="a=b", D="say \\"hi\\"", E="(n)"'
    )
    assert (
        cells_said({"age": "41", "city": "Zürich"}, {"age": {"41": "[40, 50)"}})
        == "age=41 (in [40, 50)), city=Zürich"
    )
