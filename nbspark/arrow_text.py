"""The ``words`` tokenizer and naive Bayes counting on whole Arrow arrays (no Python per token).

Plain pyarrow and numpy, no Spark: the arrow counting engine and the arrow scorer call these on
each Arrow batch. ``word_tokens`` gives exactly what ``nb_pipeline.tokenizer("words")`` gives
per document (``re.findall(r"\\w+", text.lower())``), as one flat string array plus the
document index of each token. All-ASCII documents (nearly all of real English text) are split by
byte arithmetic in numpy; the others go through RE2 (``[^\\pL\\pN_]+`` after ``utf8_lower``),
three times slower. One known difference: a character whose lower case Python spells with
two code points, of which the second is not a word character (``İ`` gives ``i`` + U+0307), splits
a token in Python and not in utf8proc's simple lower-casing (``İstanbul`` -> ``istanbul``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["UNICODE_SPLIT", "PartialCounts", "count_label_tokens", "word_tokens"]

#: Python's ``\w`` is a letter, a number or ``_``; RE2 spells its complement so.
UNICODE_SPLIT = r"[^\pL\pN_]+"


def _ascii_tokens(texts: pa.StringArray) -> tuple[pa.StringArray, np.ndarray]:
    """Tokens of all-ASCII ``texts`` by byte arithmetic: word bytes are ``[0-9A-Za-z_]``; a
    token is a run of them inside one document, lower-cased."""
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int32, count=len(texts) + 1, offset=texts.offset * 4)
    data = np.frombuffer(texts.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]] if texts.buffers()[2] else np.empty(0, np.uint8)
    if not len(data):
        return pa.array([], pa.string()), np.empty(0, np.int64)
    bounds = offsets - offsets[0]
    folded = data | 32  # ASCII upper case to lower case (and other bytes we then reject)
    word = ((folded >= 97) & (folded <= 122)) | ((data >= 48) & (data <= 57)) | (data == 95)
    before = np.empty_like(word)  # the previous byte is a word byte of the same document
    before[0] = False
    before[1:] = word[:-1]
    after = np.empty_like(word)  # the next byte is a word byte of the same document
    after[-1] = False
    after[:-1] = word[1:]
    inner = bounds[1:-1]
    inner = inner[(inner > 0) & (inner < len(word))]
    before[inner] = False
    after[inner - 1] = False
    starts = np.flatnonzero(word & ~before)
    ends = np.flatnonzero(word & ~after) + 1
    kept = data[word]  # the tokens' bytes, back to back
    kept = kept + ((kept >= 65) & (kept <= 90)).astype(np.uint8) * np.uint8(32)
    token_offsets = np.zeros(len(starts) + 1, np.int32)
    np.cumsum(ends - starts, out=token_offsets[1:])
    tokens = pa.StringArray.from_buffers(len(starts), pa.py_buffer(token_offsets), pa.py_buffer(kept))
    per_doc = np.diff(np.searchsorted(starts, bounds))
    return tokens, np.repeat(np.arange(len(texts)), per_doc)


def _regex_tokens(texts) -> tuple[pa.Array, np.ndarray]:
    split = pc.split_pattern_regex(pc.utf8_lower(texts), UNICODE_SPLIT)
    flat = pc.list_flatten(split)
    keep = pc.not_equal(flat, "")  # split leaves empty strings at the edges
    return flat.filter(keep), pc.list_parent_indices(split).to_numpy()[keep.to_numpy(zero_copy_only=False)]


def word_tokens(texts) -> tuple[pa.Array, np.ndarray]:
    """``(tokens, doc)``: every token of ``texts`` (a string array, no nulls) in document order,
    and the index in ``texts`` of the document each came from."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    if texts.type == pa.large_string():
        texts = texts.cast(pa.string())
    ascii_mask = pc.string_is_ascii(texts)
    if pc.all(ascii_mask).as_py() is not False:
        return _ascii_tokens(texts)
    ascii_rows = np.flatnonzero(ascii_mask.to_numpy(zero_copy_only=False))
    other_rows = np.flatnonzero(~ascii_mask.to_numpy(zero_copy_only=False))
    a_tokens, a_doc = _ascii_tokens(pc.take(texts, pa.array(ascii_rows)))
    o_tokens, o_doc = _regex_tokens(pc.take(texts, pa.array(other_rows)))
    tokens = pa.concat_arrays([a_tokens, o_tokens.cast(pa.string())])
    doc = np.concatenate([ascii_rows[a_doc], other_rows[o_doc]])
    order = np.argsort(doc, kind="stable")  # back to document order
    return pc.take(tokens, pa.array(order)), doc[order]


def count_label_tokens(labels, texts, distinct_per_doc: bool = False) -> tuple[pa.Table, np.ndarray]:
    """Count ``(label, token)`` over documents ``texts`` whose class is ``labels`` (same length).

    With ``distinct_per_doc`` a token counts once per document (Bernoulli). Returns a table
    ``label, token, n`` and a boolean array: which documents have at least one token.
    """
    tokens, doc = word_tokens(texts)
    has_tokens = np.zeros(len(texts), bool)
    has_tokens[doc] = True
    schema = pa.schema([("label", pa.string()), ("token", pa.string()), ("n", pa.int64())])
    if not len(tokens):
        return schema.empty_table(), has_tokens
    vocab = pc.dictionary_encode(tokens)
    token_code = vocab.indices.to_numpy().astype(np.int64)
    label_dict = pc.dictionary_encode(labels)
    label_code = label_dict.indices.to_numpy()[doc].astype(np.int64)
    width = len(vocab.dictionary)
    if distinct_per_doc:  # one (doc, token) pair per document
        pair = np.unique(doc.astype(np.int64) * width + token_code, return_index=True)[1]
        token_code, label_code = token_code[pair], label_code[pair]
    keys = label_code * width + token_code
    if len(label_dict.dictionary) * width <= max(1 << 22, 4 * len(keys)):  # a dense tally fits
        n = np.bincount(keys, minlength=len(label_dict.dictionary) * width)
        keys = np.flatnonzero(n)
        n = n[keys]
    else:
        keys, n = np.unique(keys, return_counts=True)
    table = pa.table(
        [pc.take(label_dict.dictionary, pa.array(keys // width)), pc.take(vocab.dictionary, pa.array(keys % width)), pa.array(n, pa.int64())],
        schema=schema,
    )
    return table, has_tokens


class PartialCounts:
    """In-mapper combining (Lin and Dyer): partial ``label, token, n`` tables summed inside the
    task until they hold ``limit`` rows, so the shuffle carries one row per distinct pair per
    flush instead of one per pair per batch. Memory stays bounded by ``limit``."""

    def __init__(self, limit: int = 2_000_000):
        self.limit = limit
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
        summed = merged.group_by(["label", "token"]).aggregate([("n", "sum")])
        return [pa.table({"label": summed["label"], "token": summed["token"], "n": summed["n_sum"]})]
