"""The ``sources``, ``sync`` and ``watch`` verbs: call the core's live sources, print for
people (Rich) or as JSON. Their arguments are in ``sources_args.py`` (which loads nothing);
kept apart from ``commands.py`` / ``render.py`` because the three verbs share their printing
(a sync summary, problems on stderr)."""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from backscroll.core.reconcile import start_background
from backscroll.core.redact import redact
from backscroll.core.state import StateDir

from ..text import ago, shown
from .render import console, errors, print_table, said

if TYPE_CHECKING:  # the live sources are imported when one of these verbs runs
    from backscroll.core.sources import SyncReport
    from backscroll.core.sources.detect import Source
    from backscroll.core.sources.listing import SourceStatus
    from backscroll.core.sources.settings import SourceEntry

PROGRESS_FROM = 20  # files to read before a progress bar is worth showing


def cmd_sources(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.sources import add_source, remove_source
    from backscroll.core.sources.listing import sources_status
    from backscroll.core.sources.settings import resolve_path

    if args.action == "add":
        entry = add_source(state.path, args.kind, args.path, args.agent)
        return _done(args, {"added": _entry_json(entry)},
                     f"added {entry.kind} source {entry.path}: `backscroll sync` takes it in")
    if args.action == "remove":
        text = remove_source(state.path, args.path)
        return _done(args, {"removed": redact(str(resolve_path(args.path, state.path)))}, text)
    statuses = sources_status(state)
    if args.json:
        print(json.dumps({"sources": [s.as_json() for s in statuses]}, ensure_ascii=False))
    else:
        _print_sources(statuses)
    return 0


def cmd_sync(state: StateDir, args: argparse.Namespace) -> int:
    from backscroll.core.sources import sync_sources

    if args.json:
        report = sync_sources(state)
    else:
        report = _sync_with_progress(state)
    for problem in report.problems:
        errors.print(f"backscroll: {said(problem)}", highlight=False)
    for agent in sorted(report.pending):
        start_background(state, agent, "process")
    if args.json:
        print(json.dumps(report.as_json(), ensure_ascii=False))
        return 0
    for note in report.notes:
        console.print(f"  [dim]{said(note)}[/]")
    console.print(said(report.summary()))
    if report.pending:
        console.print("[dim]indexing the new sessions in the background "
                      "(`backscroll status` shows how far)[/]")
    return 0


def _stop_on_signals() -> None:
    """ctrl+c and SIGTERM (a service manager's stop) end ``watch`` cleanly, even when it was
    started with SIGINT ignored (a shell's background job inherits that, and Python then
    installs no KeyboardInterrupt of its own)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def cmd_watch(state: StateDir, args: argparse.Namespace) -> int:
    """Follow the sources in a thread; this thread waits for ctrl+c and stops it cleanly."""
    from backscroll.core.sources.watch import follow_sources

    stop = threading.Event()
    printer = _WatchPrinter(args.json)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            follow_sources(state, printer.synced, stop, on_watching=printer.watching,
                           reconcile=lambda agent: start_background(state, agent, "thread"),
                           polling=args.poll)
        except BaseException as err:  # noqa: BLE001 - handed to the main thread
            failure.append(err)
            stop.set()

    worker = threading.Thread(target=run, name="backscroll-watch", daemon=True)
    _stop_on_signals()
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.25)
    except KeyboardInterrupt:
        stop.set()
        worker.join(30)
        if not args.json:
            console.print("[dim]stopped watching[/]")
        return 0
    if failure:
        raise failure[0]
    return 0


class _WatchPrinter:
    """One line per sync that took something in; each problem once."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.shown: set[str] = set()

    def watching(self, sources: list[Source]) -> None:
        if self.as_json:
            print(json.dumps({"watching": [redact(s.root) for s in sources]}), flush=True)
            return
        if not sources:
            console.print("[yellow]no sources to watch yet[/]: waiting for one to appear "
                          "(see `backscroll sources`); ctrl+c stops")
            return
        listed = ", ".join(f"{s.kind} {shown(s.root)}" for s in sources)
        console.print(f"watching {len(sources)} source{'s' if len(sources) != 1 else ''} "
                      f"[dim]({escape(listed)}); ctrl+c stops[/]")

    def synced(self, report: SyncReport) -> None:
        for problem in report.problems:
            if problem not in self.shown:
                self.shown.add(problem)
                errors.print(f"backscroll: {said(problem)}", highlight=False)
        for note in report.notes:
            if note not in self.shown:
                self.shown.add(note)
                if not self.as_json:
                    console.print(f"  [dim]{said(note)}[/]")
        if not report.events:
            return
        if self.as_json:
            print(json.dumps({"time": int(time.time() * 1000), **report.as_json()},
                             ensure_ascii=False), flush=True)
            return
        stamp = time.strftime("%H:%M:%S")
        sessions = ", ".join(sorted(report.sessions)[:3]) + (
            " …" if len(report.sessions) > 3 else "")
        console.print(f"[dim]{stamp}[/] {said(report.summary().split(':')[0])} "
                      f"[dim]({said(sessions)})[/]")


def _sync_with_progress(state: StateDir) -> SyncReport:
    """``sync_sources`` under a Rich progress bar, shown once enough files are to be read."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from backscroll.core.sources import sync_sources

    bar = Progress(TextColumn("syncing"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("files  [dim]{task.fields[file]}"), TimeElapsedColumn(),
                   console=console, transient=True)
    task: list[Any] = []

    def update(done: int, total: int, file: str) -> None:
        if not task and total >= PROGRESS_FROM and console.is_terminal:
            bar.start()
            task.append(bar.add_task("", total=total, file=""))
        if task:
            bar.update(task[0], completed=done, total=total, file=said(file[-60:]))

    try:
        return sync_sources(state, on_progress=update)
    finally:
        if task:  # stopping a bar never started prints an empty line
            bar.stop()


def _print_sources(statuses: list[SourceStatus]) -> None:
    from rich.table import Table

    table = Table(title="sources", title_justify="left")
    for column in ("kind", "path", "agent", "files", "sessions", "last sync"):
        table.add_column(column, justify="right" if column in ("files", "sessions") else "left",
                         overflow="fold", no_wrap=column != "path")
    for status in statuses:
        source = status.source
        dim = "" if status.present else "[dim]"
        table.add_row(
            f"{dim}{source.kind}",
            "[dim](none: add a folder)" if source.origin == "opt-in" else
            f"{dim}{said(source.root)}"
            + ("" if source.origin == "detected" else " [dim](config)"),
            escape(source.agent or ("per folder" if source.per_folder else source.agent_for())),
            f"{status.files:,}",
            f"{status.sessions:,}",
            ago(status.last_sync, time.time) if status.last_sync else "never",
        )
    print_table(table)
    for status in statuses:
        for note in status.notes:
            console.print(f"  [yellow]•[/] {said(note)}")
    unread = sum(s.unread for s in statuses)
    if unread:
        console.print(f"  {unread:,} file{'s' if unread != 1 else ''} new or changed since the "
                      "last sync: `backscroll sync` takes them in")


def _done(args: argparse.Namespace, as_json: dict[str, Any], text: str) -> int:
    if args.json:
        print(json.dumps(as_json, ensure_ascii=False))
    else:
        console.print(said(text))
    return 0


def _entry_json(entry: SourceEntry) -> dict[str, Any]:
    return {"kind": entry.kind, "path": redact(str(entry.path)), "agent": entry.agent}
