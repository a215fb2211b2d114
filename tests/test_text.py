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
