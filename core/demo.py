"""Write the demo corpus (``demo_corpus.generate``) into a state dir, and cache it.

Live sessions are indexed as they would be by a runtime; the sessions the generator marks
``imported`` are stored unindexed, so the browser shows reconciliation progress on first
start. Big corpora (benchmarks) take the same path: a bulk import, then one reconciliation.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from .demo_corpus import DemoSession, generate
from .errors import StoreError
from .indexer import INDEXER_VERSION
from .keys import agent_of
from .reconcile import reconcile_agent
from .store import AgentDB, SessionMeta, StateDir
from .transcript import iso_to_ms

DEMO_SEED = 7
DEMO_MESSAGES = 3000
_COMPLETE = ".demo-complete"


def default_demo_dir(seed: int = DEMO_SEED, messages: int = DEMO_MESSAGES) -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "backscroll" / f"demo-s{seed}-m{messages}-v{INDEXER_VERSION}"


def ensure_demo(
    path: Path | None = None,
    seed: int = DEMO_SEED,
    messages: int = DEMO_MESSAGES,
    rebuild: bool = False,
) -> StateDir:
    """The demo state dir, built once (a half-built one from an interrupted run is redone)."""
    path = Path(path) if path is not None else default_demo_dir(seed, messages)
    marker = path / _COMPLETE
    if marker.exists() and not rebuild:
        return StateDir(path)
    if path.exists():
        if not (marker.exists() or (path / "agents").is_dir() or not any(path.iterdir())):
            raise StoreError(f"{path} exists and is not a backscroll demo; choose another dir")
        shutil.rmtree(path)
    state = StateDir(path)
    build_demo(state, seed=seed, messages=messages)
    marker.write_text(json.dumps({"seed": seed, "messages": messages}) + "\n")
    return state


def build_demo(
    state: StateDir,
    seed: int = DEMO_SEED,
    messages: int = DEMO_MESSAGES,
    agents: int | None = None,
    sessions: int | None = None,
    leave_imported_pending: bool = True,
) -> dict[str, int]:
    """Generate and store the corpus; returns counts (sessions, live, imported)."""
    dbs: dict[str, AgentDB] = {}
    imported: list[DemoSession] = []
    counts = {"sessions": 0, "live": 0, "imported": 0}
    try:
        for session in generate(seed=seed, messages=messages, agents=agents, sessions=sessions):
            counts["sessions"] += 1
            if session.imported and leave_imported_pending:
                imported.append(session)
                continue
            counts["live"] += 1
            _store(dbs, state, session)
        for agent_id in list(dbs):
            reconcile_agent(state, agent_id)  # the live sessions: indexed before first search
        for session in imported:
            counts["imported"] += 1
            _store(dbs, state, session)
    finally:
        for db in dbs.values():
            db.close()
    return counts


def _store(dbs: dict[str, AgentDB], state: StateDir, session: DemoSession) -> None:
    agent_id = agent_of(session.key)
    if agent_id not in dbs:
        dbs[agent_id] = state.open(agent_id, create=True)
    meta = SessionMeta(
        key=session.key,
        session_id=session.session_id,
        spawned_by=session.spawned_by,
        parent_key=session.parent_key,
        label=session.label,
        created_at=session.created_at,
        updated_at=iso_to_ms(session.events[-1].get("timestamp"), session.created_at),
        source="demo",
    )
    lines = [json.dumps(event, ensure_ascii=False, separators=(",", ":")) for event in session.events]
    dbs[agent_id].import_session(meta, lines)
