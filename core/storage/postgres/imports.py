"""Imports on PostgreSQL (SPEC 3), as ``storage/sqlite/imports.py``: sessions stored without
indexing, each its own transaction; ``writeplan.carry_out_import`` decides, these
primitives carry it out. A new session whose index was built as it was read (a bulk import)
is published in the transaction that stores it."""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from typing import Any, Iterator

from ...indexer import BuiltIndex
from ...keys import normalize_key
from ..model import Claim, Imported, SessionMeta, now_ms
from ..writeplan import ImportPlan, carry_out_import
from .claims import Claims
from .driver import Conflict, retried


class Imports(Claims):
    """``import_session`` and its primitives."""

    _created: int | None = None  # the session ``import_session`` just created

    @contextmanager
    def importing(self) -> Iterator[None]:
        """Each ``import_session`` is its own transaction here (a server's commit is cheap
        next to the round trips of the import itself)."""
        yield

    @retried
    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None,
        index: BuiltIndex | None = None,
    ) -> Imported:
        """As the SQLite backend's (``writeplan.carry_out_import``), one transaction each,
        the ``index`` of a session it creates published in it (``_publish_built``)."""
        with self._tx():
            self._created = None
            imported = carry_out_import(self, meta, normalize_key(meta.key), lines, parsed)
            if index is not None and self._created is not None and imported.events == len(lines) > 0:
                self._publish_built(self._created, index)
            return imported

    def _publish_built(self, pk: int, index: BuiltIndex) -> None:
        """The session claimed by this import and published as reconciliation publishes a
        rebuild (SQLite's ``_index_built``; rows here name no tree, so none can be
        incomplete)."""
        owner = f"import:{uuid.uuid4().hex}"
        found = self.conn.execute(
            "SELECT pk, key, session_id, created_at, last_seq FROM sessions WHERE pk = %s", (pk,)
        ).fetchone()
        claim = Claim(int(found[0]), found[1], found[2], int(found[3]), int(found[4]))
        self.conn.execute(
            "UPDATE sessions SET state = 'claimed', claim_owner = %s, claim_expires = %s "
            "WHERE pk = %s", (owner, now_ms() + 60_000, pk))
        self.publish([(claim, index.for_key(claim.key), index.leaf, "; ".join(index.problems),
                       index.shown)], owner)

    def _find_for_import(self, column: str, value: str,
                         host: str | None) -> tuple[int, str, int] | None:
        found = self._locked(column, value, host)
        return (found[0], found[1], found[4]) if found is not None else None

    def _key_taken(self, key: str, host: str | None) -> bool:
        return self._locked("key", key, host, legacy=False) is not None

    def _create_for_import(self, meta: SessionMeta, clean: bool) -> tuple[int, str, int]:
        found = self._create_session(meta, clean)
        if found is None:
            raise Conflict(f"session {meta.key} was created meanwhile by another writer")
        self._created = found[0]
        return found[0], found[1], found[4]

    def _seen(self, pk: int) -> tuple[set[str], set[str]]:
        ids = {r[0] for r in self.conn.execute(
            "SELECT entry_id FROM events WHERE session_pk = %s AND entry_id IS NOT NULL", (pk,))}
        bodies = {r[0] for r in self.conn.execute(
            "SELECT body FROM events WHERE session_pk = %s AND entry_id IS NULL", (pk,))}
        return ids, bodies

    def _store_events(self, pk: int, plan: ImportPlan, updated_at: int) -> None:
        with self.conn.cursor() as cursor, cursor.copy(
            "COPY events (session_pk, seq, entry_id, kind, body) FROM STDIN"
        ) as copy:
            for e in plan.added:
                copy.write_row((pk, e.seq, e.entry_id, e.kind, e.line))
        self.conn.execute(
            "UPDATE sessions SET last_seq = %s, updated_at = greatest(updated_at, %s), "
            "messages = messages + %s WHERE pk = %s",
            (plan.last_seq, updated_at, plan.messages, pk),
        )
