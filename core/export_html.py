"""A conversation export as one self-contained HTML page: inline CSS, no script, no network
reference of any kind (a Content-Security-Policy of ``default-src 'none'`` says so to the
browser too), readable offline and printable.

A transcript is hostile input: every text that reaches the page (the key, ids, names, the
messages, tool arguments and results) goes through ``html.escape``; the page holds no
attribute built from transcript text but escaped ones. Tool calls are folded
(``<details>``), each with a one-line summary (tool, status, the start of its arguments) and
its result inside, paired by ``tool_pairs``; thinking is folded too.
"""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from typing import Any

from .facts import Facts
from .history import HistoryResponse
from .redact import redact
from .tool_pairs import FAILED, arguments_preview, pair_tool_calls, result_block, status_of

CSS = """
:root { color-scheme: light dark; --fg: #1d1f21; --bg: #fdfdfc; --muted: #6a6f75;
  --line: #d9dcdf; --user: #1f7a3a; --assistant: #7a2f8f; --fail: #b3261e; --ok: #2e7d32;
  --code: #f3f4f5; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --bg: #16181a; --muted: #9aa0a6;
  --line: #33373b; --user: #6fcf8a; --assistant: #d59ce6; --fail: #ff8a80; --ok: #81c784;
  --code: #1f2226; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 60rem; padding: 1.5rem; color: var(--fg);
  background: var(--bg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.25rem; margin: 0 0 .5rem; word-break: break-all; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .1rem 1rem;
  margin: 0 0 .75rem; color: var(--muted); font-size: .9rem; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; word-break: break-all; }
p.note { color: var(--muted); font-size: .85rem; margin: 0 0 1rem; }
section.msg { border-top: 1px solid var(--line); padding: .6rem 0; }
.head { font-size: .85rem; color: var(--muted); margin-bottom: .25rem; }
.role { font-weight: 700; margin-right: .5rem; }
.user .role { color: var(--user); } .assistant .role { color: var(--assistant); }
.tool-message .role { color: var(--muted); }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin: .25rem 0; }
.placeholder, .context { color: var(--muted); font-style: italic; }
details { margin: .3rem 0; border: 1px solid var(--line); border-radius: 4px; }
details > summary { cursor: pointer; padding: .15rem .5rem; font-size: .9rem;
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
details[open] > summary { border-bottom: 1px solid var(--line); }
details > .body { padding: .25rem .5rem; }
details.thinking > summary { color: var(--muted); font-style: italic; }
details.thinking .text { color: var(--muted); font-style: italic; }
.tool-name { font-weight: 700; font-family: ui-monospace, Menlo, Consolas, monospace; }
.status { font-size: .8rem; padding: 0 .35rem; border-radius: 3px; margin: 0 .35rem; }
.status.ok { color: var(--ok); border: 1px solid var(--ok); }
.status.failed { color: var(--fail); border: 1px solid var(--fail); font-weight: 700; }
.status.no-result { color: var(--muted); border: 1px solid var(--line); }
details.failed { border-color: var(--fail); }
.args-preview { font-family: ui-monospace, Menlo, Consolas, monospace; color: var(--muted); }
.label { font-size: .8rem; color: var(--muted); margin-top: .25rem; }
pre { margin: .2rem 0 .4rem; padding: .4rem .5rem; background: var(--code);
  white-space: pre-wrap; overflow-wrap: anywhere; font: 13px/1.4 ui-monospace, Menlo,
  Consolas, monospace; }
@media print { body { max-width: none; } }
"""


def header_facts(facts: Facts | None) -> list[tuple[str, str]]:
    """The session's facts as both export formats state them in their header: exact numbers
    (an export is a record for a ticket, not a glance), the first and last message's UTC
    times, model names and file paths redacted; a token count no message recorded is ``-``,
    a fact nothing recorded is left out. Empty for a session not indexed yet (no facts)."""
    if facts is None:
        return []
    rows: list[tuple[str, str]] = []
    if facts.models:
        rows.append(("models", ", ".join(redact(model) for model in facts.models)))
    if facts.first_at is not None and facts.last_at is not None:
        rows.append(("time", f"{_when(facts.first_at)[1]} to {_when(facts.last_at)[1]}"))
    usage = facts.usage
    if usage.recorded:
        counts = zip(usage[:4], ("in", "out", "cache read", "cache write"))
        rows.append(("tokens", " · ".join(f"{'-' if n is None else f'{n:,}'} {what}"
                                          for n, what in counts)))
    if usage.cost is not None:
        rows.append(("cost", f"${usage.cost:,.4f}"))
    if facts.files:
        rows.append(("files edited", ", ".join(redact(path) for path in facts.files)
                     + (", and more" if facts.files_capped else "")))
    return rows


