"""Tables read in this process with pyarrow, as Spark's readers read them. Pure (no Spark)."""

from __future__ import annotations

__all__ = ["csv_table"]


def csv_table(path: str, as_text: bool):
    """One CSV file with its header, as Spark's CSV reader reads it: an empty cell is null, every
    column as text (``as_text``) or with the types pyarrow infers."""
    import csv

    import pyarrow as pa
    import pyarrow.csv as pacsv

    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        header = next(csv.reader(fh), [])
    types = {name: pa.string() for name in header} if as_text else None
    options = pacsv.ConvertOptions(column_types=types, null_values=[""], strings_can_be_null=True)
    return pacsv.read_csv(path, convert_options=options)
