import pytest

from nbspark.text import LEFT_PAD, RIGHT_PAD, centred_windows, tokenize


def test_tokenize_words_punctuation_and_case():
    assert tokenize("The U.S. effect, he said.") == ["the", "u.s", ".", "effect", ",", "he", "said", "."]
    assert tokenize("Don't pay 1,000 dlrs (well-known)") == [
        "don't", "pay", "1,000", "dlrs", "(", "well-known", ")",
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
    assert list(centred_windows(["a", "their", "b"], {"their", "there"}, width=3)) == [(1, ("a", "their", "b"))]
    assert list(centred_windows(["a", "b"], {"effect"})) == []
    with pytest.raises(ValueError, match="odd"):
        list(centred_windows(["a"], {"a"}, width=4))


@pytest.mark.parametrize("lowercase", [True, False])
def test_the_checker_finds_the_tokens_tokenize_finds_and_where_they_were_written(lowercase):
    """``nbspark check`` reports columns, so it tokenizes with positions; its tokens must be
    ``tokenize``'s (the windows the model was counted and is classified with). Lower-casing ``İ``
    gives two characters, which split a token in ``tokenize``; the checker once kept it whole."""
    from nbspark.models import _token_positions

    for text in ["İstanbul would not effect the outcome.", "Would NOT Effect THE", "ΣΟΦΟΣ effect", "aİb İ. x", "don't U.S. 1,000", ""]:
        starts, ends, tokens = _token_positions(text, lowercase)
        assert tokens == tokenize(text, lowercase), text
        for start, end, token in zip(starts, ends, tokens):
            written = text[start:end]
            assert token in written.lower() if lowercase else token == written  # where the token was written
    starts, ends, _ = _token_positions("İİ not effect", True)
    assert (starts[-1], ends[-1]) == (7, 13)  # in the text, not in its lower case
