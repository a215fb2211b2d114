"""The ``words`` tokenizer on whole Arrow arrays, no Python per token.

Plain pyarrow and numpy, no Spark: the arrow counting engines and the arrow scorer call these on
each Arrow batch. ``token_codes`` gives exactly what ``tokens.tokenizer("words")`` gives per
document (``re.findall(r"\\w+", text.lower())``), as each token's code in the batch's vocabulary
plus the document index of each token (``word_tokens`` spells the codes out). All-ASCII documents
(nearly all of real English text) are split by byte arithmetic in numpy; the others go through RE2
(``[^\\pL\\pN_]+`` after ``utf8_lower``). The two characters whose lower case
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

from nbspark.inputs.tokens import NON_WORD_RUN, tokenizer

__all__ = ["decode_replacements", "documents", "token_codes", "word_tokens"]

#: The characters that Python's ``str.lower`` and utf8proc lower-case differently (İ, Σ).
PYTHON_CASE = "[\u0130\u03a3]"


def documents(lines: pa.RecordBatch) -> pa.RecordBatch:
    """The rows of a parsed batch (``inputs.lines.parse_lines``) whose ``category`` is ``documents``:
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
    data = (
        np.frombuffer(texts.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
        if texts.buffers()[2]
        else np.empty(0, np.uint8)
    )
    if not len(data):
        return np.empty(0, np.int64), pa.array([], pa.string()), np.empty(0, np.int64)
    bounds = offsets - offsets[0]
    padded = np.zeros(
        len(data) + 8, np.uint8
    )  # the text lower-cased, and room to read 8 bytes from its last byte
    folded = padded[: len(data)]
    np.bitwise_or(
        data, np.uint8(32), out=folded
    )  # ASCII upper case to lower case; digits keep their bytes, "_" becomes DEL
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
        pairs = pc.dictionary_encode(
            pa.array(codes[mid] * len(second.dictionary) + second.indices.to_numpy())
        )
        pair_codes = pairs.indices.to_numpy().astype(np.int64)
        seen = np.flatnonzero(
            np.diff(np.maximum.accumulate(pair_codes), prepend=-1)
        )  # each pair's first token
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
    return pa.StringArray.from_buffers(
        len(lengths), pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))
    )


def _regex_tokens(texts) -> tuple[pa.Array, np.ndarray]:
    split = pc.split_pattern_regex(pc.utf8_lower(texts), NON_WORD_RUN)
    flat = pc.list_flatten(split)
    keep = pc.not_equal(flat, "")  # split leaves empty strings at the edges
    return flat.filter(keep), pc.list_parent_indices(split).to_numpy()[keep.to_numpy(zero_copy_only=False)]


def _python_tokens(texts) -> tuple[pa.Array, np.ndarray]:
    """``text.tokenizer("words")`` itself, for the rare documents whose lower case only Python spells."""
    words = tokenizer("words")
    per_doc = [words(t) for t in texts.to_pylist()]
    return pa.array([t for doc in per_doc for t in doc], pa.string()), np.repeat(
        np.arange(len(per_doc)), [len(d) for d in per_doc]
    )


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
    python_case = pc.match_substring_regex(pc.take(texts, pa.array(non_ascii)), PYTHON_CASE).to_numpy(
        zero_copy_only=False
    )
    python_rows, other_rows = non_ascii[python_case], non_ascii[~python_case]
    a_codes, a_vocab, a_doc = _ascii_tokens(pc.take(texts, pa.array(ascii_rows)))
    o_tokens, o_doc = _regex_tokens(pc.take(texts, pa.array(other_rows)))
    p_tokens, p_doc = _python_tokens(pc.take(texts, pa.array(python_rows)))
    other = pc.dictionary_encode(pa.concat_arrays([o_tokens.cast(pa.string()), p_tokens]))
    merged = pc.dictionary_encode(
        pa.concat_arrays([a_vocab, other.dictionary])
    )  # a token in both parts: one code
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


def decode_replacements(lines: pa.Array) -> int:
    """The U+FFFD in ``lines`` (decoded: ``inputs.lines.jvm_decoded``), as the Python engines count
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
