"""``backscroll push``: copy a local state (the embedded SQLite files) into another storage,
so a person's history joins a team's server (SPEC 13).

Sessions are imported the way importers store them (``AgentWriter.import_session``): keyed by
session id, each event recognised by its entry id (id-less ones by their text), so pushing
again adds only what is new, and an interrupted push is finished by running it again. Each
session keeps the host it came from (a local state's: this machine's label, ``core/hosts.py``),
so two hosts pushing the same key keep two sessions, each under its host. Nothing
is indexed on the way: pushed sessions are pending on the server until reconciliation (which
``push`` runs next for the agents it touched) indexes them there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

from .state import StateDir
from .storage import SessionMeta


@dataclass
class PushReport:
    agents: list[str] = field(default_factory=list)
    sessions: int = 0  # sessions read from the source
    changed: int = 0  # sessions that got new events on the target
    events: int = 0  # events added on the target

    def as_json(self) -> dict[str, object]:
        return {
            "agents": self.agents,
            "sessions": self.sessions,
            "sessionsChanged": self.changed,
            "events": self.events,
        }


def push_state(
    source: StateDir,
    target: StateDir,
    on_progress: Callable[[int, int, PushReport], None] | None = None,
) -> PushReport:
    """Copy every session of ``source`` into ``target``; ``on_progress(done, total, report)``
    after each session."""
    source.require()
    report = PushReport()
    agents = source.agents()
    total = 0
    for agent_id in agents:
        with source.open(agent_id) as db:
            total += len(db.sessions())
    done = 0
    for agent_id in agents:
        report.agents.append(agent_id)
        with source.open(agent_id) as src, target.open(agent_id, write=True) as dst:
            for session in src.sessions():
                events = [event for _seq, event in src.events(session.pk)]
                lines = [json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in events]
                meta = SessionMeta(
                    key=session.key,
                    session_id=session.session_id,
                    spawned_by=session.spawned_by,
                    parent_key=session.parent_key,
                    label=session.label,
                    created_at=session.created_at,
                    updated_at=session.updated_at,
                    source=session.source,
                    host=session.host or None,  # a local state's: this machine's label
                )
                added = dst.import_session(meta, lines, events).events
                report.sessions += 1
                report.changed += added > 0
                report.events += added
                done += 1
                if on_progress is not None:
                    on_progress(done, total, report)
    return report
