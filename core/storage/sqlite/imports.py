"""Imports into one agent's database: sessions stored without indexing (SPEC 3), many to a
transaction; a new session whose index was built as it was read (a bulk import) is indexed
in the transaction that stores it."""

from __future__ import annotations

import json
import sqlite3
import uuid
from contextlib import contextmanager
from typing import Any, Iterator, NamedTuple

from ...indexer import BuiltIndex
from ...keys import normalize_key
from ..interface import PublishItem
from ..model import Claim, Imported, SessionMeta, now_ms
from ..writeplan import ImportPlan, carry_out_import
from .claims import Claims
from .driver import sqlite_errors

# Events per transaction of an import (``importing``): a commit per session was a third of
# an import's time; a live writer waits for at most one group (~0.1 s).
IMPORT_GROUP_EVENTS = 4_000


class _Built(NamedTuple):
    """A session this transaction created from a whole transcript, and its index."""

    pk: int
    key: str
    seq: int  # its last event
    index: BuiltIndex


class Imports(Claims):
    """``import_session`` and the groups it is called in."""

    _import_group: int | None = None  # events in the open import group (``importing``)
    _created: int | None = None  # the session ``import_session`` just created
    _built: list[_Built] | None = None  # sessions to index before the next commit

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
                self._commit_group()

    @contextmanager
    def _import_unit(self, events: int) -> Iterator[sqlite3.Connection]:
        """One session's import: its own transaction, or a savepoint of the open group."""
        if self._import_group is None:
            with self.transaction() as conn:
                yield conn
                self._index_built()
            return
        with sqlite_errors(self.path):
            if not self.conn.in_transaction:
                self.conn.execute("BEGIN IMMEDIATE")
            self.conn.execute("SAVEPOINT import_session")
            built = len(self._built or [])
            try:
                yield self.conn
            except BaseException:
                self._built = (self._built or [])[:built]
                if self.conn.in_transaction:  # (an I/O error may have ended it already)
                    self.conn.execute("ROLLBACK TO import_session")
                    self.conn.execute("RELEASE import_session")
                raise
            self.conn.execute("RELEASE import_session")
            self._import_group += events
        if self._import_group >= IMPORT_GROUP_EVENTS:
            self._commit_group()
            self._import_group = 0

    def _commit_group(self) -> None:
        """Index the group's new sessions, then commit (their events stay whatever happens
        to their index: a session not indexed here stays dirty, for reconciliation)."""
        with sqlite_errors(self.path):
            try:
                self._index_built()
            finally:
                if self.conn.in_transaction:
                    self.conn.execute("COMMIT")

    def _index_built(self) -> None:
        """Publish the index of the sessions created by this transaction from a built index
        (``import_session``'s ``index``), as reconciliation publishes a rebuild: claimed by
        this import, then ``publish`` (rows, branch messages, summary, tree as the links
        stand now), all or none of them. A session whose links name a session not stored
        yet (a spawner later in the import) is left dirty: its rows would name an incomplete
        tree, and reconciliation builds them once the import is done."""
        built, self._built = self._built or [], None
        if not built or not self.conn.in_transaction:  # (an error ended the transaction)
            return
        owner = f"import:{uuid.uuid4().hex}"
        self.conn.execute("SAVEPOINT import_index")
        try:
            claims = self._claim_built(built, owner)
            index = {b.pk: b.index for b in built}
            items: list[PublishItem] = [
                (claim, index[claim.session_pk].for_key(claim.key), index[claim.session_pk].leaf,
                 "; ".join(index[claim.session_pk].problems), index[claim.session_pk].shown)
                for claim in claims]
            self.publish(items, owner)
            self.conn.execute(  # (a session written to again in this transaction)
                "UPDATE index_state SET state = 'dirty', claim_owner = NULL, "
                "claim_expires = NULL WHERE state = 'claimed' AND claim_owner = ?", (owner,))
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK TO import_index")
                self.conn.execute("RELEASE import_index")
            raise
        self.conn.execute("RELEASE import_index")

    def _claim_built(self, built: list[_Built], owner: str) -> list[Claim]:
        """Claims of the built sessions still as they were stored, whose trees are whole."""
        found = {row[0]: row for row in self.conn.execute(
            "SELECT pk, key, session_id, created_at, last_seq FROM sessions "
            "WHERE pk IN (SELECT value FROM json_each(?))",
            (json.dumps([b.pk for b in built]),))}
        claims = []
        for b in built:
            row = found.get(b.pk)
            missing: list[str] = []
            if row is None or row[1] != b.key or row[4] != b.seq:
                continue
            self._tree(row[1], missing)
            if not missing:
                claims.append(Claim(*row))
        self.conn.execute(
            "UPDATE index_state SET state = 'claimed', claim_owner = ?, claim_expires = ? "
            "WHERE session_pk IN (SELECT value FROM json_each(?))",
            (owner, now_ms() + 60_000, json.dumps([c.session_pk for c in claims])))
        return claims

    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None,
        index: BuiltIndex | None = None,
    ) -> Imported:
        """Store already-validated event lines without indexing; return the key it is stored
        under and what was added.
        ``parsed`` may carry the lines' parsed events, to spare parsing them twice.

        Importing the same transcript again adds nothing: entries already stored are
        recognised by their id (id-less rows by their exact text). New events make the
        session dirty, so reconciliation picks it up. ``index``: the lines' index, built as
        they were read (``indexer.build_index``, the lines numbered from 1); a session this
        call creates from them is indexed before the transaction commits (``_index_built``).
        """
        key = normalize_key(meta.key)
        with self._import_unit(len(lines)):
            self._created = None
            imported = carry_out_import(self, meta, key, lines, parsed)
            if index is not None and self._created is not None and imported.events == len(lines) > 0:
                built = _Built(self._created, imported.key, len(lines), index)
                self._built = (self._built or []) + [built]
            return imported

    def _find_for_import(self, column: str, value: str,
                         host: str | None) -> tuple[int, str, int] | None:
        return self.conn.execute(
            f"SELECT pk, key, last_seq FROM sessions WHERE {column} = ?", (value,)
        ).fetchone()

    def _key_taken(self, key: str, host: str | None) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone() is not None

    def _create_for_import(self, meta: SessionMeta, clean: bool) -> tuple[int, str, int]:
        self._created = self._create_session(meta, clean)[0]
        return self._created, meta.key, 0

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
