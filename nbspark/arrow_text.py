"""Counting on whole Arrow arrays, no Python per token: the ``words`` tokenizer and naive Bayes
counts, and the affect/effect n-gram events.

Plain pyarrow and numpy, no Spark: the arrow counting engines and the arrow scorer call these on
each Arrow batch. ``token_codes`` gives exactly what ``text.tokenizer("words")`` gives per
document (``re.findall(r"\\w+", text.lower())``), as each token's code in the batch's vocabulary
plus the document index of each token (``word_tokens`` spells the codes out). All-ASCII documents
(nearly all of real English text) are split by byte arithmetic in numpy; the others go through RE2
(``[^\\pL\\pN_]+`` after ``utf8_lower``), three times slower. The two characters whose lower case
differs between Python's ``str.lower`` and utf8proc's simple lower-casing, ``İ`` (Python: ``i`` +
U+0307, which splits ``İstanbul``) and ``Σ`` (Python: ``ς`` at the end of a word, ``ΟΔΟΣ`` ->
``οδος``), send their document through Python's own tokenizer. (Code points that the Unicode
database of the running Python does not know yet, but utf8proc's does, are word characters only
for RE2.)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .arrow_lines import jvm_decoded
from .corpora import MAX_COUNT
from .events import count_columns
from .text import NON_WORD_RUN, tokenizer

__all__ = [
    "LABEL_TOKEN_SCHEMA", "PartialCounts", "checked_sum", "count_label_tokens", "decode_replacements", "documents", "ngram_events",
    "ngram_schema", "token_codes", "word_tokens",
]

#: The partial naive Bayes counts that ``count_label_tokens`` returns and the engine sums.
LABEL_TOKEN_SCHEMA = pa.schema([("label", pa.string()), ("token", pa.string()), ("n", pa.int64())])

#: The characters that Python's ``str.lower`` and utf8proc lower-case differently (İ, Σ).
PYTHON_CASE = "[\u0130\u03a3]"


def documents(lines: pa.RecordBatch) -> pa.RecordBatch:
    """The rows of a parsed batch (``arrow_lines.parse_lines``) whose ``category`` is ``documents``:
    the batch itself when every row is one (nearly always; a filter would copy its text)."""
    is_doc = pc.equal(lines.column("category"), "documents")
    return lines if pc.all(is_doc).as_py() is not False else lines.filter(is_doc)


#: ``_LOW_BYTES[n]``: the mask of a little-endian 64-bit word's first ``n`` bytes (0 to 8).
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(9)], np.uint64)


def _ascii_tokens(texts: pa.StringArray) -> tuple[np.ndarray, pa.StringArray, np.ndarray]:
    """``(codes, vocab, doc)`` of all-ASCII ``texts`` by byte arithmetic: word bytes are
    ``[0-9A-Za-z_]``; a token is a run of them inside one document, lower-cased.

    Tokens are not copied out of the text one by one: a token's first 8 bytes are read as one
    64-bit integer, the bytes after the token masked to zero (a word byte is never zero, so the
    integer spells a token of up to 8 bytes), and the integers are dictionary-encoded, which is
    cheaper than hashing strings. A token of 9 to 16 bytes (14 % of the Reuters tokens) is the
    pair of its two words' codes, encoded again; only the longer ones (0.03 %) are gathered into
    strings. The vocabulary is the distinct integers spelt out, then the distinct longer
    tokens; it may also hold the first 8 bytes of a longer token, which no code names.
    """
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32, count=len(texts) + 1, offset=texts.offset * 4)
    data = np.frombuffer(texts.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]] if texts.buffers()[2] else np.empty(0, np.uint8)
    if not len(data):
        return np.empty(0, np.int64), pa.array([], pa.string()), np.empty(0, np.int64)
    bounds = offsets - offsets[0]
    padded = np.zeros(len(data) + 8, np.uint8)  # the text lower-cased, and room to read 8 bytes from its last byte
    folded = padded[: len(data)]
    np.bitwise_or(data, np.uint8(32), out=folded)  # ASCII upper case to lower case; digits keep their bytes, "_" becomes DEL
    scratch = folded - np.uint8(97)  # unsigned: a letter is below 26, anything else wraps above
    word = scratch < 26
    np.subtract(data, np.uint8(48), out=scratch)
    word |= scratch < 10
    word |= data == 95
    folded[folded == 127] = 95  # back to "_" (a DEL in the text becomes "_" too, but is never in a token)
    w = word.view(np.int8)
    edge = np.empty(len(w) + 1, np.int8)  # +1 where a run of word bytes starts, -1 just after one ends
    edge[0], edge[-1] = w[0], -w[-1]
    np.subtract(w[1:], w[:-1], out=edge[1:-1])
    bound = np.flatnonzero(edge != 0)  # starts and ends alternate: start, end, start, end, ...
    starts, ends = bound[0::2], bound[1::2]
    inner = np.unique(bounds[1:-1])
    inner = inner[(inner > 0) & (inner < len(w))]
    cross = inner[word[inner - 1] & word[inner]]  # a run going on into the next document is two tokens
    if len(cross):
        starts = np.insert(starts, np.searchsorted(starts, cross), cross)
        ends = np.insert(ends, np.searchsorted(ends, cross), cross)
    lengths = ends - starts
    words = np.ndarray((len(data) + 1,), "<u8", padded, strides=(1,))  # the 8 bytes from each offset
    first = pc.dictionary_encode(pa.array(words[starts] & _LOW_BYTES[np.minimum(lengths, 8)]))
    codes = first.indices.to_numpy().astype(np.int64)
    vocab = [_unpacked(first.dictionary.to_numpy())]
    mid = np.flatnonzero((lengths > 8) & (lengths <= 16))
    if len(mid):  # a pair of (the first 8 bytes' code, the next 8 bytes' code)
        second = pc.dictionary_encode(pa.array(words[starts[mid] + 8] & _LOW_BYTES[lengths[mid] - 8]))
        pairs = pc.dictionary_encode(pa.array(codes[mid] * len(second.dictionary) + second.indices.to_numpy()))
        pair_codes = pairs.indices.to_numpy().astype(np.int64)
        seen = np.flatnonzero(np.diff(np.maximum.accumulate(pair_codes), prepend=-1))  # each pair's first token
        codes[mid] = sum(map(len, vocab)) + pair_codes
        vocab.append(_gathered(folded, starts[mid[seen]], lengths[mid[seen]]))
    long = np.flatnonzero(lengths > 16)
    if len(long):
        encoded = pc.dictionary_encode(_gathered(folded, starts[long], lengths[long]))
        codes[long] = sum(map(len, vocab)) + encoded.indices.to_numpy()
        vocab.append(encoded.dictionary)
    per_doc = np.diff(np.searchsorted(starts, bounds))
    return codes, pa.concat_arrays(vocab), np.repeat(np.arange(len(texts)), per_doc)


def _unpacked(words: np.ndarray) -> pa.StringArray:
    """The tokens that 64-bit little-endian ``words`` spell, their bytes up to the first zero."""
    as_bytes = np.asarray(words, "<u8").view(np.uint8).reshape(-1, 8)
    return _strings(as_bytes[as_bytes != 0], np.count_nonzero(as_bytes, axis=1))


def _gathered(data: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.StringArray:
    """The strings of ``lengths`` bytes from ``starts`` in ``data`` (ASCII)."""
    before = np.cumsum(lengths) - lengths  # each string's first byte in the gathered bytes
    return _strings(data[np.repeat(starts - before, lengths) + np.arange(before[-1] + lengths[-1])], lengths)


def _strings(data: np.ndarray, lengths: np.ndarray) -> pa.StringArray:
    """A string array of ``data`` cut into ``lengths`` bytes (ASCII)."""
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.StringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data)))


def _regex_tokens(texts) -> tuple[pa.Array, np.ndarray]:
    split = pc.split_pattern_regex(pc.utf8_lower(texts), NON_WORD_RUN)
    flat = pc.list_flatten(split)
    keep = pc.not_equal(flat, "")  # split leaves empty strings at the edges
    return flat.filter(keep), pc.list_parent_indices(split).to_numpy()[keep.to_numpy(zero_copy_only=False)]


def _python_tokens(texts) -> tuple[pa.Array, np.ndarray]:
    """``text.tokenizer("words")`` itself, for the rare documents whose lower case only Python spells."""
    words = tokenizer("words")
    per_doc = [words(t) for t in texts.to_pylist()]
    return pa.array([t for doc in per_doc for t in doc], pa.string()), np.repeat(np.arange(len(per_doc)), [len(d) for d in per_doc])


def token_codes(texts) -> tuple[np.ndarray, pa.StringArray, np.ndarray]:
    """``(codes, vocab, doc)``: every token of ``texts`` (a string array, no nulls) in document
    order, as its index in ``vocab``, and the index in ``texts`` of the document each came from.
    ``vocab`` holds each token once, and may hold strings that no code names."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if texts.type == pa.large_string():
        texts = texts.cast(pa.string())
    ascii_mask = pc.string_is_ascii(texts)
    if pc.all(ascii_mask).as_py() is not False:
        return _ascii_tokens(texts)
    is_ascii = ascii_mask.to_numpy(zero_copy_only=False)
    ascii_rows, non_ascii = np.flatnonzero(is_ascii), np.flatnonzero(~is_ascii)
    python_case = pc.match_substring_regex(pc.take(texts, pa.array(non_ascii)), PYTHON_CASE).to_numpy(zero_copy_only=False)
    python_rows, other_rows = non_ascii[python_case], non_ascii[~python_case]
    a_codes, a_vocab, a_doc = _ascii_tokens(pc.take(texts, pa.array(ascii_rows)))
    o_tokens, o_doc = _regex_tokens(pc.take(texts, pa.array(other_rows)))
    p_tokens, p_doc = _python_tokens(pc.take(texts, pa.array(python_rows)))
    other = pc.dictionary_encode(pa.concat_arrays([o_tokens.cast(pa.string()), p_tokens]))
    merged = pc.dictionary_encode(pa.concat_arrays([a_vocab, other.dictionary]))  # a token in both parts: one code
    remap = merged.indices.to_numpy().astype(np.int64)
    codes = np.concatenate([remap[a_codes], remap[len(a_vocab) + other.indices.to_numpy().astype(np.int64)]])
    doc = np.concatenate([ascii_rows[a_doc], other_rows[o_doc], python_rows[p_doc]])
    order = np.argsort(doc, kind="stable")  # back to document order
    return codes[order], merged.dictionary, doc[order]


