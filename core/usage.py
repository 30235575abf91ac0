"""``backscroll usage``: tokens and cost summed by day, agent, project or model over a time
window (issue 26), across every agent database the caller may see (``fanout``), over the
sessions it may see (``visible_sessions``: the rule search and history apply).

The sums are of the usage rows the write path and rebuilds keep per (session, UTC day, model)
(core/facts.py), so a report reads no transcript. The window is whole UTC days: ``since``
and ``until`` name the days they fall on, both included. A number no message in a group
recorded stays None (unknown is not zero): a model whose messages record no cost has no cost.
"""

from __future__ import annotations

import time
from datetime import date, timedelta
from typing import Any, NamedTuple

from .errors import ValidationError
from .facts import NO_USAGE, Usage, utc_day
from .fanout import for_each_agent
from .redact import quoted, redact
from .state import StateDir
from .storage import SchemaBehind, UsageRow
from .timeparse import parse_time
from .visibility import Caller
from .visible_sessions import resolved, visible_sessions

BY = ("day", "agent", "project", "model")
DEFAULT_SINCE = "30d"
MAX_DAYS = 3660  # a window of at most ten years: a chart or a table of days stays readable
INDEXING_WARNING = ("some sessions are still being indexed: their usage is counted once "
                    "reconciliation has rebuilt them")


class UsageLine(NamedTuple):
    key: str | None  # the day, agent, project or model (both redacted); None: none named
    usage: Usage


class UsageReport(NamedTuple):
    since_day: str
    until_day: str
    by: str
    lines: list[UsageLine]
    total: Usage
    warnings: list[str]

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "since": self.since_day, "until": self.until_day, "by": self.by,
            "rows": [{self.by: line.key, **line.usage.as_json()} for line in self.lines],
            "total": self.total.as_json(),
        }
        if self.warnings:
            out["warning"] = " ".join(self.warnings)
        return out


def tokens(usage: Usage) -> int:
    """Every token a group used (in, out, cache read and written): what a chart draws."""
    return sum(n for n in usage[:4] if n is not None)


def window(since: str | None, until: str | None, now_ms: int | None = None) -> tuple[str, str]:
    """The UTC days ``since`` and ``until`` fall on (default: the last 30 days, through today)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    start = parse_time(since or DEFAULT_SINCE, now)
    end = parse_time(until, now)
    end = now if end is None else end
    assert start is not None
    if start < 0 or end < 0:
        raise ValidationError("a usage window starts after 1970")
    first, last = utc_day(start), utc_day(end)
    if first > last:
        raise ValidationError(f"the window ends ({last}) before it starts ({first}): give "
                              "--until after --since")
    if len(days_between(first, last, MAX_DAYS + 1)) > MAX_DAYS:
        raise ValidationError(f"a usage window is at most {MAX_DAYS:,} days long")
    return first, last


def days_between(first: str, last: str, at_most: int | None = None) -> list[str]:
    """Every UTC day from ``first`` through ``last`` (``YYYY-MM-DD``), at most ``at_most``."""
    day, end = date.fromisoformat(first), date.fromisoformat(last)
    out = []
    while day <= end and (at_most is None or len(out) < at_most):
        out.append(day.isoformat())
        day += timedelta(days=1)
    return out


def usage_report(state: StateDir, caller: Caller, since: str | None = None,
                 until: str | None = None, by: str = "day", now_ms: int | None = None
                 ) -> UsageReport:
    """Tokens and cost of the sessions ``caller`` may see, per ``by``, in the window."""
    if by not in BY:
        raise ValidationError(f"by must be one of {', '.join(BY)}, not {quoted(str(by), 40)}")
    first, last = window(since, until, now_ms)
    state.require()
    sums: dict[str | None, Usage] = {}
    warnings: list[str] = []
    indexing = False
    with resolved(state, caller) as who:  # the caller's database opened once

        def agent_usage(agent_id: str) -> tuple[list[UsageRow], bool]:
            with who.open(agent_id) as db, db.snapshot():
                visible = visible_sessions(db, caller)
                # pending: a *visible* session awaits reconciliation (as a search's
                # ``indexing``); another's would tell an agent caller it exists
                return db.usage(visible.as_filter(), first, last), visible.pending

        for agent_id, found, err in for_each_agent(state, agent_usage, caller=caller):
            if err is not None:
                if not isinstance(err, SchemaBehind):  # a writer upgrades it: indexing
                    warnings.append(f"Skipped an unreadable database: {err}")
                indexing = indexing or isinstance(err, SchemaBehind)
                continue
            assert found is not None
            rows, pending = found
            indexing = indexing or pending
            for row in rows:
                key = _key(by, agent_id, row)
                sums[key] = sums.get(key, NO_USAGE).plus(row.usage)
    if indexing:
        warnings.insert(0, INDEXING_WARNING)
    lines = [UsageLine(key, usage) for key, usage in sums.items()]
    if by == "day":
        lines.sort(key=lambda line: line.key or "")
    else:
        lines.sort(key=lambda line: (-tokens(line.usage), line.key or ""))
    total = NO_USAGE
    for line in lines:
        total = total.plus(line.usage)
    return UsageReport(first, last, by, lines, total, warnings)


def _key(by: str, agent_id: str, row: UsageRow) -> str | None:
    if by == "day":
        return row.day
    if by == "agent":
        return agent_id
    if by == "project":
        return redact(row.project) if row.project else None
    return redact(row.model) if row.model else None
