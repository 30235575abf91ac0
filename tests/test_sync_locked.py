"""A sync while another process holds an agent's SQLite database (a first sync's background
indexer): the sync says what it skipped and goes on, never fails as a whole; and the
reconciler builds a batch's rows without holding the database, so writers wait only for its
writes. SQLite's locking: PostgreSQL writers queue on row locks instead."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from backscroll.core import reconcile
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import sync_sources
from backscroll.core.state import StateDir
from backscroll.core.storage.sqlite import driver

from .fakehome import append, build_home, claude_user, hits

# Holds the database's write lock (as a reconciler's batch does) until its stdin closes.
HOLDER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("held", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""


@pytest.fixture
def state(tmp_path: Path) -> StateDir:
    return StateDir(tmp_path / "state", database_url="")


@pytest.mark.slow  # a second interpreter
def test_a_sync_while_another_process_holds_the_database_says_so_and_goes_on(
        state: StateDir, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = build_home(Path.home(), data_dir)
    sync_sources(state)
    append(home["short"], claude_user(home["short"], "cc-late", "the lockedheron note"))
    (home["project"] / "tool_heavy.jsonl").unlink()  # vanished: marked, a write too
    monkeypatch.setattr(driver, "BUSY_TIMEOUT_S", 0.2)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(state.db_path("claude-code"))],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        report = sync_sources(state)  # raised "... stayed locked by another process; try again"
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(30)
    locked = [p for p in report.problems if "stayed locked by another process" in p]
    assert [p.split(": ")[1] for p in locked] == ["not taken in this time",
                                                  "not recorded this time"]
    assert locked[0].startswith(str(home["short"]))
    assert report.events == 0 and report.gone == 0
    again = sync_sources(state)  # the database free: what was skipped is taken in
    assert (again.problems, again.events, again.gone) == ([], 1, 1)
    reconcile_all(state)
    assert [m for _, m in hits(state, "lockedheron")] == ["cc-late"]


def test_a_reconciler_builds_rows_without_holding_the_database(
        state: StateDir, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a batch's rows are built, another connection can write at once."""
    build_home(Path.home(), data_dir)
    sync_sources(state)
    path = state.db_path("claude-code")
    built = reconcile._rows
    writes: list[str] = []

    def rows_while_another_writes(db, claim):
        other = sqlite3.connect(path, timeout=0, isolation_level=None)
        try:
            other.execute("BEGIN IMMEDIATE")  # raises "database is locked" if it is held
            other.execute("ROLLBACK")
            writes.append(claim.key)
        finally:
            other.close()
        return built(db, claim)

    monkeypatch.setattr(reconcile, "_rows", rows_while_another_writes)
    stats = reconcile.reconcile_agent(state, "claude-code")
    assert stats.sessions == len(writes) > 0 and stats.abandoned == 0
