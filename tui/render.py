"""Rich renderings of CLI answers, for people. Transcript text is always escaped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from backscroll.core.importers import ImportReport
from backscroll.core.verify import VerifyReport

console = Console(highlight=False)
errors = Console(stderr=True, highlight=False)


def info(text: str) -> None:
    console.print(escape(text))


def append_summary(key: str, counts: dict[str, int], refused: int) -> None:
    line = (
        f"{key}: stored {counts['stored']} events, indexed {counts['indexed']}"
        + (f", {counts['dirty']} marked the session for reindexing" if counts["dirty"] else "")
        + (f", refused {refused}" if refused else "")
    )
    console.print(escape(line))


def import_summary(kind: str, path: Path, report: ImportReport) -> None:
    console.print(
        f"imported [bold]{report.sessions}[/] sessions ({report.events} new events) "
        f"from {escape(str(path))}; they are searchable once reconciled "
        "(the next search starts it, or run [bold]backscroll reindex[/])"
    )
    for note in report.notes:
        console.print(f"  [dim]{escape(note)}[/]")
    if report.skipped:
        console.print(f"  [yellow]{len(report.skipped)} lines skipped[/] (listed on stderr)")


def status(path: Path, agents: list[dict[str, Any]]) -> None:
    if not agents:
        console.print(
            f"{escape(str(path))} has no agents yet: import some with "
            "[bold]backscroll import openclaw PATH[/] or try [bold]backscroll demo[/]"
        )
        return
    table = Table(title=f"backscroll state in {escape(str(path))}", title_justify="left")
    for column in ("agent", "sessions", "messages", "indexed rows", "dirty"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for agent in agents:
        dirty = agent["dirty"]
        table.add_row(
            escape(agent["agent"]),
            f"{agent['sessions']:,}",
            f"{agent['messages']:,}",
            f"{agent['indexed']:,}",
            f"[yellow]{dirty:,}[/]" if dirty else "0",
        )
    console.print(table)


def verify(report: VerifyReport) -> None:
    summary = (
        f"{report.sessions_checked} clean sessions, {report.rows_checked} index rows checked "
        f"in {report.agents} agents ({report.sessions_skipped} awaiting reindex skipped)"
    )
    if report.ok:
        console.print(f"[green]ok[/]: {summary}")
        return
    console.print(f"[red]index differs from transcripts[/]: {summary}")
    for problem in report.problems[:50]:
        console.print(f"  {escape(problem)}")
    if len(report.problems) > 50:
        console.print(f"  ... and {len(report.problems) - 50} more")