def _when(ms: int) -> tuple[str, str]:
    moment = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return moment.isoformat(timespec="seconds"), f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def _result_text(result: dict[str, Any]) -> str:
    return "\n".join(str(b.get("text") or b.get("placeholder") or "")
                     for b in result.get("content", []))


def _status_span(status: str) -> str:
    return f'<span class="status {status.replace(" ", "-")}">{escape(status)}</span>'


def _tool_details(call: dict[str, Any] | None, result: dict[str, Any] | None) -> list[str]:
    """One folded tool call (or a result nothing asked for, ``call`` None)."""
    status = status_of(result)
    name = (call or {}).get("name") or (result or {}).get("name") or "tool"
    summary = [f'<span class="tool-name">{escape(str(name))}</span>', _status_span(status)]
    if call is not None:
        summary.append(f'<span class="args-preview">'
                       f'{escape(arguments_preview(str(call.get("arguments", ""))))}</span>')
    else:
        summary.append('<span class="args-preview">(a result; its call is not shown)</span>')
    css = "tool failed" if status == FAILED else "tool"
    out = [f'<details class="{css}"><summary>{" ".join(summary)}</summary><div class="body">']
    if call is not None:
        out.append('<div class="label">arguments</div>')
        out.append(f"<pre>{escape(str(call.get('arguments', '')))}</pre>")
    if result is not None:
        out.append(f'<div class="label">result{" (error)" if result.get("isError") else ""}'
                   "</div>")
        out.append(f"<pre>{escape(_result_text(result))}</pre>")
    out.append("</div></details>")
    return out


def _block(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [f'<div class="text">{escape(str(block.get("text", "")))}</div>']
    if kind == "thinking":
        return ['<details class="thinking"><summary>thinking</summary><div class="body">'
                f'<div class="text">{escape(str(block.get("thinking", "")))}</div>'
                "</div></details>"]
    if kind == "image":
        return [f'<div class="placeholder">{escape(str(block.get("placeholder", "")))}</div>']
    return []


def render_html(history: HistoryResponse) -> str:
    """The page for a history answer (already redacted, its fields as whole as asked)."""
    messages = history.messages
    pairs = pair_tool_calls(messages)
    calls = sum(1 for m in messages for b in m.get("content", []) if b.get("type") == "toolCall")
    failed = sum(1 for m in messages if (r := result_block(m)) is not None and r.get("isError"))
    key = redact(history.session_key)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        # nothing may load: no script, no font, no image, no request of any kind
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="referrer" content="no-referrer">',
        f"<title>{escape(key)} · backscroll export</title>",
        f"<style>{CSS}</style>",
        "</head><body>",
        f"<header><h1>{escape(key)}</h1><dl class=\"facts\">",
        f"<dt>session</dt><dd>{escape(history.session_id)}</dd>",
    ]
    if history.agent:
        out.append(f"<dt>agent</dt><dd>{escape(history.agent)}</dd>")
    out.append(f"<dt>source</dt><dd>{escape(history.source)}</dd>")
    if history.host:
        out.append(f"<dt>host</dt><dd>{escape(redact(history.host))}</dd>")
    for name, value in header_facts(history.facts):
        out.append(f"<dt>{name}</dt><dd>{escape(value)}</dd>")
    said = sum(1 for m in messages if m.get("role") in ("user", "assistant"))
    out.append(f"<dt>messages</dt><dd>{said:,}</dd>")
    if calls or failed:
        out.append(f"<dt>tool calls</dt><dd>{calls:,} ({failed:,} failed)</dd>")
    if history.truncated:
        out.append("<dt>cut</dt><dd>older or newer messages are left out</dd>")
    out.append("</dl>")
    out.append('<p class="note">Exported by backscroll, redacted: secrets are replaced by '
               "markers. Tool calls and thinking are folded: click a line to open it.</p>")
    out.append("</header><main>")
    for n, message in enumerate(messages):
        if n in pairs.answered:
            continue  # shown inside the call it answers
        role = str(message.get("role", ""))
        result = result_block(message)
        css = role if role in ("user", "assistant") else "tool-message"
        stamp, shown_time = _when(int(message.get("timestamp") or 0))
        out.append(f'<section class="msg {css}" id="m{n}">')
        out.append(f'<div class="head"><span class="role">{escape(role)}</span>'
                   f'<time datetime="{stamp}">{shown_time}</time> · '
                   f'<span class="id">{escape(str(message.get("id") or ""))}</span></div>')
        if message.get("context"):
            out.append('<div class="context">added by the agent\'s runtime, not typed by '
                       "the user</div>")
        if result is not None:
            out.extend(_tool_details(None, result))
        for b, block in enumerate(message.get("content", [])):
            if block.get("type") == "toolCall":
                out.extend(_tool_details(block, pairs.result_of(messages, n, b)))
            else:
                out.extend(_block(block))
        out.append("</section>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"
