"""``nbspark predict``: texts, windows or table rows scored by any model in process, no Spark: given
as arguments, stdin's lines, or a CSV file's rows or stdin's (``--csv``), each batch answered once
it is read."""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import NamedTuple

from nbspark.app.options import report_undecodable, stdin_bytes
from nbspark.errors import NbsparkError

__all__ = ["predict_main"]


def predict_main(argv: list[str]) -> int:
    """``nbspark predict``: score texts or windows with a model, in process (no Spark)."""
    parser = argparse.ArgumentParser(
        prog="nbspark predict",
        description="Score with a trained model without Spark. Backoff models: a window with '_' (or a "
        "confusion-set word) at the centre, or a sentence, whose every confusion-set word is scored in its "
        "window. Naive Bayes text models: one document per argument (or per line with '-'); table models "
        "(gaussian, categorical, mixed) and density models: one JSON object of column -> value per argument "
        "or line, or a JSON array of the cells in the model's column order, or each row of a CSV file "
        "(--csv; a density model answers each row's density).",
    )
    parser.add_argument("--model", required=True, metavar="DIR", help="the model directory")
    parser.add_argument("--json", action="store_true", help="one JSON object per result")
    parser.add_argument(
        "--extra-column",
        action="append",
        default=[],
        metavar="NAME",
        help="table models: a column of the rows to leave out (an id); any other column the model does "
        "not know is refused",
    )
    parser.add_argument(
        "--csv",
        metavar="FILE",
        help="table and density models: score each row of a CSV file with a header ('-': stdin), read as "
        "a train reads one, each batch of rows answered once it is read; instead of TEXT",
    )
    parser.add_argument(
        "--delimiter",
        metavar="CHAR",
        help="--csv: the character between cells (default: the model's train.delimiter, ',')",
    )
    parser.add_argument(
        "texts",
        nargs="*",
        metavar="TEXT",
        help="texts or windows; '-' reads one per line from stdin, each answered once it is read",
    )
    args = parser.parse_args(argv)
    if bool(args.texts) == bool(args.csv):
        parser.error("give TEXT (or '-') or --csv FILE" if not args.texts else "give TEXT or --csv, not both")
    if args.delimiter is not None and not args.csv:
        parser.error("--delimiter applies to --csv")
    from nbspark.loading import load
    from nbspark.predictions import prediction_objects, scores_texts

    given, unscored = 0, 0
    try:
        model = load(args.model)
        if args.csv:  # a file's rows, or stdin's, as they are read: each batch answered at once
            batches = (
                (_Place(str(name), first, "row"), [json.dumps(r, ensure_ascii=False) for r in rows], rows)
                for name, first, rows in _csv_batches(args.csv, model, args.delimiter)
            )
        else:  # stdin's as they come: each answered once its line is read
            lines = _stdin_batches() if args.texts == ["-"] else [(0, args.texts)]
            text = scores_texts(model)
            batches = (
                (
                    _Place("<stdin>", first, "line") if first else _Place("", 1, "argument"),
                    texts,
                    texts if text else [_row(t, first and first + i) for i, t in enumerate(texts)],
                )
                for first, texts in lines
            )
        for place, texts, rows in batches:
            try:
                results, missed = prediction_objects(model, rows, texts, args.extra_column)
            except (ValueError, TypeError) as exc:
                raise type(exc)(place.said(len(texts), str(exc))) from None
            given, unscored = given + len(texts), unscored + missed
            for r in results:
                print(json.dumps(r, ensure_ascii=False) if args.json else _line(r))
            sys.stdout.flush()
    except (NbsparkError, ValueError, TypeError, OSError) as exc:
        print(f"nbspark predict: error: {exc}", file=sys.stderr)
        return 1
    if unscored:  # said, not silent: a text without a set word is not a prediction of the model
        print(
            f"nbspark predict: {unscored:,} of {given:,} texts hold no word of the model's confusion sets "
            f"({model.words_shown()}) and are not a {model.width}-token window with '_' at the "
            "centre: nothing scored in them",
            file=sys.stderr,
        )
    return 0


def _csv_batches(path: str, model, delimiter: str | None):
    """``--csv``'s rows in batches as they are read (``predictions.csv_row_batches``), each
    ``(name, number of its first row, rows)``: a file's (``-``: stdin's, named ``<stdin>``)."""
    from nbspark.inputs.files import line_value_batches, opened
    from nbspark.predictions import csv_row_batches

    if path == "-":
        lines = line_value_batches(_Text(stdin_bytes(), "stdin"))
        for first, rows in csv_row_batches("<stdin>", lines, model, delimiter):
            yield "<stdin>", first, rows
        return
    f = _csv_file(path)
    with opened(f) as stream:
        for first, rows in csv_row_batches(f, line_value_batches(_Text(stream, f)), model, delimiter):
            yield f, first, rows


