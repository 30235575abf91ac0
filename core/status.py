"""What a state dir holds and how far reconciliation has come: read by ``status`` and the
browser's status bar (any process can read another's progress).

Each agent's database has a state: ``ok``; ``older schema`` (written by an older backscroll:
readable once the next writer upgrades it, not a fault); ``read-only`` (readable, but nothing
new can be stored or indexed); ``unreadable`` (corrupt, newer schema, not a backscroll
database, locked). The last two are *broken*: ``backscroll status`` exits 1 when one is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .fanout import for_each_agent
from .keys import is_incognito
from .redact import redact
from .state import StateDir
from .storage import IDLE, Progress, SchemaBehind

BROKEN = ("read-only", "unreadable")


@dataclass(frozen=True)
class AgentStatus:
    agent: str
    sessions: int
    messages: int
    indexed: int
    dirty: int
    never_indexed: int
    progress: Progress
    error: str | None = None  # the one sentence that explains a state other than ok
    state: str = "ok"  # ok | older schema | read-only | unreadable
    incognito: int = 0  # of ``sessions``, incognito ones: stored, never listed nor indexed

    @property
    def broken(self) -> bool:
        return self.state in BROKEN

    @property
    def needs_reconcile(self) -> bool:
        """Sessions wait for a rebuild, or the database waits for a writer to upgrade it
        (reconciliation, a writer, does both)."""
        return (self.dirty > 0 and not self.error) or self.state == "older schema"

    def as_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "state": self.state,
            "sessions": self.sessions,
            "messages": self.messages,
            "indexed": self.indexed,
            "dirty": self.dirty,
            "neverIndexed": self.never_indexed,
            "reconcile": self.progress.as_json(),
            **({"error": redact(self.error)} if self.error else {}),
        }


@dataclass(frozen=True)
class StateStatus:
    path: str
    agents: list[AgentStatus] = field(default_factory=list)
    backend: str = ""  # the storage and where it is (``StateDir.describe``), password masked
    host: str = ""  # this machine's host label (core/hosts.py): what it stores sessions under

    @property
    def broken(self) -> list[AgentStatus]:
        return [a for a in self.agents if a.broken]

    @property
    def reconciling(self) -> bool:
        return any(a.progress.running for a in self.agents)

    @property
    def pending_sessions(self) -> int:
        return sum(a.dirty for a in self.agents)

    @property
    def total_sessions(self) -> int:
        return sum(a.sessions for a in self.agents)

    @property
    def incognito_sessions(self) -> int:
        return sum(a.incognito for a in self.agents)

    @property
    def contents(self) -> tuple[tuple[str, int, int], ...]:
        """A change marker: moves when a session or a message is stored or deleted in any
        agent (by this process or another: ``watch``, ``sync``, an agent runtime), so a
        reader polling the status knows when to ask its question again."""
        return tuple((a.agent, a.sessions, a.messages) for a in self.agents)

    def as_json(self) -> dict[str, Any]:
        return {
            "stateDir": self.path,
            "backend": self.backend,
            "agents": [a.as_json() for a in self.agents],
            "host": self.host,
        }


def state_status(state: StateDir) -> StateStatus:
    """Counts and progress per agent; an unreadable database is reported, not raised."""
    agents = []

    def read(agent_id: str) -> tuple[dict[str, int], Progress, int]:
        with state.open(agent_id) as db:
            # only keys shaped like an incognito one are read (through the key's index)
            return (db.counts(), db.read_progress(),
                    sum(is_incognito(s.key) for s in db.session_briefs(odd_only=True)))

    for agent_id, found, err in for_each_agent(state, read):
        if err is not None:
            why = "older schema" if isinstance(err, SchemaBehind) else "unreadable"
            agents.append(AgentStatus(agent_id, 0, 0, 0, 0, 0, IDLE, str(err), why))
            continue
        assert found is not None
        counts, progress, incognito = found
        read_only = state.unwritable(agent_id)
        agents.append(
            AgentStatus(
                agent=agent_id,
                sessions=counts["sessions"],
                messages=counts["messages"],
                indexed=counts["indexed"],
                dirty=counts["dirty"],
                never_indexed=counts["neverIndexed"],
                progress=progress,
                error=read_only,
                state="read-only" if read_only else "ok",
                incognito=incognito,
            )
        )
    return StateStatus(str(state.path), agents, backend=state.describe(), host=state.host)