def word_tokens(texts) -> tuple[pa.Array, np.ndarray]:
    """``(tokens, doc)``: every token of ``texts`` (a string array, no nulls) in document order,
    and the index in ``texts`` of the document each came from (``token_codes``, spelt out)."""
    codes, vocab, doc = token_codes(texts)
    return pc.take(vocab, pa.array(codes)), doc


def count_label_tokens(labels, texts, distinct_per_doc: bool = False) -> tuple[pa.Table, np.ndarray]:
    """Count ``(label, token)`` over documents ``texts`` (same length as ``labels``).

    ``labels`` holds each document's class (a string array) or each document's classes (a list
    array: a document counts once under every element of its list, as an ``explode`` of it would).
    With ``distinct_per_doc`` a token counts once per document (Bernoulli). Returns a table
    ``label, token, n`` and a boolean array: which documents have at least one token.
    """
    token_code, vocab, doc = token_codes(texts)
    has_tokens = np.zeros(len(texts), bool)
    has_tokens[doc] = True
    schema = LABEL_TOKEN_SCHEMA
    if not len(token_code):
        return schema.empty_table(), has_tokens
    width = len(vocab)
    doc = doc.astype(np.int64)
    if distinct_per_doc:  # one (doc, token) pair per document
        pair = np.unique(doc * width + token_code, return_index=True)[1]
        token_code, doc = token_code[pair], doc[pair]
    if isinstance(labels, pa.ChunkedArray):
        labels = labels.combine_chunks()
    if pa.types.is_list(labels.type) or pa.types.is_large_list(labels.type):
        per_doc = pc.fill_null(pc.list_value_length(labels), 0).to_numpy().astype(np.int64)
        first = np.cumsum(per_doc) - per_doc  # each document's first label in the flattened list
        label_of = first[doc]
        reps = per_doc[doc]
        if not (reps == 1).all():  # every token once per label of its document
            token_code = np.repeat(token_code, reps)
            label_of = np.repeat(label_of, reps) + (np.arange(len(token_code)) - np.repeat(np.cumsum(reps) - reps, reps))
        labels, doc = pc.list_flatten(labels), label_of
    label_dict = pc.dictionary_encode(labels)
    label_code = label_dict.indices.to_numpy()[doc].astype(np.int64)
    keys = label_code * width + token_code
    if len(label_dict.dictionary) * width <= max(1 << 22, 4 * len(keys)):  # a dense tally fits
        n = np.bincount(keys, minlength=len(label_dict.dictionary) * width)
        keys = np.flatnonzero(n)
        n = n[keys]
    else:
        keys, n = np.unique(keys, return_counts=True)
    table = pa.table(
        [pc.take(label_dict.dictionary, pa.array(keys // width)), pc.take(vocab, pa.array(keys % width)), pa.array(n, pa.int64())],
        schema=schema,
    )
    return table, has_tokens


class PartialCounts:
    """In-mapper combining (Lin and Dyer): partial count tables summed by ``keys`` inside the
    task until they hold ``limit`` rows, so the shuffle carries one row per distinct key per
    flush instead of one per key per batch. Memory stays bounded by ``limit``."""

    def __init__(self, keys=("label", "token"), value: str = "n", limit: int = 2_000_000):
        self.keys, self.value, self.limit = list(keys), value, limit
        self.tables: list[pa.Table] = []
        self.rows = 0

    def add(self, table: pa.Table) -> list[pa.Table]:
        """Keep ``table``; returns what to emit now (the summed tables once over the limit)."""
        self.tables.append(table)
        self.rows += table.num_rows
        if self.rows < self.limit:
            return []
        return self.flush()

    def flush(self) -> list[pa.Table]:
        if not self.tables:
            return []
        merged = pa.concat_tables(self.tables)
        self.tables, self.rows = [], 0
        if merged.num_rows == 0:
            return []
        summed = checked_sum(merged, self.keys, self.value)
        return [pa.table([summed[k] for k in self.keys] + [summed[f"{self.value}_sum"]], names=[*self.keys, self.value]).cast(merged.schema)]


_ASCII_COUNT = r"^[\t\n\x0b\x0c\r ]*[0-9]+[\t\n\x0b\x0c\r ]*$"


def _fits_int64(raw: pa.Array) -> pa.Array:
    """Whether each count string (digits, maybe white space around) is at most ``MAX_COUNT``."""
    digits = pc.utf8_ltrim(pc.utf8_trim_whitespace(raw), characters="0")
    n = pc.utf8_length(digits)
    return pc.or_(pc.less(n, 19), pc.and_(pc.equal(n, 19), pc.less_equal(digits, str(MAX_COUNT))))


def _valid_counts(raw: pa.Array) -> pa.Array:
    """Which count fields ``corpora.parse_ngram_line`` accepts: ASCII digits with white space
    around, at most ``MAX_COUNT``; vectorised, with Python's strip/isdigit on the odd rest, exactly."""
    count_ok = pc.match_substring_regex(raw, _ASCII_COUNT)
    count_ok = pc.and_(count_ok, pc.fill_null(_fits_int64(pc.if_else(count_ok, raw, "0")), False))
    if not pc.all(count_ok).as_py() and len(raw):
        odd = np.flatnonzero(~count_ok.to_numpy(zero_copy_only=False))
        redo = [r.strip().isdigit() and r.strip().isascii() and int(r.strip()) <= MAX_COUNT for r in pc.take(raw, pa.array(odd)).to_pylist()]
        mask = count_ok.to_numpy(zero_copy_only=False).copy()
        mask[odd] = redo
        count_ok = pa.array(mask)
    return count_ok


def checked_sum(table: pa.Table, keys: list[str], value: str) -> pa.Table:
    """``table`` grouped by ``keys`` with ``value`` (non-negative int64) summed, as
    ``KEYS…, VALUE_sum``; pyarrow's sum wraps around on overflow, so a sum past ``MAX_COUNT`` is
    refused (``OverflowError``) rather than stored negative. When the largest value times the rows
    cannot reach 2**63 (nearly always), the plain sum runs alone."""
    if (pc.max(table[value]).as_py() or 0) * table.num_rows <= MAX_COUNT:
        return table.group_by(keys).aggregate([(value, "sum")])
    as_float = pc.cast(table[value], pa.float64(), safe=False)
    summed = table.append_column("__as_float", as_float).group_by(keys).aggregate([(value, "sum"), ("__as_float", "sum")])
    # a float sum above 2**63 or a negative (wrapped) integer sum: past MAX_COUNT (2**63 − 1)
    if summed.num_rows and (pc.max(summed["__as_float_sum"]).as_py() > 2.0**63 or pc.min(summed[f"{value}_sum"]).as_py() < 0):
        raise OverflowError(f"count overflow: counts of one event sum past {MAX_COUNT}, the largest 64-bit count")
    return summed.drop_columns(["__as_float_sum"])


def decode_replacements(lines: pa.Array) -> int:
    """The U+FFFD in ``lines`` (decoded: ``arrow_lines.jvm_decoded``), as the Python engines count
    them in theirs. Only lines outside ASCII are searched (nearly none): 8 times quicker than
    searching all of them."""
    other = pc.invert(pc.string_is_ascii(lines))
    if not pc.any(other).as_py():
        return 0
    return pc.sum(pc.count_substring(lines.filter(other), "\ufffd")).as_py() or 0


def _py_lower(values: pa.Array) -> pa.Array:
    """Lower case exactly as Python's ``str.lower``: pyarrow for ASCII, Python for the rest."""
    lowered = pc.ascii_lower(values)
    other = pc.invert(pc.string_is_ascii(values))
    if not pc.any(other).as_py():
        return lowered
    rest = [v.lower() for v in values.filter(other).to_pylist()]
    return pc.replace_with_mask(lowered, other, pa.array(rest, pa.string()))


def ngram_events(lines, width: int, centres, lowercase: bool, subsets, letters: str) -> tuple[pa.Table, dict]:
    """The affect/effect events of ``w1 … wN TAB count`` lines, as ``ngram_inputs``' Python path
    counts them (``corpora.parse_ngram_line``, ``events.ngram_example``, ``events.example_events``).

    Returns the events summed within the batch, a table ``subset, <context letters>, label,
    count`` (positions outside the subset null), and the line statistics: ``lines_read``,
    ``decode_replacements``, ``malformed.fields`` / ``.tokens`` / ``.count``,
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
    columns = {letter: pc.take(flat, pa.array(np.arange(n, dtype=np.int64) * width + j)) for j, letter in enumerate(letters)}
    centre = letters[width // 2]
    in_set = pc.is_in(columns[centre], value_set=pa.array(sorted(set(centres)), pa.string()))
    stats["lines_not_in_confusion_set"] = n - (pc.sum(in_set).as_py() or 0)
    columns = {k: v.filter(in_set) for k, v in columns.items()}
    counts = counts.filter(in_set)
    stats["examples"] = len(counts)
    stats["weight"] = pc.sum(counts).as_py() or 0
    bounded = (pc.max(counts).as_py() or 0) * len(counts) <= MAX_COUNT
    if not bounded and (stats["weight"] < 0 or (pc.sum(pc.cast(counts, pa.float64(), safe=False)).as_py() or 0) > 2.0**63):
        raise OverflowError(f"count overflow: the counts of one batch sum past {MAX_COUNT}, the largest 64-bit count")
    stats["malformed"] = sum(v for k, v in stats.items() if k.startswith("malformed."))
    stats = {k: v for k, v in stats.items() if v}  # as PartitionStats: no zeros
    schema = ngram_schema(letters)
    if not len(counts):
        return schema.empty_table(), stats
    context = [c for c in letters if c != centre]
    tables = []
    for subset in subsets:
        keys = [c.lower() for c in context if c in subset]
        grams = pa.table({**{c.lower(): columns[c] for c in context if c in subset}, "label": columns[centre], "count": counts})
        summed = checked_sum(grams, keys + ["label"], "count")
        m = summed.num_rows
        cols = [pa.array([subset] * m, pa.string())]
        cols += [summed[c.lower()] if c in subset else pa.nulls(m, pa.string()) for c in context]
        tables.append(pa.table(cols + [summed["label"], summed["count_sum"]], schema=schema))
    return pa.concat_tables(tables), stats


def ngram_schema(letters: str) -> pa.Schema:
    """The Arrow schema of n-gram count rows (``events.count_ddl``, nullable)."""
    return pa.schema([(name, pa.int64() if name == "count" else pa.string()) for name in count_columns(letters)])
