"""``backscroll export``: the three formats, redaction in each (tool arguments and results
too), HTML that escapes a hostile transcript and references nothing outside itself, standard
output, ``--include-tools``, the refusals the browser's export makes (one rule), ``--as``; and
reading in full: the cut marker of ``history``'s text and ``--full``."""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from backscroll.core.export import export_conversation
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR
from backscroll.tui.cli import main

from .events import BASE_MS, header, iso

KEY = "agent:ops:session-export"
# a distinctive secret of shared/data/secrets_true.tsv (test_redact.py lists them all)
SECRET = "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"
HOSTILE = '<script>alert("x")</script> & "quotes" <img src=x onerror=alert(1)> </pre></details>'
LONG = "A long answer. " * 400 + "THE-LAST-WORDS"  # 6,014 characters: cut at 4,000


def _message(n: int, message: dict[str, Any], parent: str | None) -> dict[str, Any]:
    ms = BASE_MS + (n + 1) * 60_000
    return {"type": "message", "id": f"m{n}", "parentId": parent, "timestamp": iso(ms),
            "message": {**message, "timestamp": ms}}


def store(state: StateDir, key: str, messages: list[dict[str, Any]]) -> None:
    agent = key.split(":")[1]
    events = [header(f"sid-{key[-6:]}")]
    for n, message in enumerate(messages):
        events.append(_message(n, message, events[-1].get("id") if n else None))
    with state.open(agent, write=True) as db:
        for event in events:
            db.append(SessionMeta(key, session_id=f"sid-{key[-6:]}"), json.dumps(event))


