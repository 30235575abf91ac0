"""Rich renderings of CLI answers, for people. Transcript text is always escaped."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from backscroll.core.importers import ImportReport
from backscroll.core.ingest import AppendReport
from backscroll.core.redact import redact
from backscroll.core.status import StateStatus
from backscroll.core.verify import VerifyReport

from ..text import ago, highlighted, plural, printable, shown, utc

UNWRAPPED_WIDTH = 100_000  # the width of output that is not a terminal: no line is broken


class _Console(Console):
    """A terminal's width on a terminal. Output that is not one (a pipe, a file, a program
    reading it) gets its lines whole, as long as they are, instead of Rich's 80 columns (or
    the width of whatever terminal stdin happens to be), unless ``COLUMNS`` says a width."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal and "COLUMNS" not in self._environ:
            return ConsoleDimensions(UNWRAPPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


# No emoji codes: a key such as agent:x:main would print as agent❌main. A problem on stderr
# is one line whatever its length (soft wrap: the terminal folds it, Rich does not break it).
console = _Console(highlight=False, emoji=False)
errors = Console(stderr=True, highlight=False, emoji=False, soft_wrap=True)


def said(text: object) -> str:
    """A name or a sentence that names them, as Rich markup: as ``shown`` shows it (redacted,
    one line, control characters visible; a file name can hold an escape sequence), then
    escaped."""
    return escape(shown(text))


def _reader_gone() -> None:
    """Standard output closed (``| head -1``): Rich would exit 1; end as the JSON output does,
    quietly with exit 0 (``cli.main`` catches the BrokenPipeError)."""
    console.quiet = True
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the final flush goes nowhere
    raise BrokenPipeError


console.on_broken_pipe = _reader_gone  # type: ignore[method-assign]


FOLDED_COLUMN_WIDTH = 16  # a column that folds (a path) still needs this much to be read


def print_table(table: Table) -> None:
    """The table, or on a terminal too narrow for its columns (Rich would squeeze some to
    nothing) each row as ``column: value`` lines, so every value is still there."""
    from rich.measure import Measurement

    options = console.options.update_width(10_000)
    needed = 3 * len(table.columns) + 1  # a border and two spaces of padding per column
    for column in table.columns:
        widest = max(Measurement.get(console, options, cell).minimum
                     for cell in (column.header, *column.cells))
        needed += min(widest, FOLDED_COLUMN_WIDTH) if column.overflow == "fold" else widest
    if needed <= console.width:
        console.print(table)
        return
    if table.title:
        console.print(table.title)
    for row in zip(*(column.cells for column in table.columns)):
        console.print()
        for column, cell in zip(table.columns, row):
            console.print(f"[dim]{column.header}:[/] ", cell, sep="", overflow="fold")


def info(text: str) -> None:
    console.print(said(text))


def append_summary(report: AppendReport) -> None:
    line = (
        f"{shown(report.key)}: stored {plural(report.stored, 'event')}, indexed {report.indexed:,}"
        + (f", {report.dirty} marked the session for reindexing" if report.dirty else "")
        + (f", refused {len(report.refused)}" if report.refused else "")
    )
    console.print(escape(line))


def import_summary(kind: str, path: Path, report: ImportReport) -> None:
    line = (f"imported [bold]{plural(report.sessions, 'session')}[/] "
            f"({plural(report.events, 'new event')}) from {said(path)}")
    if report.events:
        line += ("; they are searchable once reconciled (the next search starts it, or run "
                 "[bold]backscroll reindex[/])")
    console.print(line)
    for note in report.notes:
        console.print(f"  [dim]{said(note)}[/]")
    if report.skipped:
        console.print(f"  [yellow]{len(report.skipped)} lines skipped[/] (listed on stderr)")


def status(status: StateStatus) -> None:
    if not status.agents:
        console.print(
            f"{said(status.backend)} has no agents yet: import some with "
            "[bold]backscroll import openclaw PATH[/] or try [bold]backscroll demo[/]"
        )
        return
    table = Table(title=f"backscroll storage: {said(status.backend)} (this host: "
                  f"{said(status.host)})", title_justify="left")
    table.add_column("agent")
    table.add_column("state", no_wrap=True)  # a short word; the sentence follows the table
    for column in ("sessions", "messages", "indexed rows", "to reindex"):
        table.add_column(column, justify="right")
    table.add_column("reconcile")
    for agent in status.agents:
        progress = agent.progress
        state = {"ok": "ok", "older schema": "[yellow]older schema[/]"}.get(
            agent.state, f"[red]{agent.state}[/]"
        )
        if agent.state in ("unreadable", "older schema"):
            table.add_row(escape(agent.agent), state, "-", "-", "-", "-", "-")  # unknown
            continue
        if progress.running:
            reconcile = (
                f"[yellow]running[/] {progress.sessions_done}/{progress.sessions_total} sessions, "
                f"{progress.messages_done:,} messages, {progress.rate:,.0f}/s"
            )
        else:
            reconcile = "idle"
        table.add_row(
            escape(agent.agent),
            state,
            f"{agent.sessions:,}",
            f"{agent.messages:,}",
            f"{agent.indexed:,}",
            f"[yellow]{agent.dirty:,}[/]" if agent.dirty else "0",
            reconcile,
        )
    print_table(table)
    for agent in status.agents:
        if agent.error:
            console.print(f"  {escape(agent.agent)}: {said(agent.error)}")


def usage(report: Any) -> None:
    """``backscroll usage``: one row per day, agent, project or model, then the total."""
    from ..amounts import cost_text, tokens_text

    table = Table(title=f"usage {report.since_day} .. {report.until_day} (UTC days)",
                  title_justify="left")
    table.add_column(report.by, overflow="fold")
    for column in ("in", "out", "cache read", "cache write", "cost"):
        table.add_column(column, justify="right", no_wrap=True)

    def cells(usage: Any) -> list[str]:
        return [*(tokens_text(n) for n in usage[:4]), cost_text(usage.cost)]

    for line in report.lines:
        name = said(line.key) if line.key is not None else "[dim](none)[/]"
        table.add_row(name, *cells(line.usage))
    if report.lines:
        table.add_row("[bold]total[/]", *(f"[bold]{c}[/]" for c in cells(report.total)))
        print_table(table)
    else:
        console.print(f"no usage recorded from {report.since_day} through {report.until_day}")
    for warning in report.warnings:
        console.print(f"[yellow]{said(warning)}[/]")


def verify(report: VerifyReport) -> None:
    summary = (
        f"{report.sessions_checked} clean sessions, {report.rows_checked} index rows checked "
        f"in {report.agents} agents ({report.sessions_skipped} awaiting reindex skipped)"
    )
    if report.ok:
        console.print(f"[green]ok[/]: {summary}")
        return
    differs = len(report.problems) > report.databases_unusable
    headline = "index differs from transcripts" if differs else "not every database could be checked"
    console.print(f"[red]{headline}[/]: {summary}")
    for problem in report.problems[:50]:
        console.print(f"  {said(problem)}")
    if len(report.problems) > 50:
        console.print(f"  ... and {len(report.problems) - 50} more")


def print_opener(key: str, message_id: str, caller: Any, host: str | None = None,
                 tools: bool = False) -> None:
    """``open: <the command>``, then a blank line. Soft-wrapped: a terminal folds a long one,
    Rich breaks no line in it, so what is copied is one command."""
    console.print(opener(key, message_id, caller, host, tools), soft_wrap=True)
    console.print()


def opener(key: str, message_id: str, caller: Any, host: str | None = None,
           tools: bool = False) -> Text:
    """The command that opens a hit's conversation at the hit, as the same caller (an agent
    caller's ``--as`` and policy kept: the operator's view may differ), of the hit's host
    when the answer spans several (``host``), with tools for a tool call's message."""
    words = ["backscroll", "history", redact(key), "--message-id", message_id]
    if host is not None:
        words += ["--host", host]
    if tools:
        words.append("--include-tools")
    if not caller.is_operator:
        words += ["--as", caller.key]
        words += (["--sandboxed"] if caller.policy.clamped
                  else ["--visibility", caller.policy.visibility])
    return Text("open: " + " ".join(shlex.quote(shown(word)) for word in words), style="dim")


def search(request: Any, response: Any, caller: Any) -> None:
    from rich.text import Text

    if not response.results:
        _no_results(request, caller)
    several = len({result.host for result in response.results}) > 1
    for result in response.results:
        head = Text()
        head.append(shown(result.session_key), style="bold cyan")
        if several:  # a team server's answer from several hosts: whose session each is
            head.append(f" on {shown(result.host or '(unknown host)')}", style="cyan")
        head.append(f"  {ago(result.timestamp, time.time)}  ", style="dim")
        head.append(result.role, style="green" if result.role == "user" else "magenta")
        head.append(f"  {shown(result.message_id)}", style="dim")
        console.print(head)
        console.print(highlighted(result.excerpt, result.highlights, one_line=False))
        print_opener(result.session_key, result.message_id, caller,
                     result.host if several else None)
    _search_tail(response, caller, "result")


def conversations(request: Any, grouped: Any, caller: Any) -> None:
    """``search --group``: a conversation per result, its title, hits and best hit."""
    from rich.text import Text

    if not grouped.conversations:
        _no_results(request, caller)
    several = len({found.session.host for found in grouped.conversations}) > 1
    for found in grouped.conversations:
        head = Text()
        head.append(shown(found.session.key), style="bold cyan")
        if several:
            head.append(f" on {shown(found.session.host or '(unknown host)')}", style="cyan")
        head.append(f"  {found.hits:,} hit{'' if found.hits == 1 else 's'} · "
                    f"{ago(found.session.last_activity, time.time)}", style="dim")
        console.print(head)
        if found.session.display_title:
            console.print(Text(printable(found.session.display_title, one_line=True),
                               style="bold", no_wrap=True, overflow="ellipsis"))
        if len(found.words) > 1:  # why it matched: each word's messages
            console.print(Text("  " + " · ".join(f"{printable(w.word, one_line=True)} {w.hits:,}"
                                                 for w in found.words), style="dim"))
        result = found.result
        console.print(highlighted(result.excerpt, result.highlights, one_line=False))
        print_opener(found.session.key, result.message_id, caller,
                     found.session.host if several else None)
    _search_tail(grouped.response, caller, "conversation")


def _no_results(request: Any, caller: Any) -> None:
    console.print(
        f"no results for [bold]{said(request.query)}[/] as "
        f"{said(caller.describe())}"
    )


def _search_tail(response: Any, caller: Any, what: str) -> None:
    from rich.text import Text

    tail = f"{plural(len(response.results), what)} as {shown(caller.describe())}"
    if response.truncated:
        tail += " (more matched: raise --limit or narrow the query)"
    if response.ranked_window:
        tail += f"; ranked among the newest {response.ranked_window:,} matches"
    if response.searched_since is not None:
        tail += f"; only messages since {ago(response.searched_since, time.time)} were searched"
    console.print(Text(tail, style="dim"))
    if response.indexing:
        errors.print("[yellow]indexing in progress: results may be incomplete; retry soon[/]")
    for problem in response.unreadable:
        errors.print(f"[yellow]skipped an unreadable database: {said(problem)}[/]")
    for problem in response.read_only:
        errors.print(f"[yellow]{said(problem)}[/]")


def history(response: Any, anchor: str | None = None, full: bool = False) -> None:
    from rich.text import Text

    from ..amounts import facts_summary

    console.print(
        Text(f"{shown(response.session_key)}  ({shown(response.session_id)})", style="bold cyan")
    )
    console.print(Text(facts_summary(response.facts), style="dim"))
    if response.has_more:
        console.print(Text("… older messages not shown", style="dim"))
    for message in response.messages:
        mark = "▶ " if anchor and message["id"] in (anchor, redact(anchor)) else "  "
        head = Text(mark)
        head.append(message["role"], style="green" if message["role"] == "user" else "magenta")
        head.append(f"  {utc(message['timestamp'], seconds=True)} · "
                    f"{ago(message['timestamp'], time.time)}  {shown(message['id'])}", style="dim")
        console.print(head)
        for block in message["content"]:
            console.print(Text(printable(_block_text(block)), style=_block_style(block)))
        console.print()
    if response.has_newer:
        console.print(Text("… newer messages not shown", style="dim"))
    if response.content_truncated and not full:
        console.print(Text("some texts are cut (marked …): --full shows them whole",
                           style="dim"))


def _block_text(block: dict[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return block["text"]
    if kind == "thinking":
        return f"(thinking) {block['thinking']}"
    if kind == "image":
        return block["placeholder"]
    if kind == "toolCall":
        return f"→ {block['name']}({block['arguments']})"
    if kind == "toolResult":
        inner = "\n".join(_block_text(b) for b in block.get("content", []))
        status = "failed" if block.get("isError") else "ok"
        return f"← {block.get('name') or 'tool'} ({status}): {inner}"
    return ""


def _block_style(block: dict[str, Any]) -> str:
    return {"thinking": "italic dim", "toolCall": "yellow", "toolResult": "yellow dim"}.get(
        block.get("type", ""), ""
    )


def reindex_with_progress(state: Any, reconcile_all: Any) -> list[Any]:
    """Run ``reconcile_all`` under a Rich progress bar fed by its progress callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("[bold]{task.fields[agent]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("sessions  {task.fields[messages]:,} messages  {task.fields[rate]:,.0f}/s"),
        TimeElapsedColumn(),
    )
    tasks: dict[str, int] = {}
    with Progress(*columns, console=console, transient=False) as bar:

        def update(agent: str, progress: Any) -> None:
            total = max(progress.sessions_total, progress.sessions_done)
            if agent not in tasks:
                if not total:  # nothing to do here: no bar that reads "0/1", as if one failed
                    return
                tasks[agent] = bar.add_task("", agent=agent, messages=0, rate=0.0, total=total)
            bar.update(
                tasks[agent],
                completed=progress.sessions_done,
                total=max(total, 1),
                messages=progress.messages_done,
                rate=progress.rate,
            )

        return reconcile_all(state, on_progress=update)


def push_with_progress(source: Any, target: Any, push_state: Any) -> Any:
    """Run ``push_state`` under a Rich progress bar (sessions copied)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("[bold]push"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("sessions  {task.fields[events]:,} events added"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("", total=None, events=0)

        def update(done: int, total: int, report: Any) -> None:
            bar.update(task, completed=done, total=max(total, 1), events=report.events)

        return push_state(source, target, on_progress=update)


def push_summary(summary: dict[str, Any]) -> None:
    pushed = summary["pushed"]
    line = (
        f"pushed {pushed['sessions']:,} sessions of {len(pushed['agents'])} agents to "
        f"{summary['backend']}: {pushed['sessionsChanged']:,} had new events "
        f"({pushed['events']:,} events added)"
    )
    indexed = summary.get("indexed")
    if indexed:
        line += f"; indexed {indexed['sessions']:,} sessions ({indexed['messages']:,} messages)"
        if indexed["busy"]:
            line += f"; a reconciler on the server is already running for {', '.join(indexed['busy'])}"
    console.print(escape(line))


def reindex_summary(summary: dict[str, Any]) -> None:
    line = f"reindexed {summary['sessions']:,} sessions ({summary['messages']:,} messages)"
    if summary["abandoned"]:
        line += (
            f"; {summary['abandoned']} rebuilds abandoned after concurrent writes (retried later)"
        )
    if summary["busy"]:
        line += f"; another reconciler is already running for {', '.join(summary['busy'])}"
    if summary["failed"]:
        line += f"; could not reindex {', '.join(f['agent'] for f in summary['failed'])} (above)"
    console.print(escape(line))
