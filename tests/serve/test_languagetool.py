"""LanguageTool's protocol, pure: requests read, annotated text, UTF-16 offsets and matches, each
against values worked by hand."""

import math

import pytest

from nbspark.serve.languagetool import (
    SENTENCE,
    RequestError,
    annotated_text,
    check_request,
    matches,
    rule_id,
    rules,
    utf16_offsets,
)


def _refused(fields) -> tuple[int, str]:
    with pytest.raises(RequestError) as caught:
        check_request(fields)
    return caught.value.status, caught.value.message


def test_what_languagetool_refuses_is_refused_with_its_status():
    assert _refused({"language": "en-US"}) == (400, "Error: Missing 'text' or 'data' parameter")
    assert _refused({"text": "a", "data": "{}", "language": "en"})[0] == 400
    assert _refused({"text": "a"}) == (400, "Error: Missing 'language' parameter, e.g. 'language=en-US'")
    status, message = _refused({"text": "a", "language": "de-DE"})
    assert status == 400 and message.startswith("Error: 'de-DE' is not a language code known")
    assert "en-GB" in message
    status, message = _refused({"text": "a", "language": "en", "enabledOnly": "true"})
    assert status == 400 and "enabledOnly=true" in message


def test_languages_and_rule_filters():
    r = check_request({"text": "a", "language": "auto"})
    assert r.language["code"] == "en-US" and r.language["detectedLanguage"]["code"] == "en-US"
    assert check_request({"text": "a", "language": "EN-gb"}).language["code"] == "en-GB"
    r = check_request({"text": "a", "language": "en", "disabledRules": "NBSPARK_AFFECT_EFFECT, X"})
    assert not r.wanted("NBSPARK_AFFECT_EFFECT", "CONFUSED_WORDS")
    assert r.wanted("NBSPARK_THEIR_THERE", "CONFUSED_WORDS")
    r = check_request({"text": "a", "language": "en", "enabledOnly": "true", "enabledRules": "A"})
    assert r.wanted("A", "CONFUSED_WORDS") and not r.wanted("B", "CONFUSED_WORDS")
    r = check_request({"text": "a", "language": "en", "disabledCategories": "CONFUSED_WORDS"})
    assert not r.wanted("A", "CONFUSED_WORDS")
    r = check_request(
        {"text": "a", "language": "en", "enabledOnly": "true", "enabledCategories": "CONFUSED_WORDS"}
    )
    assert r.wanted("A", "CONFUSED_WORDS")


def test_annotated_text_reads_markup_as_its_interpretation():
    data = (
        '{"annotation": [{"text": "A "}, {"markup": "<b>"}, {"text": "test"}, {"markup": "</b>"}, '
        '{"markup": "<br/>", "interpretAs": "\\n"}, {"text": "x"}]}'
    )
    document, plain, positions = annotated_text(data)
    assert document == "A <b>test</b><br/>x"
    assert plain == "A test\nx"
    # A, space, t e s t (after the 3 characters of <b>), the newline at <br/>'s start, x after it
    assert positions == (0, 1, 5, 6, 7, 8, 13, 18)


@pytest.mark.parametrize(
    "data",
    [
        "not json",
        "[1, 2]",
        '{"annotation": {"text": "a"}}',
        '{"annotation": [{"text": "a", "markup": "<b>"}]}',
        '{"annotation": [{"other": "a"}]}',
        '{"annotation": [{"text": 3}]}',
    ],
)
def test_bad_annotated_text_is_a_400(data):
    status, message = _refused({"data": data, "language": "en-US"})
    assert status == 400 and message.startswith("Error: ") and "data" in message


def test_two_sets_that_would_share_a_rule_id_are_named():
    from nbspark.serve.languagetool import rule_id_clash

    assert rule_id_clash([["affect", "effect"], ["their", "there"]]) is None
    assert rule_id_clash([["effect", "affect"], ["affect", "effect"]]) is None  # one set twice: one rule
    clash = rule_id_clash([["their", "they're"], ["their", "they-re"]])
    assert clash.startswith("confusion sets ['their', \"they're\"] and ['their', 'they-re'] would both be")
    assert clash.endswith("rule NBSPARK_THEIR_THEY_RE")


