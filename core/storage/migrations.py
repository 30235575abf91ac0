"""Migrations by name, the rule both backends share (the SQL of each step is the backend's).

A backend's migrations are an ordered list of named steps, ``("0005_session_summaries", script)``;
a writer applies, in list order, every step whose name the database has not recorded, and
records each name (a ``migrations(name, applied_at)`` table) in the same transaction. Two
branches that each add a step therefore merge without renumbering: a database from either
branch has the other's step left to apply. Before names, each backend numbered its steps by
hand (``PRAGMA user_version`` in SQLite, ``meta.schema_version`` in PostgreSQL): a database with
no table of names but version ``N`` has applied the first ``N`` steps, and the first writer
records those names without running them again. The number is still kept, as the count of steps
applied, so that an older backscroll that knows only numbers still refuses a newer database.

A recorded name this code does not know is a newer backscroll's step: the database is refused in
one sentence. A reader (which never writes) reads a database as it is when every step it lacks
adds indexes only (``index_only``): those change no answer, only speed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

Step = tuple[str, str]  # (name, script)


class Recorded(NamedTuple):
    """What a database says of its migrations: its version number and, once it has a table of
    names, the names (``None``: a database from before names, or one with no schema yet). A
    named tuple, as ``model.py``'s records: a search's start does not load ``dataclasses``."""

    version: int
    names: tuple[str, ...] | None


def applied(steps: Sequence[Step], recorded: Recorded, numbered: int) -> list[str]:
    """The names ``recorded`` has applied: its table's, or for a database from before names the
    first ``version`` of the ``numbered`` steps that were numbered by hand."""
    if recorded.names is not None:
        return list(recorded.names)
    return [name for name, _ in steps[: min(recorded.version, numbered)]]


def unknown(steps: Sequence[Step], recorded: Recorded, numbered: int) -> list[str]:
    """Recorded names this code does not know (a newer backscroll's steps); a database from
    before names whose number is past the numbered steps counts as one such."""
    if recorded.names is None:
        return [f"number {recorded.version}"] if recorded.version > numbered else []
    known = {name for name, _ in steps}
    return [name for name in recorded.names if name not in known]


def pending(steps: Sequence[Step], done: Sequence[str]) -> list[Step]:
    """The steps still to apply, in list order."""
    seen = set(done)
    return [step for step in steps if step[0] not in seen]


def readable(steps: Sequence[Step], done: Sequence[str], index_only: frozenset[str]) -> bool:
    """Whether code with ``steps`` reads a database that applied ``done`` as it is: every step
    it lacks adds indexes only."""
    return all(name in index_only for name, _ in pending(steps, done))


def check_names(steps: Sequence[Step], index_only: frozenset[str]) -> None:
    """Names are unique, and an index-only name is a step's (a mistake found at import)."""
    names = [name for name, _ in steps]
    assert len(set(names)) == len(names), "two migrations have the same name"
    assert index_only <= set(names), "an index-only name that is no migration's"
