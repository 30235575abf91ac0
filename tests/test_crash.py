"""The fault campaign in CI: each operation (append, import, reconciliation, delete) killed
with SIGKILL at random points; after each kill nothing is half-written, lost or doubled
(``tests/faults.py`` says exactly what is checked). ``scripts/fault_campaign.py`` runs the
same campaign with hundreds of kills."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .faults import OPERATIONS, run_campaign

KILLS_PER_OPERATION = 3


@pytest.mark.slow
def test_sigkill_at_random_points_of_every_operation_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    tally = run_campaign(tmp_path, KILLS_PER_OPERATION, seed=20261202)
    assert tally.failures == {}
    assert dict(tally.kills) == {name: KILLS_PER_OPERATION for name in OPERATIONS}


def test_a_database_appears_whole_or_not_at_all(tmp_path: Path, monkeypatch) -> None:
    """Creating an agent's database (WAL, every migration) happens under a temporary name;
    a crash in the middle leaves no file that would read as a broken database."""
    from backscroll.core.state import StateDir
    from backscroll.core.storage.sqlite import driver

    state = StateDir(tmp_path / "state")

    def crash(*args, **kwargs) -> None:
        raise KeyboardInterrupt  # as a kill would stop it, between two statements

    monkeypatch.setattr(driver, "migrate", crash)
    with pytest.raises(KeyboardInterrupt):
        state.open("main", write=True)
    folder = state.db_path("main").parent
    assert state.agents() == [] and sorted(p.name for p in folder.iterdir()) == []
    monkeypatch.undo()
    stale = folder / "sessions.sqlite.new-1-2"
    stale.write_bytes(b"left by a crash")
    os.utime(stale, (0, 0))
    with state.open("main", write=True) as db:
        assert db.sessions() == []
    assert state.agents() == ["main"] and sorted(p.name for p in folder.iterdir()) == [
        "sessions.sqlite"]
