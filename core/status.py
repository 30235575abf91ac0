"""What a state dir holds and how far reconciliation has come: read by ``status`` and the
browser's status bar (any process can read another's progress)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import BackscrollError
from .state import StateDir
from .storage import IDLE, Progress


@dataclass(frozen=True)
class AgentStatus:
    agent: str
    sessions: int
    messages: int
    indexed: int
    dirty: int
    never_indexed: int
    progress: Progress
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "sessions": self.sessions,
            "messages": self.messages,
            "indexed": self.indexed,
            "dirty": self.dirty,
            "neverIndexed": self.never_indexed,
            "reconcile": self.progress.as_json(),
            **({"error": self.error} if self.error else {}),
        }


@dataclass(frozen=True)
class StateStatus:
    path: str
    agents: list[AgentStatus] = field(default_factory=list)
    backend: str = ""  # the storage and where it is (``StateDir.describe``), password masked

    @property
    def reconciling(self) -> bool:
        return any(a.progress.running for a in self.agents)

    @property
    def pending_sessions(self) -> int:
        return sum(a.dirty for a in self.agents)

    @property
    def total_sessions(self) -> int:
        return sum(a.sessions for a in self.agents)

    def as_json(self) -> dict[str, Any]:
        return {
            "stateDir": self.path,
            "backend": self.backend,
            "agents": [a.as_json() for a in self.agents],
        }


def state_status(state: StateDir) -> StateStatus:
    """Counts and progress per agent; an unreadable database is reported, not raised."""
    agents = []
    for agent_id in state.agents():
        try:
            with state.open(agent_id) as db:
                counts = db.counts()
                progress = db.read_progress()
        except BackscrollError as err:
            agents.append(AgentStatus(agent_id, 0, 0, 0, 0, 0, IDLE, error=str(err)))
            continue
        agents.append(
            AgentStatus(
                agent=agent_id,
                sessions=counts["sessions"],
                messages=counts["messages"],
                indexed=counts["indexed"],
                dirty=counts["dirty"],
                never_indexed=counts["neverIndexed"],
                progress=progress,
            )
        )
    return StateStatus(str(state.path), agents, backend=state.describe())
