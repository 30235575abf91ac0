"""``verify``: prove that every clean session's index rows are what its active branch yields,
that its stored branch messages (what a conversation's outline reads) are that branch, that
its stored facts and usage rows are what its whole log folds to (core/facts.py), and that the
totals searches read are the sums of the sessions' index states.

The expected rows are rebuilt in memory from the stored events with the same functions the
write path and reconciliation use, then compared with what the index holds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .facts import session_facts
from .fanout import for_each_agent
from .indexer import MAX_ROWID_DRIFT_MS, ROWID_SHIFT, indexes_session, session_rows
from .redact import redact
from .state import StateDir
from .storage import AgentReader, SessionFilter
from .tool_index import ToolRow, tool_rows_for_branch
from .transcript import shown_messages


@dataclass
class VerifyReport:
    agents: int = 0
    sessions_checked: int = 0
    sessions_skipped: int = 0  # dirty / claimed / older indexer version: not searchable
    rows_checked: int = 0
    problems: list[str] = field(default_factory=list)
    databases_unusable: int = 0  # of the problems, databases unreadable or read-only as a whole

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "agents": self.agents,
            "sessionsChecked": self.sessions_checked,
            "sessionsSkipped": self.sessions_skipped,
            "rowsChecked": self.rows_checked,
            "problems": [redact(p) for p in self.problems],  # they quote keys and ids
        }


def verify_state(state: StateDir) -> VerifyReport:
    """Check every agent; an unreadable or read-only database is one problem, and the other
    agents are checked all the same."""
    report = VerifyReport()

    def check(agent_id: str) -> None:
        with state.open(agent_id) as db, db.snapshot():
            verify_agent(db, report)

    for agent_id, _, err in for_each_agent(state, check):
        report.agents += 1
        if err is not None:  # one unreadable database: the others are checked
            report.problems.append(f"{agent_id}: {err}")
            report.databases_unusable += 1
            continue
        read_only = state.unwritable(agent_id)
        if read_only:
            report.problems.append(f"{agent_id}: {read_only}")
            report.databases_unusable += 1
    return report


def verify_agent(db: AgentReader, report: VerifyReport) -> None:
    for problem in db.integrity_problems():
        report.problems.append(f"{db.agent_id}: the database is damaged ({problem})")
    no_session, no_index = db.orphan_index_rows()
    if no_session:
        report.problems.append(f"{db.agent_id}: {no_session} index rows belong to no session")
    if no_index:
        report.problems.append(f"{db.agent_id}: {no_index} text rows have no index row")
    report.problems += [f"{db.agent_id}: {p}" for p in db.totals_problems()]
    for session in db.sessions():
        if not session.searchable:
            report.sessions_skipped += 1
            continue
        report.sessions_checked += 1
        events = db.events(session.pk)
        expected, branch = session_rows(session.key, events, session.created_at)
        if not _facts_hold(db, session.pk, session.key, session.created_at, events):
            report.problems.append(f"{session.key}: its stored facts or usage are not what "
                                   "its transcript records")
        shown = db.branch_messages(session.pk, session.last_seq)
        if shown is not None and [tuple(row) for row in shown] != shown_messages(branch.path):
            report.problems.append(
                f"{session.key}: its stored branch messages are not its active branch")
        stored = db.index_rows(session.pk)
        report.rows_checked += len(stored)
        want = Counter(expected)
        have = Counter(row for _rowid, row in stored)
        missing = want - have
        extra = have - want
        if missing or extra:
            ids = sorted({r.entry_id for r in missing} | {r.entry_id for r in extra})
            report.problems.append(
                f"{session.key}: {sum(missing.values())} rows missing, "
                f"{sum(extra.values())} unexpected (entries {', '.join(ids[:5])}"
                f"{', ...' if len(ids) > 5 else ''})"
            )
        report.problems += [f"{session.key}: {p}" for p in db.index_state_problems(session.pk)]
        tools = Counter(tool_rows_for_branch(branch, session.key, session.created_at))
        stored_tools = Counter(ToolRow(*row[2:]) for row in db.session_tools(session.pk))
        if tools != stored_tools:
            report.problems.append(
                f"{session.key}: its tool-call rows are not its active branch's calls "
                f"({sum((tools - stored_tools).values())} missing, "
                f"{sum((stored_tools - tools).values())} unexpected)")
        misplaced = [
            row.entry_id
            for rowid, row in stored
            if not 0 <= (rowid >> ROWID_SHIFT) - row.ts <= MAX_ROWID_DRIFT_MS
        ]
        if misplaced:
            report.problems.append(
                f"{session.key}: {len(misplaced)} rows out of time order ({misplaced[0]}, ...)"
            )


def _facts_hold(db: AgentReader, pk: int, key: str, created_at: int,
                events: list[tuple[int, dict]]) -> bool:
    """The session's stored facts and usage rows are what its whole log folds to
    (``facts.session_facts``, the rule the write path and rebuilds apply)."""
    facts, usage = session_facts(events, created_at, indexes_session(key))
    stored = {(row.day, row.model): row.usage
              for row in db.usage(SessionFilter([pk]), None, None)}
    return db.session_facts([pk]).get(pk) == facts and stored == usage
