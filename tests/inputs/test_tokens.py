import pytest

from nbspark.inputs.tokens import LEFT_PAD, RIGHT_PAD, centred_windows, tokenize


def test_tokenize_words_punctuation_and_case():
    assert tokenize("The U.S. effect, he said.") == ["the", "u.s", ".", "effect", ",", "he", "said", "."]
    assert tokenize("Don't pay 1,000 dlrs (well-known)") == [
        "don't",
        "pay",
        "1,000",
        "dlrs",
        "(",
        "well-known",
        ")",
    ]
    assert tokenize("Effect", lowercase=False) == ["Effect"]
    assert tokenize("") == []
    assert tokenize("<s>") == ["<", "s", ">"]  # the pad symbols cannot come from text


def test_windows_are_padded_at_story_edges():
    tokens = ["effect", "of", "x", "affect"]
    got = list(centred_windows(tokens, {"affect", "effect"}))
    assert got == [
        (0, (LEFT_PAD, LEFT_PAD, "effect", "of", "x")),
        (3, ("of", "x", "affect", RIGHT_PAD, RIGHT_PAD)),
    ]


def test_windows_other_widths_and_sets():
    assert list(centred_windows(["a", "their", "b"], {"their", "there"}, width=3)) == [
        (1, ("a", "their", "b"))
    ]
    assert list(centred_windows(["a", "b"], {"effect"})) == []
    with pytest.raises(ValueError, match="odd"):
        list(centred_windows(["a"], {"a"}, width=4))


@pytest.mark.parametrize("lowercase", [True, False])
def test_the_checker_finds_the_tokens_tokenize_finds_and_where_they_were_written(lowercase):
    """``nbspark check`` reports columns, so it tokenizes with positions; its tokens must be
    ``tokenize``'s (the windows the model was counted and is classified with). Lower-casing ``İ``
    gives two characters, which split a token in ``tokenize``; the checker once kept it whole."""
    from nbspark.backoff.predictor import _Placed

    for text in [
        "İstanbul would not effect the outcome.",
        "Would NOT Effect THE",
        "ΣΟΦΟΣ effect",
        "aİb İ. x",
        "don't U.S. 1,000",
        "",
    ]:
        placed = _Placed(text, lowercase)
        tokens = placed.tokens
        assert tokens == tokenize(text, lowercase), text
        places = [placed(i) for i in range(len(tokens))]
        for (start, end), token in zip(places, tokens):
            written = text[start:end]
            assert token in written.lower() if lowercase else token == written  # where the token was written
        # asked out of order (a token before the last one asked: walked again from the start), the same
        again = _Placed(text, lowercase)
        assert [again(i) for i in reversed(range(len(tokens)))] == places[::-1], text
    # in the text, not in its lower case (each İ is two tokens there: i and U+0307)
    assert _Placed("İİ not effect", True)(5) == (7, 13)


def test_windows_in_pieces_are_the_windows_of_the_whole():
    """A document tokenized a piece at a time (a long text, in line_pieces) gives the windows and
    indices of the whole, however it is cut: empty pieces, pieces shorter than half a window, a
    centre at either edge, widths 1, 3, 5 and 7."""
    import random

    from nbspark.inputs.tokens import centred_windows, line_pieces, windows_in_pieces

    rng = random.Random(7)
    for _ in range(300):
        tokens = [rng.choice(["a", "b", "affect", "effect"]) for _ in range(rng.randrange(0, 30))]
        cuts = sorted(rng.choices(range(len(tokens) + 1), k=rng.randrange(0, 8)))
        pieces = [tokens[i:j] for i, j in zip([0, *cuts], [*cuts, len(tokens)])]
        for width in (1, 3, 5, 7):
            whole = list(centred_windows(tokens, {"affect", "effect"}, width))
            assert list(windows_in_pieces(iter(pieces), {"affect", "effect"}, width)) == whole, (
                pieces,
                width,
            )
    # by hand: the text's windows across a cut after every line
    text = "it would not\neffect\nthe outcome\n"
    assert [p for _, p in line_pieces(text, 1)] == ["it would not\n", "effect\n", "the outcome\n"]
    pieces = (tokenize(p) for _, p in line_pieces(text, 1))
    assert list(windows_in_pieces(pieces, {"effect"}, 5)) == [
        (3, ("would", "not", "effect", "the", "outcome"))
    ]
