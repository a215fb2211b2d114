"""``nbspark predict``: texts, windows or table rows scored by any model in process, no Spark: given
as arguments, a CSV file's rows (``--csv``), or stdin's lines, each answered once it is read."""

from __future__ import annotations

import argparse
import json
import sys

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
        "a train reads one; instead of TEXT",
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
    from nbspark.predictions import csv_rows, prediction_objects, scores_texts

    given, unscored = 0, 0
    try:
        model = load(args.model)
        if args.csv:
            rows = csv_rows(_StdinFile() if args.csv == "-" else _csv_file(args.csv), model, args.delimiter)
            batches = [(0, [json.dumps(r, ensure_ascii=False) for r in rows], rows)]
        else:  # stdin's as they come: each answered once its line is read
            lines = _stdin_batches() if args.texts == ["-"] else [(0, args.texts)]
            text = scores_texts(model)
            batches = (
                (first, texts, texts if text else [_row(t, first and first + i) for i, t in enumerate(texts)])
                for first, texts in lines
            )
        for first, texts, rows in batches:
            try:
                results, missed = prediction_objects(model, rows, texts, args.extra_column)
            except (ValueError, TypeError) as exc:
                raise type(exc)(f"{_lines(first, len(texts))}{exc}") from None
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


class _StdinFile:
    """``nbspark predict --csv -``: stdin as the file a CSV reader reads (its bytes, once, refused as
    ``_stdin`` refuses them), named ``<stdin>``."""

    def read_bytes(self) -> bytes:
        return _stdin()[0]

    def __str__(self) -> str:
        return "<stdin>"


def _csv_file(path: str):
    """``--csv FILE``'s ``Location``: a file, by the rule of every input (``inputs.files.list_files``:
    one that does not exist, or a pipe or a device, is refused in its words), and not a directory."""
    from nbspark.inputs.files import list_files
    from nbspark.storage.locations import location

    f = location(path)
    if f.is_dir():
        raise ValueError(f"{f}: a directory, not a CSV file")
    return list_files(f)[0]


def _stdin() -> tuple[bytes, str, int]:
    """stdin's bytes, read once, and their text and count of undecodable bytes by the rule of every
    text file (``inputs.files.decode_text``: UTF-8, a byte-order mark dropped), not by the locale's
    codec; bytes of no text (a NUL near the start) refused."""
    from nbspark.inputs.files import decode_text

    data = stdin_bytes().read()
    text, replaced, binary = decode_text(data, "-")
    if binary:
        raise _not_text()
    return data, text, replaced


def _not_text() -> ValueError:
    """The refusal of stdin's bytes that are no text (``inputs.files.decode_text``'s ``binary``)."""
    from nbspark.inputs.decoding import BINARY_SIGN

    return ValueError(f"stdin is not text: a NUL byte near its start ({BINARY_SIGN})")


def _stdin_batches(size: int = 1 << 16):
    """``nbspark predict -``: stdin's lines in batches as they come, each ``(number, lines)`` (``number``:
    the first line's, from 1): each read's whole lines, at most ``size`` bytes, so that on a
    pipe that stays open every line is answered once it is read, and memory holds one batch. Decoded
    by the rule of every text file (``inputs.files.decode_text``: UTF-8, a byte-order mark dropped,
    bytes with a NUL in their first ``BINARY_PROBE`` refused, UTF-16 read whole), lines split as
    Python's universal newlines split them; undecodable bytes counted on stderr at the end."""
    import io

    from nbspark.inputs.files import BINARY_PROBE, UTF16_BOMS, decode_text, utf8_text

    read, pending, seen, replaced, number = stdin_bytes().read1, b"", 0, 0, 1
    while True:
        chunk = read(size)
        if not seen and chunk.startswith(UTF16_BOMS):  # UTF-16: no byte ends a line; read whole
            head, end, pending, chunk = chunk + stdin_bytes().read(), b"", b"", b""
        elif b"\x00" in chunk[: max(0, BINARY_PROBE - seen)]:
            raise _not_text()
        else:
            head, end, pending = (pending + chunk).rpartition(b"\n") if chunk else (pending, b"", b"")
        if head or end:  # the start as a whole text is read, the rest as UTF-8 with nothing to drop
            text, bad, _ = utf8_text(head + end) if number > 1 else decode_text(head + end, "-")
            lines = [line.rstrip("\n") for line in io.StringIO(text, newline=None)]
            replaced += bad
            yield number, lines
            number += len(lines)
        seen += len(chunk)
        if not chunk:
            report_undecodable("predict", "<stdin>", replaced)
            return


def _lines(first: int, count: int) -> str:
    """Where a batch of lines is (``<stdin> lines 3-9: ``), to open a message; "" for arguments (0)."""
    if not first:
        return ""
    return f"<stdin> line {first}: " if count == 1 else f"<stdin> lines {first}-{first + count - 1}: "


def _row(text: str, number: int):
    """A table model's row given as ``text`` (``predictions.json_row``), of stdin's line ``number``
    (0: an argument), its refusal naming the line."""
    from nbspark.predictions import json_row

    try:
        return json_row(text)
    except ValueError as exc:
        raise ValueError(f"{_lines(number, 1)}{exc}") from None


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