def text(role: str, value: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": value}]}


def conversation() -> list[dict[str, Any]]:
    return [
        text("user", f"Deploy billing-api v2.22.0. My token is {SECRET}. {HOSTILE}"),
        {"role": "assistant", "content": [
            {"type": "text", "text": "Deploying."},
            {"type": "toolCall", "id": "c1", "name": "bash",
             "arguments": {"command": f"GITHUB_TOKEN={SECRET} ./deploy.sh billing-api v2.22.0"}},
        ]},
        {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": True,
         "content": [{"type": "text",
                      "text": f"ImagePullBackOff\nexit code 1 (token {SECRET}) {HOSTILE}"}]},
        text("assistant", LONG),
    ]


@pytest.fixture
def filled(state: StateDir) -> StateDir:
    store(state, KEY, conversation())
    return state


def run(capsys: pytest.CaptureFixture[str], state: StateDir, *argv: str) -> tuple[int, str, str]:
    code = main([*argv, "--state-dir", str(state.path)])
    out, err = capsys.readouterr()
    return code, out, err


class Tags(HTMLParser):
    """Every start tag and attribute of a page, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


# --- formats and redaction ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["markdown", "json", "html"])
def test_a_secret_is_redacted_in_every_format_tool_arguments_and_results_included(
        filled: StateDir, fmt: str) -> None:
    exported = export_conversation(filled, KEY, OPERATOR, fmt, include_tools=True)
    assert SECRET not in exported
    assert "ghp_wW…INUx" in exported  # the marker, in the message, the arguments, the result
    assert exported.count("ghp_wW…INUx") >= 3  # HTML: the arguments twice (summary, body)
    assert "./deploy.sh billing-api v2.22.0" in exported and "ImagePullBackOff" in exported
    if fmt == "json":  # escaped in JSON: the text is the same once read
        assert SECRET not in json.dumps(json.loads(exported), ensure_ascii=False)


def test_html_escapes_a_hostile_transcript_and_loads_nothing(filled: StateDir) -> None:
    page = export_conversation(filled, KEY, OPERATOR, "html", include_tools=True)
    parsed = Tags()
    parsed.feed(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert set(parsed.tags) <= {"html", "head", "meta", "title", "style", "body", "header", "h1",
                                "dl", "dt", "dd", "p", "main", "section", "div", "span", "time",
                                "details", "summary", "pre"}
    names = {name for name, _ in parsed.attributes}
    assert not names & {"src", "href", "action", "onerror", "onload", "srcset", "style"}
    assert "http" not in page.lower().replace("http-equiv", "")  # no address at all
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page  # and the browser is told so
    # the hostile text is there, as text
    shown = "".join(parsed.text)
    assert '<script>alert("x")</script>' in shown and "<img src=x onerror=alert(1)>" in shown
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


def test_html_folds_a_tool_call_with_its_status_and_result(filled: StateDir) -> None:
    page = export_conversation(filled, KEY, OPERATOR, "html", include_tools=True)
    summary = page.split('<details class="tool failed"><summary>', 1)[1].split("</summary>")[0]
    assert '<span class="tool-name">bash</span>' in summary
    assert '<span class="status failed">failed</span>' in summary
    assert "./deploy.sh billing-api v2.22.0" in summary
    details = page.split('<details class="tool failed">', 1)[1].split("</details>")[0]
    assert "result (error)" in details and "exit code 1" in details  # the result, inside
    assert page.count('<section class="msg tool-message"') == 0  # not shown twice
    assert "THE-LAST-WORDS" in page  # whole, not cut at 4,000


def test_include_tools_on_and_off(filled: StateDir, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, filled, "export", KEY, "--format", "json")
    assert code == 0 and err == ""
    kinds = [b["type"] for m in json.loads(out)["messages"] for b in m["content"]]
    assert kinds == ["text", "text", "text"]  # user, "Deploying.", the long answer
    code, out, _ = run(capsys, filled, "export", KEY, "--format", "json", "--include-tools")
    kinds = [b["type"] for m in json.loads(out)["messages"] for b in m["content"]]
    assert kinds == ["text", "text", "toolCall", "toolResult", "text"]
    code, out, _ = run(capsys, filled, "export", KEY, "--format", "html")
    assert code == 0 and "<details class=\"tool" not in out and "Deploying." in out
    code, out, _ = run(capsys, filled, "export", KEY, "--include-tools")
    assert code == 0 and out.startswith(f"# {KEY}") and "**tool call** `bash`" in out


def test_standard_output_is_the_default_and_dash(filled: StateDir,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, plain, _ = run(capsys, filled, "export", KEY, "--format", "html")
    code2, dashed, _ = run(capsys, filled, "export", KEY, "--format", "html", "-o", "-")
    assert code == code2 == 0 and plain == dashed
    assert plain.startswith("<!DOCTYPE html>") and plain.endswith("</html>\n")


def test_an_export_to_a_file_is_0600_and_says_where(filled: StateDir, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "incident.html"
    code, out, err = run(capsys, filled, "export", KEY, "--format", "html", "-o", str(target))
    assert code == 0 and err == ""
    assert out.startswith(f"exported {KEY} (") and out.rstrip().endswith(str(target))
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text().startswith("<!DOCTYPE html>")


# --- refusals: the browser's rule ---------------------------------------------------------


def test_an_existing_file_is_refused_without_force(filled: StateDir, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "notes.md"
    target.write_text("mine")
    code, out, err = run(capsys, filled, "export", KEY, "-o", str(target))
    assert code == 2 and out == ""
    assert err == (f"backscroll: {target} already exists: choose another path or replace it "
                   "with --force\n")
    assert target.read_text() == "mine"
    code, _, _ = run(capsys, filled, "export", KEY, "-o", str(target), "--force")
    assert code == 0 and target.read_text().startswith(f"# {KEY}")


def test_a_symlink_is_refused_and_never_followed(filled: StateDir, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("not yours")
    link = tmp_path / "link.md"
    link.symlink_to(elsewhere)
    code, _, err = run(capsys, filled, "export", KEY, "-o", str(link))
    assert code == 2 and "already exists" in err
    code, _, _ = run(capsys, filled, "export", KEY, "-o", str(link), "--force")
    assert code == 0 and elsewhere.read_text() == "not yours" and not link.is_symlink()


def test_a_pipe_a_device_and_a_folder_are_refused_even_with_force(
        filled: StateDir, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/null")):
        code, out, err = run(capsys, filled, "export", KEY, "-o", str(target), "--force")
        assert code == 2 and out == ""
        assert err == (f"backscroll: {target} is not a regular file (a device, a pipe or a "
                       "socket): give a file name to export to\n")
    assert stat.S_ISFIFO(fifo.stat().st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    code, _, err = run(capsys, filled, "export", KEY, "-o", str(tmp_path), "--force")
    assert code == 2 and "is a folder" in err
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_a_session_the_caller_may_not_see_is_not_exported(
        filled: StateDir, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store(filled, "agent:ops:other", [text("user", "someone else's words")])
    target = tmp_path / "out.md"
    code, out, err = run(capsys, filled, "export", KEY, "-o", str(target),
                         "--as", "agent:ops:other", "--visibility", "self")
    assert (code, out, err) == (3, "", "backscroll: session not found or not visible to this "
                                       "caller\n")
    assert not target.exists()
    code, out, _ = run(capsys, filled, "export", "agent:ops:other",
                       "--as", "agent:ops:other", "--visibility", "self")
    assert code == 0 and "someone else's words" in out


def test_a_bad_format_is_one_sentence(filled: StateDir, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, filled, "export", KEY, "--format", "pdf")
    assert code == 2 and out == "" and err.count("\n") == 1 and "--format" in err


# --- reading in full: history -------------------------------------------------------------


def test_history_text_says_what_was_cut_and_full_shows_it(
        filled: StateDir, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, filled, "history", KEY)
    assert code == 0
    assert "… [cut: 2,014 more characters; --full to show]" in out
    assert "THE-LAST-WORDS" not in out
    code, out, _ = run(capsys, filled, "history", KEY, "--full", "--include-tools")
    assert code == 0 and "THE-LAST-WORDS" in out and "[cut:" not in out
    assert "← bash (failed): ImagePullBackOff\nexit code 1" in out  # its lines kept


def test_history_json_and_the_agents_answer_keep_their_caps(
        filled: StateDir, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, filled, "history", KEY, "--json")
    long = json.loads(out)["messages"][-1]["content"][0]["text"]
    assert len(long) == 4001 and long.endswith("…") and json.loads(out)["contentTruncated"]
    answer = sessions_history(filled, HistoryRequest(KEY), OPERATOR)
    assert answer.messages[-1]["content"][0]["text"] == long
    code, out, _ = run(capsys, filled, "history", KEY, "--json", "--full")
    assert json.loads(out)["messages"][-1]["content"][0]["text"] == LONG


# --- the browser's export dialog ----------------------------------------------------------


@pytest.mark.slow
async def test_the_browser_export_offers_html() -> None:
    from textual.widgets import Input

    from backscroll.tui.screens import ExportChoice, ExportScreen

    from .test_tui import Host

    host = Host(ExportScreen("agent:ops:session-1"))
    async with host.run_test() as pilot:
        path = host.screen.query_one("#export-path", Input)
        host.screen.query_one("#export-html").value = True
        await pilot.pause()
        assert path.value == "./agent-ops-session-1.html"
        await pilot.press("enter")
        assert host.answer == ExportChoice("html", "./agent-ops-session-1.html")


def test_writing_to_a_closed_standard_output_is_not_a_traceback(
        filled: StateDir, monkeypatch: pytest.MonkeyPatch) -> None:
    class Gone(io.StringIO):
        def write(self, _text: str) -> int:
            raise BrokenPipeError

    monkeypatch.setattr(sys, "stdout", Gone())
    assert main(["export", KEY, "--state-dir", str(filled.path)]) == 0


@pytest.mark.backends
def test_both_backends_export_alike_and_find_the_failed_calls(state: StateDir) -> None:
    """The export and the failed calls the conversation screen walks read storage through
    the role protocols: the same answers on SQLite and PostgreSQL."""
    from backscroll.core.conversation import conversation_outline, failed_tool_results

    store(state, KEY, conversation())
    page = export_conversation(state, KEY, OPERATOR, "html", include_tools=True)
    assert page.count('<details class="tool failed">') == 1 and SECRET not in page
    outline = conversation_outline(state, OPERATOR, KEY)
    assert outline.roles == ("user", "assistant", "toolResult", "assistant")
    assert failed_tool_results(state, OPERATOR, KEY) == [2]


def test_markdown_fences_hold_output_with_fences_of_its_own(state: StateDir) -> None:
    store(state, KEY, [
        {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "read",
                                           "arguments": {"path": "README.md"}}]},
        {"role": "toolResult", "toolName": "read", "content": [
            {"type": "text", "text": "# Title\n```sh\nmake\n```\nthe end"}]},
    ])
    exported = export_conversation(state, KEY, OPERATOR, "markdown")
    assert "````\n# Title\n```sh\nmake\n```\nthe end\n````" in exported


# --- the header's facts -------------------------------------------------------------------

def test_the_header_states_the_facts_exactly_in_both_pages(state: StateDir) -> None:
    store(state, KEY, [
        text("user", "write the deploy notes"),
        {"role": "assistant", "model": "claude-sonnet-4-5", "provider": "anthropic",
         "usage": {"input": 5210, "output": 1432, "cacheRead": 210544, "cacheWrite": None,
                   "cost": {"total": 0.12714}},
         "content": [{"type": "toolCall", "id": "w1", "name": "write",
                      "arguments": {"path": "notes/deploys.md", "content": "v2.22.0"}}]},
        {"role": "toolResult", "toolCallId": "w1", "toolName": "write", "isError": False,
         "content": [{"type": "text", "text": "written"}]},
        text("assistant", "Done."),
    ])
    first, last = (f"{iso(BASE_MS + n * 60_000)[:10]} {iso(BASE_MS + n * 60_000)[11:19]} UTC"
                   for n in (1, 4))
    expected = [("models", "claude-sonnet-4-5"), ("time", f"{first} to {last}"),
                ("tokens", "5,210 in · 1,432 out · 210,544 cache read · - cache write"),
                ("cost", "$0.1271"), ("files edited", "notes/deploys.md")]
    markdown = export_conversation(state, KEY, OPERATOR, "markdown")
    assert [f"- {name}: {value}" for name, value in expected] == [
        line for line in markdown.splitlines() if line.startswith("- ")]
    page = export_conversation(state, KEY, OPERATOR, "html")
    for name, value in expected:
        assert f"<dt>{name}</dt><dd>{value}</dd>" in page


def test_facts_nothing_recorded_are_left_out_of_the_header(filled: StateDir) -> None:
    markdown = export_conversation(filled, KEY, OPERATOR, "markdown")
    assert [line.split(":")[0] for line in markdown.splitlines() if line.startswith("- ")] == [
        "- time"]  # no model, tokens, cost or file recorded: no row saying 0
    assert "<dt>tokens</dt>" not in export_conversation(filled, KEY, OPERATOR, "html")
