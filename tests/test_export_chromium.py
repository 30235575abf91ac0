"""The HTML export of a 5,000-message conversation opened in a real headless browser
(Debian's Chromium, installed by the fixture where it can be: ``tests/chromium.py``): the DOM
Chromium built after loading the page holds the first and the last message and a folded tool
call's summary, the call folded (its result in the page, not open)."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.tui.cli import main

from . import chromium
from .events import billing_conversation

pytestmark = pytest.mark.slow  # a browser start and a 5,000-message page: seconds

KEY = "agent:ops:session-long"
MESSAGES = 5000


@pytest.fixture(scope="module")
def browser() -> str:
    path, why = chromium.find_or_install()
    if path is None:
        pytest.skip(why)
    return path


def long_conversation() -> list[str]:
    """5,000 user and assistant messages; every 100th message the agent runs a tool (every
    other one fails); the first and last messages hold words found nowhere else."""
    return billing_conversation(MESSAGES, "Aardvark opening words of the conversation.",
                                "Zebra closing words of the conversation.")


def test_a_5000_message_html_export_renders_in_chromium(state: StateDir, tmp_path: Path,
                                                        browser: str) -> None:
    with state.open("ops", write=True) as db:
        db.import_session(SessionMeta(KEY, session_id="sid-long"), long_conversation())
    page = tmp_path / "long.html"
    code = main(["export", KEY, "--format", "html", "--include-tools", "-o", str(page),
                 "--state-dir", str(state.path)])
    assert code == 0
    dom = chromium.run(browser, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert dom.lstrip().lower().startswith("<!doctype html>\n<html")  # as Chromium built it
    sections = re.findall(r'<section class="msg (?:user|assistant)"', dom)
    assert len(sections) == MESSAGES
    text = unescape(re.sub(r"<[^>]+>", " ", dom))
    assert "Aardvark opening words of the conversation." in text
    assert "Zebra closing words of the conversation." in text
    summaries = re.findall(r'<details class="tool failed"><summary>(.*?)</summary>', dom)
    assert len(summaries) == 25  # turns 1, 201, ... 4801
    first = " ".join(unescape(re.sub(r"<[^>]+>", " ", summaries[0])).split())
    assert first == "bash failed ./deploy.sh billing-api v2.1.0"
    assert "<details open" not in dom and " open=" not in dom  # folded
    assert dom.count('<details class="tool"><summary>') == 25  # the calls that went well
    assert "exit code 1" in text  # the result is in the page, inside its fold


def test_the_screenshot_script_draws_the_demo_export(tmp_path: Path, browser: str) -> None:
    """``screenshots/make_export_screenshot.py`` (what made ``screenshots/export-html.png``)
    runs and writes a PNG."""
    import runpy

    script = Path(__file__).resolve().parents[1] / "screenshots" / "make_export_screenshot.py"
    out = tmp_path / "shot.png"
    module = runpy.run_path(str(script))
    module["make"](out, tmp_path / "work", browser)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
