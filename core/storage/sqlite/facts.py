"""The facts of sessions and their usage per day (core/facts.py; schema 0012): the reads a
list and ``backscroll usage`` make, and the primitives the write path and a rebuild write
them with (the fold itself is ``writeplan``'s and ``facts``')."""

from __future__ import annotations

import json
from typing import Iterable

from ...facts import TOKENS_MAX, Facts, Usage, UsageKey
from ..fact_rows import FACT_COLUMNS, TOKEN_COLUMNS, facts_row, facts_values, summed_usage
from ..model import SessionFilter, UsageRow
from .browsing import session_clause
from .reads import Reads

_USAGE_COLUMNS = "input, output, cache_read, cache_write, cost"
_USAGE_KEY = "session_pk = ? AND day = ? AND model = ?"
# A report's sums: ``total`` (a double, exact below 2**53) where ``sum`` would fail on an
# integer overflow; NULL when no row recorded the count.
_USAGE_SUMS = ", ".join(f"CASE WHEN count(u.{c}) > 0 THEN min(total(u.{c}), {TOKENS_MAX}) END"
                        for c in TOKEN_COLUMNS)


class FactsStore(Reads):
    """Facts and usage of one agent's sessions."""

    def session_facts(self, pks: Iterable[int]) -> dict[int, Facts]:
        rows = self._all(f"SELECT session_pk, {FACT_COLUMNS} FROM session_facts "
                         "WHERE session_pk IN (SELECT value FROM json_each(?))",
                         (json.dumps(list(pks)),))
        return {row[0]: facts_row(row[1:]) for row in rows}

    def usage(self, sessions: SessionFilter, since_day: str | None,
              until_day: str | None) -> list[UsageRow]:
        """The usage of the filter's sessions summed per (day, model, project), days from
        ``since_day`` through ``until_day`` (``YYYY-MM-DD``, UTC)."""
        where, params = session_clause(sessions, "u.session_pk")
        if since_day is not None:
            where.append("u.day >= ?")
            params.append(since_day)
        if until_day is not None:
            where.append("u.day <= ?")
            params.append(until_day)
        rows = self._all(
            f"SELECT u.day, u.model, s.cwd, {_USAGE_SUMS}, sum(u.cost) "
            "FROM usage_days u JOIN sessions s "
            f"ON s.pk = u.session_pk {'WHERE ' + ' AND '.join(where) if where else ''} "
            "GROUP BY u.day, u.model, s.cwd ORDER BY u.day, u.model, s.cwd", params)
        return [UsageRow(day, model, cwd, summed_usage(sums)) for day, model, cwd, *sums in rows]

    # --- the write path's primitives (inside the caller's transaction)

    def _facts(self, pk: int) -> Facts | None:
        row = self.conn.execute(f"SELECT {FACT_COLUMNS} FROM session_facts "
                                "WHERE session_pk = ?", (pk,)).fetchone()
        return None if row is None else facts_row(row)

    # The append's writes are OR FAIL and never an upsert: without a statement journal FTS5
    # keeps the transaction's pending index rows pending (``Writes._insert_row``).
    def _save_facts(self, pk: int, facts: Facts) -> None:
        values = facts_values(pk, facts)
        changed = self.conn.execute(
            "UPDATE OR FAIL session_facts SET (" + FACT_COLUMNS + ") = "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE session_pk = ?", (*values[1:], pk))
        if changed.rowcount == 0:
            self.conn.execute(f"INSERT OR FAIL INTO session_facts (session_pk, {FACT_COLUMNS}) "
                              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values)

    def _add_usage(self, pk: int, key: UsageKey, usage: Usage) -> None:
        found = self.conn.execute(f"SELECT {_USAGE_COLUMNS} FROM usage_days WHERE {_USAGE_KEY}",
                                  (pk, *key)).fetchone()
        if found is None:
            self.conn.execute(f"INSERT OR FAIL INTO usage_days (session_pk, day, model, "
                              f"{_USAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                              (pk, *key, *usage))
        else:
            self.conn.execute(f"UPDATE OR FAIL usage_days SET ({_USAGE_COLUMNS}) = "
                              f"(?, ?, ?, ?, ?) WHERE {_USAGE_KEY}",
                              (*Usage(*found).plus(usage), pk, *key))

    def replace_facts(self, batch: list[tuple[int, Facts | None, dict[UsageKey, Usage]]]
                      ) -> None:
        """A rebuild's facts and usage rows of sessions ``(pk, facts, rows)``, over what
        they held (facts None: the session has no row)."""
        if not batch:
            return
        pks = json.dumps([b[0] for b in batch])
        for table in ("usage_days", "session_facts"):
            self.conn.execute(f"DELETE FROM {table} WHERE session_pk IN "
                              "(SELECT value FROM json_each(?))", (pks,))
        for pk, facts, _rows in batch:
            if facts is not None:
                self._save_facts(pk, facts)
        self.conn.executemany(
            "INSERT INTO usage_days (session_pk, day, model, input, output, cache_read, "
            "cache_write, cost) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(pk, *key, *usage) for pk, _facts, rows in batch for key, usage in rows.items()])
