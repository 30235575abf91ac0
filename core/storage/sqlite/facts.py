"""The facts of sessions and their usage per day (core/facts.py; schema 0012): the reads a
list and ``backscroll usage`` make, and the primitives the write path and a rebuild write
them with (the fold itself is ``writeplan``'s and ``facts``')."""

from __future__ import annotations

import json
from typing import Iterable

from ...facts import Facts, Usage, UsageKey
from ..model import SessionFilter, UsageRow
from .browsing import session_clause
from .reads import Reads

_FACT_COLUMNS = ("models, input, output, cache_read, cache_write, cost, first_at, last_at, "
                 "tool_calls, failed_calls, files, files_capped")
_USAGE_COLUMNS = "input, output, cache_read, cache_write, cost"
_USAGE_KEY = "session_pk = ? AND day = ? AND model = ?"


def facts_row(row: tuple) -> Facts:
    """A row of ``_FACT_COLUMNS`` as ``Facts``."""
    models, i, o, cr, cw, cost, first, last, calls, failed, files, capped = row
    return Facts(_names(models), Usage(i, o, cr, cw, cost), first, last, calls,
                 failed, _names(files), bool(capped))


def _names(stored: str) -> tuple[str, ...]:
    """A JSON array of names (models, files) as stored; most sessions' files are none."""
    return () if stored == "[]" else tuple(json.loads(stored))


def _facts_values(pk: int, facts: Facts) -> tuple:
    return (pk, json.dumps(list(facts.models), ensure_ascii=False), *facts.usage,
            facts.first_at, facts.last_at, facts.tool_calls, facts.failed_calls,
            json.dumps(list(facts.files), ensure_ascii=False), int(facts.files_capped))


class FactsStore(Reads):
    """Facts and usage of one agent's sessions."""

    def session_facts(self, pks: Iterable[int]) -> dict[int, Facts]:
        rows = self._all(f"SELECT session_pk, {_FACT_COLUMNS} FROM session_facts "
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
            "SELECT u.day, u.model, s.cwd, sum(u.input), sum(u.output), sum(u.cache_read), "
            "sum(u.cache_write), sum(u.cost) FROM usage_days u JOIN sessions s "
            f"ON s.pk = u.session_pk {'WHERE ' + ' AND '.join(where) if where else ''} "
            "GROUP BY u.day, u.model, s.cwd ORDER BY u.day, u.model, s.cwd", params)
        return [UsageRow(day, model, cwd, Usage(*sums)) for day, model, cwd, *sums in rows]

    # --- the write path's primitives (inside the caller's transaction)

    def _facts(self, pk: int) -> Facts | None:
        row = self.conn.execute(f"SELECT {_FACT_COLUMNS} FROM session_facts "
                                "WHERE session_pk = ?", (pk,)).fetchone()
        return None if row is None else facts_row(row)

    # The append's writes are OR FAIL and never an upsert: without a statement journal FTS5
    # keeps the transaction's pending index rows pending (``Writes._insert_row``).
    def _save_facts(self, pk: int, facts: Facts) -> None:
        values = _facts_values(pk, facts)
        changed = self.conn.execute(
            "UPDATE OR FAIL session_facts SET (" + _FACT_COLUMNS + ") = "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE session_pk = ?", (*values[1:], pk))
        if changed.rowcount == 0:
            self.conn.execute(f"INSERT OR FAIL INTO session_facts (session_pk, {_FACT_COLUMNS}) "
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
