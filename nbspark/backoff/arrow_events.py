"""The backoff family's events of n-gram lines on Arrow (``ngram_events``): the windows centred on
the confusion set, counted per context subset within a batch, with the line statistics that the
Python path (``parsers.parse_ngram_line``, ``backoff.events.ngram_example``) gives. Pure pyarrow and numpy."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nbspark.backoff.events import count_columns
from nbspark.inputs.arrow_tokens import _py_lower, decode_replacements
from nbspark.inputs.lines import blank_values, jvm_decoded
from nbspark.inputs.parsers import MAX_COUNT
from nbspark.spine.arrow_counts import checked_sum

__all__ = ["ngram_events", "ngram_schema"]

_ASCII_COUNT = r"^[\t\n\x0b\x0c\r ]*[0-9]+[\t\n\x0b\x0c\r ]*$"


def _fits_int64(raw: pa.Array) -> pa.Array:
    """Whether each count string (digits, maybe white space around) is at most ``MAX_COUNT``."""
    digits = pc.utf8_ltrim(pc.utf8_trim_whitespace(raw), characters="0")
    n = pc.utf8_length(digits)
    return pc.or_(pc.less(n, 19), pc.and_(pc.equal(n, 19), pc.less_equal(digits, str(MAX_COUNT))))


def _valid_counts(raw: pa.Array) -> pa.Array:
    """Which count fields ``inputs.parsers.parse_ngram_line`` accepts: ASCII digits with white space
    around, at most ``MAX_COUNT``; vectorised, with Python's strip/isdigit on the odd rest, exactly."""
    count_ok = pc.match_substring_regex(raw, _ASCII_COUNT)
    count_ok = pc.and_(count_ok, pc.fill_null(_fits_int64(pc.if_else(count_ok, raw, "0")), False))
    if not pc.all(count_ok).as_py() and len(raw):
        odd = np.flatnonzero(~count_ok.to_numpy(zero_copy_only=False))
        redo = [
            r.strip().isdigit() and r.strip().isascii() and int(r.strip()) <= MAX_COUNT
            for r in pc.take(raw, pa.array(odd)).to_pylist()
        ]
        mask = count_ok.to_numpy(zero_copy_only=False).copy()
        mask[odd] = redo
        count_ok = pa.array(mask)
    return count_ok


def ngram_events(lines, width: int, centres, lowercase: bool, subsets, letters: str) -> tuple[pa.Table, dict]:
    """The affect/effect events of ``w1 … wN TAB count`` lines, as ``backoff.inputs``' Python path
    counts them (``inputs.parsers.parse_ngram_line``, ``backoff.events.ngram_example``,
    ``backoff.events.example_events``).

    Returns the events summed within the batch, a table ``subset, <context letters>, label,
    count`` (positions outside the subset null), and the line statistics: ``lines_read``,
    ``decode_replacements``, ``blank_lines``, ``malformed.fields`` / ``.tokens`` / ``.count``,
    ``malformed``, ``lines_not_in_confusion_set``, ``examples`` and ``weight`` (those above 0).
    """
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    lines = jvm_decoded(lines)
    stats: dict[str, int] = {"lines_read": len(lines)}
    replaced = decode_replacements(lines)
    if replaced:
        stats["decode_replacements"] = replaced
    lines = pc.utf8_rtrim(lines, characters="\r\n")
    blank = blank_values(lines)
    stats["blank_lines"] = pc.sum(blank).as_py() or 0 if len(lines) else 0
    if stats["blank_lines"]:  # rare: no copy of the batch without them
        lines = lines.filter(pc.invert(blank))
    parts = pc.split_pattern(lines, "\t")
    fields_ok = pc.equal(pc.list_value_length(parts), 2)
    parts = parts.filter(fields_ok)
    stats["malformed.fields"] = len(lines) - len(parts)
    tokens = pc.split_pattern(pc.list_element(parts, 0), " ")
    tokens_ok = pc.equal(pc.list_value_length(tokens), width)
    stats["malformed.tokens"] = len(parts) - pc.sum(tokens_ok).as_py() if len(parts) else 0
    tokens, raw = tokens.filter(tokens_ok), pc.list_element(parts, 1).filter(tokens_ok)
    count_ok = _valid_counts(raw)
    stats["malformed.count"] = len(raw) - (pc.sum(count_ok).as_py() or 0)
    tokens, raw = tokens.filter(count_ok), raw.filter(count_ok)
    counts = pc.cast(pc.utf8_trim_whitespace(raw), pa.int64()) if len(raw) else pa.array([], pa.int64())
    flat = pc.list_flatten(tokens)
    if lowercase and len(flat):
        flat = _py_lower(flat)
    n = len(tokens)
    columns = {
        letter: pc.take(flat, pa.array(np.arange(n, dtype=np.int64) * width + j))
        for j, letter in enumerate(letters)
    }
    centre = letters[width // 2]
    in_set = pc.is_in(columns[centre], value_set=pa.array(sorted(set(centres)), pa.string()))
    stats["lines_not_in_confusion_set"] = n - (pc.sum(in_set).as_py() or 0)
    columns = {k: v.filter(in_set) for k, v in columns.items()}
    counts = counts.filter(in_set)
    stats["examples"] = len(counts)
    stats["weight"] = pc.sum(counts).as_py() or 0
    bounded = (pc.max(counts).as_py() or 0) * len(counts) <= MAX_COUNT
    if not bounded and (
        stats["weight"] < 0 or (pc.sum(pc.cast(counts, pa.float64(), safe=False)).as_py() or 0) > 2.0**63
    ):
        raise OverflowError(
            f"count overflow: the counts of one batch sum past {MAX_COUNT}, the largest 64-bit count"
        )
    stats["malformed"] = sum(v for k, v in stats.items() if k.startswith("malformed."))
    stats = {k: v for k, v in stats.items() if v}  # as PartitionStats: no zeros
    schema = ngram_schema(letters)
    if not len(counts):
        return schema.empty_table(), stats
    context = [c for c in letters if c != centre]
    tables = []
    for subset in subsets:
        keys = [c.lower() for c in context if c in subset]
        grams = pa.table(
            {
                **{c.lower(): columns[c] for c in context if c in subset},
                "label": columns[centre],
                "count": counts,
            }
        )
        summed = checked_sum(grams, keys + ["label"], "count")
        m = summed.num_rows
        cols = [pa.array([subset] * m, pa.string())]
        cols += [summed[c.lower()] if c in subset else pa.nulls(m, pa.string()) for c in context]
        tables.append(pa.table(cols + [summed["label"], summed["count_sum"]], schema=schema))
    return pa.concat_tables(tables), stats


def ngram_schema(letters: str) -> pa.Schema:
    """The Arrow schema of n-gram count rows (``backoff.events.count_ddl``, nullable)."""
    return pa.schema(
        [(name, pa.int64() if name == "count" else pa.string()) for name in count_columns(letters)]
    )
