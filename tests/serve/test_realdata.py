"""The Google Books model behind the server, as an editor's client sees it, at the model's own
check settings (the defaults a user trains with)."""

import language_tool_python
import pytest

from nbspark.backoff.jobs import train
from nbspark.inputs.resolve import resolve_input
from nbspark.serve.app import Limits
from nbspark.settings.config import load_config
from tests.serve.conftest import running

pytestmark = [pytest.mark.spark, pytest.mark.realdata]

TEXT = "This would not effect the finance minister's plans. The cumulative effect of the changes was small."


@pytest.fixture(scope="module")
def books(spark, data_dir, tmp_path_factory):
    cfg = load_config(None, {})
    out = tmp_path_factory.mktemp("serve-books") / "affect_effect" / "model"
    train(spark, cfg, resolve_input(cfg.train, str(data_dir)), out)
    return out


@pytest.mark.parametrize("before", ["", "🙂 ", "日本 ", "🙂日本 "])
def test_the_books_model_flags_one_word_for_a_real_client(books, before):
    with running([books], Limits()) as (url, _):
        tool = language_tool_python.LanguageTool("en-US", remote_server=url)
        try:
            text = before + TEXT
            (match,) = tool.check(text)
            assert (match.offset, match.error_length) == (len(before) + 15, 6)
            assert text[match.offset : match.offset + 6] == "effect" and match.replacements == ["affect"]
            assert match.rule_id == "NBSPARK_AFFECT_EFFECT"
            assert tool.correct(text) == before + TEXT.replace("not effect", "not affect")
        finally:
            tool.close()
