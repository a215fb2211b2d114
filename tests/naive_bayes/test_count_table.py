"""``CountArrays``: a count table summed into a model's arrays, added to in place, equals the table
summed at once; a model built from it scores as one built from the whole table."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nbspark.naive_bayes.count_table import CountArrays
from nbspark.naive_bayes.events import doc_events, event_row, row_events
from nbspark.naive_bayes.model import build_nb_model, score_docs

WORDS = ["ant", "bee", "cat", "dog", "eel", "fox", "gnu"]


def _rows(examples, kind):
    """Count rows of ``(label, words)`` examples, an event a row (keys repeat: every reader sums)."""
    events = []
    for label, words in examples:
        if kind == "categorical":
            events += row_events(label, {f"c{i}": w for i, w in enumerate(words[:3])}, {})
        else:
            events += doc_events([label], words, kind)
    return [event_row(k, v) for k, v in events]


example = st.tuples(st.sampled_from("xyz"), st.lists(st.sampled_from(WORDS), min_size=3, max_size=6))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(example, min_size=1, max_size=30),
    st.lists(st.integers(1, 8), min_size=1, max_size=6),
    st.sampled_from(["multinomial", "bernoulli", "complement", "categorical"]),
)
def test_added_in_parts_the_arrays_are_the_whole_tables(examples, cuts, kind):
    """Examples added in batches (classes and features arriving in any order) give the counts of one
    add of all of them, feature by feature (a feature first seen later sits at the end, so the two
    matrices' columns are matched by ``vocab``), and models that score alike."""
    whole = CountArrays().add(_rows(examples, kind))
    parts, at, k = CountArrays(), 0, 0
    while at < len(examples):  # every example, in batches of the cuts' sizes in turn
        cut = cuts[k % len(cuts)]
        parts.add(_rows(examples[at : at + cut], kind))
        at, k = at + cut, k + 1
    assert parts.docs == whole.docs and parts.total_docs == whole.total_docs
    assert parts.yx_any == whole.yx_any and parts.classes == whole.classes
    assert list(whole.vocab) == sorted(whole.vocab, key=lambda f: (f,) if isinstance(f, str) else f)
    assert set(parts.vocab) == set(whole.vocab)
    order = [parts.vocab[f] for f in whole.vocab]
    assert np.array_equal(parts.counts[:, order], whole.counts)
    a, b = build_nb_model(parts, kind), build_nb_model(whole, kind)
    if kind != "categorical":
        probe = [w for _, w in examples[:5]] + [["ant", "gnu", "owl"]]
        assert np.allclose(score_docs(a, probe)[0], score_docs(b, probe)[0], rtol=1e-12)
    assert np.allclose(a.weights[:, order], b.weights, rtol=1e-12)


def test_gaussian_sums_and_a_class_arriving_later():
    """(n, Σx, Σx²) add part by part; a class first counted in a later part is inserted in its
    sorted place, its counts zero until then."""
    first = [event_row(k, v) for k, v in row_events("b", {}, {"x": 2.0})]
    later = [
        event_row(k, v) for label, x in (("a", 1.0), ("b", 4.0)) for k, v in row_events(label, {}, {"x": x})
    ]
    arrays = CountArrays().add(first).add(later)
    assert arrays.classes == ("a", "b") and arrays.docs == {"a": 1, "b": 2}
    assert arrays.yg == {("a", "x"): (1, 1.0, 1.0), ("b", "x"): (2, 6.0, 20.0)}
    model = build_nb_model(arrays, "gaussian")
    assert model.theta.ravel().tolist() == [1.0, 3.0]


def test_a_pyarrow_table_and_its_rows_give_the_same_arrays():
    """A count table read as columns (its tokens sorted by pyarrow, UTF-8 byte order) and the same
    rows read one by one (sorted by Python, code point order) give the same columns in the same
    order, non-ASCII tokens too; added to arrays that hold counts already, the same sums."""
    from nbspark.naive_bayes.events import COUNT_DDL
    from nbspark.storage.counts import rows_table

    words = ["b", "a", "é", "Z", "zz", "ab", "été", "日本", "\U0001f600"]
    examples = [
        (label, [words[(i * k) % len(words)] for k in range(1, 5)]) for i, label in enumerate("xyzxyzxy")
    ]
    rows = _rows(examples, "multinomial")
    summed: dict = {}
    for row in rows:  # a written table holds each key once
        summed[row[:4]] = summed.get(row[:4], 0) + row[4]
    table = rows_table([(*k, n, None, None) for k, n in summed.items()], COUNT_DDL)
    by_rows, by_table = CountArrays().add(rows), CountArrays().add(table)
    assert list(by_table.vocab) == list(by_rows.vocab) == sorted(by_rows.vocab)
    assert np.array_equal(by_table.counts, by_rows.counts) and by_table.docs == by_rows.docs
    more = _rows(examples[:3], "multinomial")
    assert np.array_equal(CountArrays().add(rows).add(more).counts, CountArrays().add(table).add(more).counts)
    after_rows, after_table = CountArrays().add(more).add(rows), CountArrays().add(more).add(table)
    assert after_table.vocab == after_rows.vocab and np.array_equal(after_table.counts, after_rows.counts)


def test_a_model_built_keeps_its_vocabulary_while_the_arrays_grow():
    """The arrays grow in place (room for more words, the vocabulary extended), past their room
    too (1,500 words in batches); a model built on the way keeps the vocabulary and weights it was
    built with and scores as before; a pickle holds the counts in use only; the end equals one add of
    everything."""
    import pickle

    rng = np.random.default_rng(5)
    examples = [
        (str(rng.choice(list("xyz"))), [f"w{i}" for i in rng.integers(0, 1500, 12)]) for _ in range(600)
    ]
    arrays, models, probe = CountArrays(), [], [["w1", "w7", "w1499"], ["w3", "nothing"]]
    for start in range(0, 600, 37):
        arrays.add(_rows(examples[start : start + 37], "multinomial"))
        model = build_nb_model(arrays, "multinomial")
        models.append((model, dict(model.vocab), model.weights.copy(), score_docs(model, probe)[0]))
    for model, vocab, weights, scores in models:
        assert model.vocab == vocab and np.array_equal(model.weights, weights)
        assert np.array_equal(score_docs(model, probe)[0], scores)
    whole = CountArrays().add(_rows(examples, "multinomial"))
    order = [arrays.vocab[f] for f in whole.vocab]
    assert np.array_equal(arrays.counts[:, order], whole.counts)
    again = pickle.loads(pickle.dumps(arrays))
    assert again._store.shape == arrays.counts.shape and np.array_equal(again.counts, arrays.counts)
    assert np.allclose(score_docs(build_nb_model(again, "multinomial"), probe)[0], models[-1][3], rtol=1e-12)
