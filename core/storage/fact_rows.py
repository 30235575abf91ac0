"""How a session's facts are laid out in a row (``session_facts``, schema: SQLite 0012,
PostgreSQL 0008): one layout for both backends, so both store and read the same."""

from __future__ import annotations

import json
from typing import Any

from ..facts import Facts, Usage

FACT_COLUMNS = ("models, input, output, cache_read, cache_write, cost, first_at, last_at, "
                "tool_calls, failed_calls, files, files_capped")
TOKEN_COLUMNS = ("input", "output", "cache_read", "cache_write")


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def facts_row(row: tuple) -> Facts:
    """A row of ``FACT_COLUMNS`` as ``Facts`` (PostgreSQL gives a bigint sum as a Decimal,
    SQLite a flag as 0 or 1)."""
    models, i, o, cr, cw, cost, first, last, calls, failed, files, capped = row
    return Facts(names(models), Usage(_int(i), _int(o), _int(cr), _int(cw), cost),
                 _int(first), _int(last), int(calls), int(failed), names(files), bool(capped))


def names(stored: str) -> tuple[str, ...]:
    """A JSON array of names (models, files) as stored; most sessions' files are none."""
    return () if stored == "[]" else tuple(json.loads(stored))


def facts_values(pk: int, facts: Facts) -> tuple:
    """The row of a session's facts, ``session_pk`` then ``FACT_COLUMNS``."""
    return (pk, json.dumps(list(facts.models), ensure_ascii=False), *facts.usage,
            facts.first_at, facts.last_at, facts.tool_calls, facts.failed_calls,
            json.dumps(list(facts.files), ensure_ascii=False), facts.files_capped)


def summed_usage(sums: tuple | list) -> Usage:
    """A usage report's four token sums and cost as read (a sum may come as a float or a
    Decimal) as ``Usage``."""
    return Usage(*(_int(n) for n in sums[:4]), None if sums[4] is None else float(sums[4]))