def test_rule_ids_and_utf16_offsets():
    assert rule_id(["effect", "affect"]) == "NBSPARK_AFFECT_EFFECT"
    assert rule_id(["they're", "their"]) == "NBSPARK_THEIR_THEY_RE"
    assert [r["id"] for r in rules([["their", "there"]], "m")] == ["NBSPARK_THEIR_THERE"]
    at = utf16_offsets("😀中a😀b")  # the emojis count two units each, 中 one
    assert [at(i) for i in range(6)] == [0, 2, 3, 4, 6, 7]


RULE = rules([["affect", "effect"]], "m")[0]


def _flag(offset, written, suggestion="affect", ratio=58.0):
    return {"offset": offset, "written": written, "suggestion": suggestion, "ratio": ratio, "level": "ABD"}


def test_a_match_after_an_emoji_counts_utf16_units():
    text = "😀 This would not effect it. Next one."
    assert text[17:23] == "effect"  # 😀, space, "This would not " is 17 characters
    r = check_request({"text": text, "language": "en-US"})
    (m,) = matches(r, [(_flag(17, "effect"), RULE, "m", 3)])
    assert (m["offset"], m["length"]) == (18, 6)  # the emoji is two UTF-16 units
    assert m["context"] == {"text": text, "offset": 18, "length": 6}
    assert m["sentence"] == "😀 This would not effect it."
    assert m["replacements"] == [{"value": "affect"}]
    assert m["rule"]["id"] == "NBSPARK_AFFECT_EFFECT" and m["rule"]["category"]["id"] == "CONFUSED_WORDS"
    assert m["nbspark"] == {"ratio": 58.0, "level": "ABD", "model": "m", "version": 3}
    (never,) = matches(r, [(_flag(17, "effect", ratio=math.inf), RULE, "m", 3)])
    assert never["nbspark"]["ratio"] is None and "never" in never["message"]


def test_a_long_text_gets_a_cut_context_and_its_own_sentence():
    text = "Stop. " * 20 + "It will effect\nthe plan.  And more. " + "x " * 40
    start = text.index("effect")
    r = check_request({"text": text, "language": "en-US"})
    (m,) = matches(r, [(_flag(start, "effect"), RULE, "m", 1)])
    context = m["context"]
    assert context["text"].startswith("...") and context["text"].endswith("...")
    assert context["text"][context["offset"] : context["offset"] + 6] == "effect"
    assert "\n" not in context["text"]  # line breaks read as spaces, as LanguageTool shows them
    assert context["offset"] == 3 + 40 and len(context["text"]) == 3 + 40 + 6 + 40 + 3
    assert m["sentence"] == "It will effect\nthe plan."


def test_a_match_in_a_text_without_sentence_ends_gets_a_bounded_sentence():
    """Each match's sentence stops ``SENTENCE`` characters from it when no sentence end comes
    first (it held everything before the match: quadratic in a long unpunctuated text)."""
    text = "it would not effect the plan " * 1000
    starts = [k for k in range(len(text)) if text.startswith("effect", k)]
    r = check_request({"text": text, "language": "en-US"})
    found = matches(r, [(_flag(k, "effect"), RULE, "m", 1) for k in starts])
    assert len(found) == 1000 and found[0]["sentence"] == text[: 13 + 6 + SENTENCE].strip()
    last = found[-1]["sentence"]
    assert last == text[starts[-1] - SENTENCE :].strip() and len(last) <= 2 * SENTENCE + 6


def test_annotated_text_answers_in_the_document_with_markup():
    data = (
        '{"annotation": [{"markup": "<p>"}, {"text": "😀 would not "}, {"markup": "<i>"}, '
        '{"text": "effect"}]}'
    )
    r = check_request({"data": data, "language": "en-US"})
    assert r.plain == "😀 would not effect"
    (m,) = matches(r, [(_flag(r.plain.index("effect"), "effect"), RULE, "m", 1)])
    # <p> (3) + the emoji (2 units) + " would not " (11) + <i> (3)
    assert (m["offset"], m["length"]) == (19, 6)
    assert r.document.encode("utf-16-le")[2 * 19 : 2 * 25].decode("utf-16-le") == "effect"
