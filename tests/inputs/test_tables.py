"""``inputs.tables``: the CSV rules that Spark's reader and the in-process one share."""

import pytest

from nbspark.inputs.tables import csv_frame, decimal_comma_columns, local_table
from nbspark.storage.locations import location

#: by hand: 'a b' and 'x.y' hold only numbers with a decimal comma (1.000 is a thousand); 'q`r' holds
#: a word, 'é' a number in one row and a word in the other, 'none' only empty cells (no number in it)
WEIRD = "a b;x.y;q`r;é;none;label\n1,5;2;3,0;x;;y\n-2,5;1.000;a;4;;n\n;,5;1;x;;y\nNaN;-Inf;Inf;NaN;;n\n"


@pytest.mark.spark
def test_the_columns_of_decimal_comma_numbers_are_found_alike_in_spark_and_in_process(spark, tmp_path):
    """Column names that Spark SQL must quote (a space, a dot, a backtick, non-ASCII)."""
    (tmp_path / "w.csv").write_text(WEIRD)
    files = [location(tmp_path / "w.csv")]
    by_spark = decimal_comma_columns(csv_frame(spark, files, delimiter=";"))
    assert by_spark == decimal_comma_columns(local_table(files, "csv", False, ";")[0]) == {"a b", "x.y"}
