"""A naive Bayes count table read by event, as ``naive_bayes.model.build_nb_model`` builds a model
from it: the count rows ``(event, label, feature, value, n, sum, sumsq)``
(``naive_bayes.model.COUNT_DDL``), or the table itself as a pyarrow Table, whose YX rows (nearly
all) are taken as columns instead of one by one; and the manifest's fields of such a table
(``table_fields``). Pure Python; pyarrow only for a Table."""

from __future__ import annotations

__all__ = [
    "Y",
    "YG",
    "YX",
    "YX_ANY",
    "Y_ANY",
    "collect_counts",
    "declared_counts",
    "table_fields",
    "token_pairs",
]

#: The events of naive Bayes count rows: all documents, documents per class, (class, feature)
#: counts, all of a class's feature counts, a class's numeric column sums.
Y_ANY, Y, YX, YX_ANY, YG = "Y=ANY", "Y", "YX", "YX=ANY", "YG"


def table_fields(table) -> dict:
    """The manifest's ``label_counts`` (each class's documents: its ``Y`` row) and ``features``
    (distinct ``(feature, value)`` pairs of the ``YX`` and ``YG`` rows) of a count table in pyarrow:
    a table counted or updated in this process, or ``partial_fit``'s. In Spark,
    ``naive_bayes.jobs._fields`` reads the same from the written table (its SQL twin)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    y = table.filter(pc.equal(table["event"], Y))
    x = table.filter(pc.is_in(table["event"], pa.array([YX, YG])))
    return {
        "label_counts": dict(sorted(zip(y["label"].to_pylist(), y["n"].to_pylist()))),
        "features": x.group_by(["feature", "value"]).aggregate([]).num_rows,
    }


def collect_counts(rows, pairs: bool = True):
    """The count rows (or table) by event: documents per class, all documents, YX, YX=ANY and YG
    sums. ``pairs`` False leaves a table's YX rows out (``token_pairs`` reads them as columns)."""
    if hasattr(rows, "column"):  # a pyarrow Table
        return _collect_table(rows, pairs)
    docs: dict[str, int] = {}
    total_docs = 0
    yx: dict[tuple, int] = {}
    yx_any: dict[str, int] = {}
    yg: dict[tuple, tuple[int, float, float]] = {}
    for event, label, feature, value, n, s, ss in rows:
        if event == Y_ANY:
            total_docs += n
        elif event == Y:
            docs[label] = docs.get(label, 0) + n
        elif event == YX:
            key = (label, _yx_feature(feature, value))
            yx[key] = yx.get(key, 0) + n
        elif event == YX_ANY:
            yx_any[label] = yx_any.get(label, 0) + n
        elif event == YG:
            yg[(label, feature)] = (n, s, ss)
        else:
            raise ValueError(f"unknown event {event!r} in a naive Bayes count table")
    if not docs:
        raise ValueError("the count table has no class counts (Y rows)")
    return docs, total_docs, yx, yx_any, yg


def _yx_feature(feature, value):
    """A YX row's feature: a token or column name alone, or ``(column, value)`` for a categorical value."""
    return feature if value is None else (feature, value)


def _collect_table(table, with_pairs: bool):
    """``collect_counts`` of a count table in pyarrow: the YX rows (nearly all) as columns, the others row by
    row."""
    import pyarrow.compute as pc

    is_yx = pc.equal(table.column("event"), YX)
    others = table.filter(pc.invert(is_yx))
    docs, total_docs, _, yx_any, yg = collect_counts(
        zip(*(others.column(i).to_pylist() for i in range(others.num_columns)))
    )
    if not with_pairs:
        return docs, total_docs, {}, yx_any, yg
    pairs = table.filter(is_yx)
    labels, features, n = (pairs.column(c).to_pylist() for c in ("label", "feature", "n"))
    if pairs.column("value").null_count < pairs.num_rows:
        features = [_yx_feature(f, v) for f, v in zip(features, pairs.column("value").to_pylist())]
    yx = dict(zip(zip(labels, features), n))
    if len(yx) < len(n):  # a pair counted in two rows: summed, as the rows' loop sums it
        yx = {}
        for key, count in zip(zip(labels, features), n):
            yx[key] = yx.get(key, 0) + count
    return docs, total_docs, yx, yx_any, yg


def token_pairs(table):
    """The YX rows of a count table (pyarrow) whose features are all tokens (no ``value``), as
    numpy columns: ``(labels, label_codes, tokens, token_codes, n)``, the distinct labels and
    tokens (tokens sorted as Python sorts strings: UTF-8 byte order is code point order) and each
    row's index among them. None when some YX row has a value (a categorical model's)."""
    import pyarrow.compute as pc

    pairs = table.filter(pc.equal(table.column("event"), YX))
    if pairs.column("value").null_count < pairs.num_rows:
        return None
    if pairs.column("label").null_count or pairs.column("feature").null_count or pairs.column("n").null_count:
        raise ValueError("the count table has YX rows without a label, feature or count")
    labels = pc.dictionary_encode(pairs.column("label").combine_chunks())
    tokens = pc.unique(pairs.column("feature"))
    tokens = tokens.take(pc.array_sort_indices(tokens))
    codes = pc.index_in(pairs.column("feature"), value_set=tokens)
    return (
        labels.dictionary.to_pylist(),
        labels.indices.to_numpy(),
        tokens.to_pylist(),
        codes.to_numpy(),
        pairs.column("n").to_numpy(),
    )


def declared_counts(yx: dict, domains: dict, classes) -> dict:
    """Categorical counts with every value of each declared domain present (zero where unseen); a
    counted value outside its column's declared domain is refused."""
    yx = dict(yx)
    for (_label, f), _n in list(yx.items()):
        if isinstance(f, tuple) and f[0] in domains and f[1] not in domains[f[0]]:
            raise ValueError(
                f"column {f[0]!r}: value {f[1]!r} was counted in training but is outside its declared "
                f"domain {list(domains[f[0]])}"
            )
    for column, values in domains.items():
        for v in values:
            for c in classes:
                yx.setdefault((c, (column, v)), 0)
    return yx
