"""The page at ``/``, in a real headless browser (Chromium) running the page's own script: the text
comes in the query string, the script presses Check, and the flagged word comes back underlined with
its suggestion. The screenshot is kept in ``$NBSPARK_ARTIFACTS`` (default ``out/test-artifacts``)."""

import os
import re
import subprocess
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.serve.conftest import running

ROOT = Path(__file__).resolve().parents[2]


def _chromium() -> str | None:
    """The browser's path (``scripts/chromium.sh --which``: the one list of its names), once an
    install that ``scripts/chromium.sh --background`` started is done; None when there is none."""
    found = subprocess.run(
        ["bash", str(ROOT / "scripts" / "chromium.sh"), "--which"], capture_output=True, text=True
    )
    if found.returncode:
        pytest.fail(found.stderr.strip())
    return found.stdout.strip() or None


def _browser(chromium: str, url: str, *args: str, profile: Path) -> str:
    common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
    ]
    done = subprocess.run(
        [chromium, *common, "--virtual-time-budget=10000", *args, url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_page_underlines_the_flagged_word_with_its_suggestion(checker_model, tmp_path):
    chromium = _chromium()
    if chromium is None:
        if os.environ.get("CI"):
            pytest.fail(
                "no Chromium on PATH: scripts/test.sh installs Debian's as root (scripts/chromium.sh)"
            )
        pytest.skip("no Chromium on PATH (scripts/test.sh installs Debian's when run as root)")
    with running([checker_model]) as (url, _):
        page = f"{url}/?" + urlencode({"text": "😀 It would not effect the outcome.", "check": "1"})
        dom = _browser(chromium, page, "--dump-dom", profile=tmp_path / "profile")
        artifacts = Path(os.environ.get("NBSPARK_ARTIFACTS", ROOT / "out" / "test-artifacts"))
        artifacts.mkdir(parents=True, exist_ok=True)
        _browser(
            chromium,
            page,
            "--window-size=900,480",
            f"--screenshot={artifacts / 'serve-page.png'}",
            profile=tmp_path / "profile",
        )
    result = re.search(r'<div id="result">(.*?)</div>', dom, re.S).group(1)
    assert re.fullmatch(
        r'😀 It would not <mark class="flag" title="[^"]*affect[^"]*">effect</mark>'
        r'<span class="suggestion" title="replace with affect">→ affect</span> the outcome\.',
        result,
    ), result
    assert re.search(r'<span id="status">1 word flagged</span>', dom)
    assert "Checks only these confusion sets: NBSPARK_AFFECT_EFFECT (checker, version 1)" in dom
    assert (artifacts / "serve-page.png").stat().st_size > 5_000
