"""Tables read in this process with pyarrow, as Spark's readers read them. Pure (no Spark)."""

from __future__ import annotations

import csv
import io

from nbspark.errors import InputError
from nbspark.inputs.files import local_line_values

__all__ = ["csv_table"]


def csv_table(f, as_text: bool):
    """One CSV file (a ``Location``) with its header, as Spark's CSV reader reads it (``header``,
    ``PERMISSIVE``, one line a record): ``.gz`` and ``.bz2`` decompressed, bytes that are not UTF-8
    read as U+FFFD, empty lines skipped, an empty cell null, every column as text (``as_text``) or
    with the types pyarrow infers. A row with fewer cells than the header ends in nulls, one with
    more loses the extra cells (Spark's rule), and a quote left open ends with its line. None for an
    empty file (it holds no rows, as Spark reads it); a header naming a column twice is refused
    (``InputError``)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    lines = [line for line in local_line_values(f) if line]  # Spark skips empty lines
    if not lines:
        return None
    header = _cells(lines[0].decode("utf-8", "replace"))
    if twice := sorted({name for name in header if header.count(name) > 1}):
        raise InputError(f"{f}: the header names column {twice[0]!r} twice; name each column once")
    types = {name: pa.string() for name in header} if as_text else None
    options = pacsv.ConvertOptions(column_types=types, null_values=[""], strings_can_be_null=True)
    data = b"\n".join(lines).decode("utf-8", "replace").encode("utf-8")
    try:
        table = pacsv.read_csv(io.BytesIO(data), convert_options=options)
        if table.num_rows == len(lines) - 1:  # else a quoted value held a line end: not Spark's rows
            return table
    except pa.ArrowInvalid as exc:
        if "CSV parse error" not in str(exc):
            raise InputError(f"{f}: {exc}") from None
    # a row of another width than the header, or a quote open at a line's end: each line parsed on
    # its own, cut or padded to the header's width
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for line in data.decode("utf-8").split("\n"):
        cells = _cells(line)
        writer.writerow((cells + [""] * len(header))[: len(header)])
    return pacsv.read_csv(io.BytesIO(out.getvalue().encode("utf-8")), convert_options=options)


def _cells(line: str) -> list[str]:
    """The cells of one CSV line, by Python's reader with its field limit raised to the line's length
    (Spark's reader has none: a 200 KB cell is read)."""
    if len(line) > csv.field_size_limit():
        csv.field_size_limit(len(line))
    return next(csv.reader([line]), [])
