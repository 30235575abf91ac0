"""The facts of sessions and their usage per day (as ``storage/sqlite/facts.py``; schema
0008_session_facts)."""

from __future__ import annotations

from typing import Any, Iterable

from ...facts import TOKENS_MAX, Facts, Usage, UsageKey
from ..fact_rows import FACT_COLUMNS, TOKEN_COLUMNS, facts_row, facts_values, summed_usage
from ..model import SessionFilter, UsageRow
from .browsing import session_clause
from .reads import Reads

_FACT_VALUES = ", ".join(["%s"] * 13)
# A count summed in stops at TOKENS_MAX (core/facts.py), as ``Usage.plus`` does: two stored
# counts add within a bigint.
_USAGE_ADD = f"""INSERT INTO usage_days AS u (session_pk, day, model, input, output, cache_read,
    cache_write, cost) VALUES ({", ".join(["%s"] * 8)})
    ON CONFLICT (session_pk, day, model) DO UPDATE SET """ + ", ".join(
    f"{c} = CASE WHEN u.{c} IS NULL THEN excluded.{c} WHEN excluded.{c} IS NULL THEN u.{c} "
    f"ELSE LEAST(u.{c} + excluded.{c}, {TOKENS_MAX}) END" for c in TOKEN_COLUMNS) + """,
    cost = CASE WHEN u.cost IS NULL THEN excluded.cost
                WHEN excluded.cost IS NULL THEN u.cost ELSE u.cost + excluded.cost END"""
# A report's sums stop at TOKENS_MAX too (``sum`` of bigint is numeric: no overflow here;
# LEAST skips a NULL, so a count no row recorded is kept NULL by the CASE).
_USAGE_SUMS = ", ".join(f"CASE WHEN count(u.{c}) > 0 THEN LEAST(sum(u.{c}), {TOKENS_MAX}) END"
                        for c in TOKEN_COLUMNS)


class FactsStore(Reads):
    """Facts and usage of one agent's sessions."""

    def session_facts(self, pks: Iterable[int]) -> dict[int, Facts]:
        rows = self._all(f"SELECT session_pk, {FACT_COLUMNS} FROM session_facts "
                         "WHERE session_pk = ANY(%s::bigint[])", (list(pks),))
        return {int(row[0]): facts_row(row[1:]) for row in rows}

    def usage(self, sessions: SessionFilter, since_day: str | None,
              until_day: str | None) -> list[UsageRow]:
        params: dict[str, Any] = {"agent": self.agent_id}
        where = ["s.agent_id = %(agent)s", *session_clause(sessions, params)]
        if since_day is not None:
            where.append("u.day >= %(since)s")
            params["since"] = since_day
        if until_day is not None:
            where.append("u.day <= %(until)s")
            params["until"] = until_day
        rows = self._all(
            f"SELECT u.day, u.model, s.cwd, {_USAGE_SUMS}, sum(u.cost) "
            "FROM usage_days u JOIN sessions s "
            f"ON s.pk = u.session_pk WHERE {' AND '.join(where)} "
            'GROUP BY u.day, u.model, s.cwd ORDER BY u.day, u.model COLLATE "C", '
            's.cwd COLLATE "C"', params)
        return [UsageRow(day, model, cwd, summed_usage(sums)) for day, model, cwd, *sums in rows]

    # --- the write path's primitives (inside the caller's transaction)

    def _facts(self, pk: int) -> Facts | None:
        row = self.conn.execute(f"SELECT {FACT_COLUMNS} FROM session_facts "
                                "WHERE session_pk = %s", (pk,)).fetchone()
        return None if row is None else facts_row(row)

    def _save_facts(self, pk: int, facts: Facts) -> None:
        self.conn.execute(
            f"INSERT INTO session_facts (session_pk, {FACT_COLUMNS}) VALUES ({_FACT_VALUES}) "
            "ON CONFLICT (session_pk) DO UPDATE SET (" + FACT_COLUMNS + ") = (" +
            ", ".join(f"excluded.{c.strip()}" for c in FACT_COLUMNS.split(",")) + ")",
            facts_values(pk, facts))

    def _add_usage(self, pk: int, key: UsageKey, usage: Usage) -> None:
        self.conn.execute(_USAGE_ADD, (pk, *key, *usage))

    def replace_facts(self, batch: list[tuple[int, Facts | None, dict[UsageKey, Usage]]]
                      ) -> None:
        if not batch:
            return
        for table in ("usage_days", "session_facts"):
            self.conn.execute(f"DELETE FROM {table} WHERE session_pk = ANY(%s::bigint[])",
                              ([b[0] for b in batch],))
        for pk, facts, _rows in batch:
            if facts is not None:
                self._save_facts(pk, facts)
        values = [(pk, *key, *usage) for pk, _facts, rows in batch for key, usage in rows.items()]
        if values:
            self.conn.cursor().executemany(
                "INSERT INTO usage_days (session_pk, day, model, input, output, cache_read, "
                f"cache_write, cost) VALUES ({', '.join(['%s'] * 8)})", values)
