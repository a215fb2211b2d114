import json

from nbspark.report.curves import write_curve


def test_a_curves_files_hold_its_rows_every_digit_kept_and_none_empty(tmp_path):
    """One rule for every family's curve files: curve.json as given, curve.csv by Python's csv (a
    number as str writes it, so 1/3 reads back equal; None an empty cell; a comma quoted), the plot
    drawn at curve.png."""
    drawn = []
    rows = [[0.1, 3, None, 1 / 3], [1.0, 30, 0.5, "a,b"]]
    write_curve(tmp_path, {"rows": rows}, ["fraction", "n", "coverage_B", "x"], rows, drawn.append)
    assert json.loads((tmp_path / "curve.json").read_text()) == {"rows": rows}
    assert (tmp_path / "curve.csv").read_text() == (
        'fraction,n,coverage_B,x\n0.1,3,,0.3333333333333333\n1.0,30,0.5,"a,b"\n'
    )
    assert drawn == [tmp_path / "curve.png"]
