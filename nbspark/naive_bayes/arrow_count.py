"""Naive Bayes counts of a batch of documents on Arrow (``count_label_tokens``): one row per
(label, token) with its count, from ``arrow_tokens.token_codes``. Pure pyarrow and numpy."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from nbspark.inputs.arrow_tokens import token_codes

__all__ = ["LABEL_TOKEN_SCHEMA", "count_label_tokens"]

#: The partial naive Bayes counts that ``count_label_tokens`` returns and the engine sums.
LABEL_TOKEN_SCHEMA = pa.schema([("label", pa.string()), ("token", pa.string()), ("n", pa.int64())])


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
            label_of = np.repeat(label_of, reps) + (
                np.arange(len(token_code)) - np.repeat(np.cumsum(reps) - reps, reps)
            )
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
        [
            pc.take(label_dict.dictionary, pa.array(keys // width)),
            pc.take(vocab, pa.array(keys % width)),
            pa.array(n, pa.int64()),
        ],
        schema=schema,
    )
    return table, has_tokens
