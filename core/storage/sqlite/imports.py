"""Imports into one agent's database: sessions stored without indexing (SPEC 3), many to a
transaction."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Any, Iterator

from ...keys import normalize_key
from ..model import Imported, SessionMeta
from ..writeplan import ImportPlan, carry_out_import
from .driver import sqlite_errors
from .writes import Writes

# Events per transaction of an import (``importing``): a commit per session was a third of
# an import's time; a live writer waits for at most one group (~0.1 s).
IMPORT_GROUP_EVENTS = 4_000


class Imports(Writes):
    """``import_session`` and the groups it is called in."""

    _import_group: int | None = None  # events in the open import group (``importing``)

    @contextmanager
    def importing(self) -> Iterator[None]:
        """``import_session`` calls inside share transactions of about
        ``IMPORT_GROUP_EVENTS`` events; each call stays all-or-nothing (a savepoint), and
        what was imported before an error ends the block is committed."""
        if self._import_group is not None or self.conn.in_transaction:
            yield
            return
        self._import_group = 0
        try:
            yield
        finally:
            self._import_group = None
            if self.conn.in_transaction:
                with sqlite_errors(self.path):
                    self.conn.execute("COMMIT")

    @contextmanager
    def _import_unit(self, events: int) -> Iterator[sqlite3.Connection]:
        """One session's import: its own transaction, or a savepoint of the open group."""
        if self._import_group is None:
            with self.transaction() as conn:
                yield conn
            return
        with sqlite_errors(self.path):
            if not self.conn.in_transaction:
                self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("SAVEPOINT import_session")
            try:
                yield self.conn
            except BaseException:
                if self.conn.in_transaction:  # (an I/O error may have ended it already)
                    self.conn.execute("ROLLBACK TO import_session")
                    self.conn.execute("RELEASE import_session")
                raise
            self.conn.execute("RELEASE import_session")
            self._import_group += events
            if self._import_group >= IMPORT_GROUP_EVENTS:
                self.conn.execute("COMMIT")
                self._import_group = 0

    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None
    ) -> Imported:
        """Store already-validated event lines without indexing; return the key it is stored
        under and what was added.
        ``parsed`` may carry the lines' parsed events, to spare parsing them twice.

        Importing the same transcript again adds nothing: entries already stored are
        recognised by their id (id-less rows by their exact text). New events make the
        session dirty, so reconciliation picks it up.
        """
        key = normalize_key(meta.key)
        with self._import_unit(len(lines)):
            return carry_out_import(self, meta, key, lines, parsed)

    def _find_for_import(self, column: str, value: str,
                         host: str | None) -> tuple[int, str, int] | None:
        return self.conn.execute(
            f"SELECT pk, key, last_seq FROM sessions WHERE {column} = ?", (value,)
        ).fetchone()

    def _key_taken(self, key: str, host: str | None) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone() is not None

    def _create_for_import(self, meta: SessionMeta, clean: bool) -> tuple[int, str, int]:
        return self._create_session(meta, clean)[0], meta.key, 0

    def _seen(self, pk: int) -> tuple[set[str], set[str]]:
        ids = {r[0] for r in self.conn.execute(
            "SELECT entry_id FROM events WHERE session_pk = ? AND entry_id IS NOT NULL", (pk,))}
        bodies = {r[0] for r in self.conn.execute(
            "SELECT body FROM events WHERE session_pk = ? AND entry_id IS NULL", (pk,))}
        return ids, bodies

    def _store_events(self, pk: int, plan: ImportPlan, updated_at: int) -> None:
        self.conn.executemany(
            "INSERT INTO events (session_pk, seq, entry_id, kind, body) VALUES (?, ?, ?, ?, ?)",
            [(pk, e.seq, e.entry_id, e.kind, e.line) for e in plan.added],
        )
        self.conn.execute(
            "UPDATE sessions SET last_seq = ?, updated_at = max(updated_at, ?) WHERE pk = ?",
            (plan.last_seq, updated_at, pk),
        )