class _Text:
    """A binary stream refused as no text where a NUL is among its first ``BINARY_PROBE`` bytes (an
    image, an archive), unless it opens with a UTF-16 byte-order mark (read whole as text by
    ``_stdin_batches``; a CSV's header with it is refused with its own hint); each read checked as
    it is made."""

    def __init__(self, stream, name):
        self.read, self.name, self.seen = getattr(stream, "read1", stream.read), name, 0

    def read1(self, size: int) -> bytes:
        from nbspark.inputs.files import BINARY_PROBE, UTF16_BOMS

        chunk = self.read(size)
        if self.seen == 0 and chunk.startswith(UTF16_BOMS):
            self.seen = BINARY_PROBE
        if b"\x00" in chunk[: max(0, BINARY_PROBE - self.seen)]:
            raise _not_text(self.name)
        self.seen += len(chunk)
        return chunk


def _csv_file(path: str):
    """``--csv FILE``'s ``Location``: a file, by the rule of every input (``inputs.files.list_files``:
    one that does not exist, or a pipe or a device, is refused in its words), and not a directory."""
    from nbspark.inputs.files import list_files
    from nbspark.storage.locations import location

    f = location(path)
    if f.is_dir():
        raise ValueError(f"{f}: a directory, not a CSV file")
    return list_files(f)[0]


def _not_text(name="stdin") -> ValueError:
    """The refusal of bytes that are no text (``inputs.files.decode_text``'s ``binary``): stdin's,
    or a file's."""
    from nbspark.inputs.decoding import BINARY_SIGN

    return ValueError(f"{name} is not text: a NUL byte near its start ({BINARY_SIGN})")


def _stdin_batches(size: int = 1 << 16):
    """``nbspark predict -``: stdin's lines in batches as they come, each ``(number, lines)`` (``number``:
    the first line's, from 1): each read's whole lines (``inputs.files.whole_line_chunks``), at most
    ``size`` bytes, so that on a pipe that stays open every line is answered once it is read, and
    memory holds one batch. Decoded by the rule of every text file (``inputs.files.decode_text``:
    UTF-8, a byte-order mark dropped, bytes with a NUL in their first ``BINARY_PROBE`` refused by
    ``_Text``, UTF-16 read whole), lines split as Python's universal newlines split them;
    undecodable bytes counted on stderr at the end."""
    import io

    from nbspark.inputs.files import UTF16_BOMS, decode_text, utf8_text, whole_line_chunks

    stream = _Text(stdin_bytes(), "stdin")
    head = stream.read1(size)
    if head.startswith(UTF16_BOMS):  # UTF-16: no byte ends a line; read whole
        chunks = [head + stdin_bytes().read()]
    else:
        chunks = whole_line_chunks(stream, size, head)
    replaced, number = 0, 1
    for i, chunk in enumerate(chunks):  # the start as a whole text is read, the rest as UTF-8 alone
        text, bad, _ = decode_text(chunk, "-") if i == 0 else utf8_text(chunk)
        lines = [line.rstrip("\n") for line in io.StringIO(text, newline=None)]
        replaced += bad
        yield number, lines
        number += len(lines)
    report_undecodable("predict", "<stdin>", replaced)


class _Place(NamedTuple):
    """Where a batch of items is, to name one in a message: ``name`` (``<stdin>``, a CSV file; ""
    for the command's arguments), the number of its first item (a line's, an argument's from 1; a
    CSV row's as a spreadsheet counts, the header row 1), and what an item is."""

    name: str
    first: int
    unit: str  # line, row, argument

    def said(self, count: int, message: str) -> str:
        """A message on this batch of ``count`` items, located: its opening ``row K`` (the batch's
        K-th item, from 0: a model's words) as that item's own number (``t.csv row 3, column 'y':
        …``), else opened by the batch's span (``<stdin> lines 3-9: …``; none for arguments)."""
        head = f"{self.name} {self.unit}".lstrip()
        if (found := re.match(r"row (\d+)\b", message)) and int(found[1]) < count:
            return f"{head} {self.first + int(found[1])}{message[found.end() :]}"
        if not self.name:
            return message
        last = self.first + count - 1
        return f"{head} {self.first}: {message}" if count == 1 else f"{head}s {self.first}-{last}: {message}"


def _row(text: str, number: int):
    """A table model's row given as ``text`` (``predictions.json_row``), of stdin's line ``number``
    (0: an argument), its refusal naming the line."""
    from nbspark.predictions import json_row

    try:
        return json_row(text)
    except ValueError as exc:
        raise ValueError(
            _Place("<stdin>", number, "line").said(1, str(exc)) if number else str(exc)
        ) from None


def _line(r: dict) -> str:
    if "density" in r:
        from nbspark.report.format import cells_said

        unseen = cells_said(r.get("unseen") or {})
        return (
            f"density {r['density']:.6g}"
            + ("" if r["log_density"] is None else f" (log {r['log_density']:.4f})")
            + (f"  (never counted in their column: {unseen})" if unseen else "")
        )
    level = "" if "level" not in r else f" at {r['level'] or '∅'}"
    where = f"{r['window']}: " if "window" in r else ""
    unseen = r.get("unseen") or {}
    unseen = f"  (unseen, left out: {', '.join(f'{c}={v}' for c, v in unseen.items())})" if unseen else ""
    return f"{where}{r['label']} ({r['probability']:.4f}){level}{unseen}"
