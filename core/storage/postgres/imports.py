"""Imports on PostgreSQL (SPEC 3), as ``storage/sqlite/imports.py``: sessions stored without
indexing, each its own transaction; ``writeplan.carry_out_import`` decides, these
primitives carry it out."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from ...keys import normalize_key
from ..model import Imported, SessionMeta
from ..writeplan import ImportPlan, carry_out_import
from .driver import Conflict, retried
from .writes import Writes


class Imports(Writes):
    """``import_session`` and its primitives."""

    @contextmanager
    def importing(self) -> Iterator[None]:
        """Each ``import_session`` is its own transaction here (a server's commit is cheap
        next to the round trips of the import itself)."""
        yield

    @retried
    def import_session(
        self, meta: SessionMeta, lines: list[str], parsed: list[dict[str, Any]] | None = None
    ) -> Imported:
        """As the SQLite backend's (``writeplan.carry_out_import``), one transaction each."""
        with self._tx():
            return carry_out_import(self, meta, normalize_key(meta.key), lines, parsed)

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
