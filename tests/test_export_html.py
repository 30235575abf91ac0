"""The HTML page of an export, without a database: any text a transcript can hold comes out as
text (a property test), and tool results pair with their calls by order."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from backscroll.core.export_html import render_html
from backscroll.core.history import HistoryResponse
from backscroll.core.tool_pairs import (
    FAILED,
    NO_RESULT,
    OK,
    arguments_preview,
    arguments_whole,
    pair_tool_calls,
    status_of,
)

PAGE_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "dl", "dt", "dd",
             "p", "main", "section", "div", "span", "time", "details", "summary", "pre"}


class Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.data: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}

    def handle_data(self, data: str) -> None:
        self.data.append(data)


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "toolCall", "name": name, "arguments": json.dumps(arguments)}


def result(name: str, text: str, error: bool = False) -> dict[str, Any]:
    return {"id": "r", "role": "toolResult", "timestamp": 0, "content": [
        {"type": "toolResult", "name": name, "isError": error,
         "content": [{"type": "text", "text": text}]}]}


def said(role: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return {"id": "m", "role": role, "timestamp": 1_796_000_000_000, "content": list(blocks)}


# Whatever a transcript holds: markup, entities, quotes, control characters, any Unicode
hostile = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60) | st.sampled_from(
    ["<script>alert(1)</script>", "</pre></details><img src=x onerror=alert(1)>", "&amp;&lt;",
     "\"'><svg onload=x>", "<!--", "]]>", "<style>body{display:none}</style>",
     "<a href='https://example.com'>x</a>", "<meta http-equiv=refresh content=0;url=x>"])


@settings(max_examples=150, deadline=None)
@given(text=hostile, name=hostile, argument=hostile, output=hostile, key=hostile)
def test_any_transcript_text_stays_text(text: str, name: str, argument: str, output: str,
                                         key: str) -> None:
    history = HistoryResponse(session_key=f"agent:main:{key}", session_id=key, messages=[
        said("user", {"type": "text", "text": text}),
        said("assistant", {"type": "thinking", "thinking": text}, call(name, {"a": argument})),
        result(name, output, error=True),
    ], agent="main")
    page = Page()
    page.feed(render_html(history))
    page.close()
    assert page.tags <= PAGE_TAGS
    assert page.attributes <= {"lang", "charset", "http-equiv", "content", "name", "class", "id",
                               "datetime"}
    shown = "".join(page.data)
    for value in (text, output):
        assert value in shown  # read back as it was written


def test_results_pair_with_their_calls_by_order_and_name() -> None:
    messages = [
        said("user", {"type": "text", "text": "go"}),
        said("assistant", call("read", {"path": "a"}), call("bash", {"command": "ls"}),
             call("bash", {"command": "pwd"})),
        result("bash", "a b"),  # the first bash call's, though read came first
        result("read", "contents", error=True),
        said("assistant", call("bash", {"command": "false"})),  # never answered
        said("user", {"type": "text", "text": "and?"}),
        result("bash", "an answer nothing asked for"),
    ]
    pairs = pair_tool_calls(messages)
    assert pairs.results == {(1, 1): 2, (1, 0): 3}
    assert pairs.answered == {2, 3}
    assert status_of(pairs.result_of(messages, 1, 0)) == FAILED
    assert status_of(pairs.result_of(messages, 1, 1)) == OK
    assert status_of(pairs.result_of(messages, 1, 2)) == NO_RESULT
    assert status_of(pairs.result_of(messages, 4, 0)) == NO_RESULT
    page = render_html(HistoryResponse("agent:main:main", "sid", messages))
    assert page.count('<span class="status no-result">') == 2
    assert "(a result; its call is not shown)" in page and "an answer nothing asked for" in page


def test_a_lone_command_shows_bare_and_other_arguments_as_json() -> None:
    assert arguments_preview(json.dumps({"command": "git push --force origin main"})) == (
        "git push --force origin main")
    assert arguments_preview(json.dumps({"path": "a", "n": 2})) == '{"path": "a", "n": 2}'
    assert arguments_preview("x " * 200, 20) == "x x x x x x x x x x…"
    assert arguments_whole(json.dumps({"command": "ls\n-la"})) == "ls\n-la"
    assert arguments_whole(json.dumps({"path": "a", "n": 2})) == '{\n  "path": "a",\n  "n": 2\n}'
    assert arguments_whole("not json … [cut]") == "not json … [cut]"
