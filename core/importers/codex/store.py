"""Storing a converted rollout as one session: the header line, the key and the link to the
thread that spawned it, the session's times and its label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...storage import AgentWriter, SessionMeta
from ...transcript import iso_to_ms
from ..common import ImportReport, label_of, store_converted
from .convert import Converted
from .reading import Rollout, str_or_none

SOURCE = "codex"


def store_rollout(
    db: AgentWriter,
    agent_id: str,
    rollout: Rollout,
    converted: Converted,
    report: ImportReport,
) -> None:
    """Store the rollout's entries, after its header, as ``agent:<id>:codex:<session id>``."""
    meta = rollout.meta
    header: dict[str, Any] = {"type": "session", "version": 3, "id": rollout.session_id}
    started = str_or_none(meta.get("timestamp")) or converted.first_ts
    if started:
        header["timestamp"] = started
    if str_or_none(meta.get("cwd")):
        header["cwd"] = meta["cwd"]
    if str_or_none(meta.get("forked_from_id")):
        header["parentSession"] = meta["forked_from_id"]
    events = [header, *converted.entries]
    parent = _spawning_thread(meta.get("source"))
    parent_key = f"agent:{agent_id}:codex:{parent}" if parent else None
    created = iso_to_ms(started) if started else 0
    times = converted.times
    session = SessionMeta(
        key=f"agent:{agent_id}:codex:{rollout.session_id}",
        session_id=rollout.session_id,
        spawned_by=parent_key,
        parent_key=parent_key,
        label=_label(rollout, converted, parent is not None),
        created_at=created or (min(times) if times else None),
        updated_at=max(times) if times else (created or None),
        source=SOURCE,
    )
    store_converted(db, session, events, report, rollout.file)


def _label(rollout: Rollout, converted: Converted, spawned: bool) -> str:
    cwd = str_or_none(rollout.meta.get("cwd"))
    project = Path(cwd.replace("\\", "/")).name if cwd else ""
    what = converted.first_prompt or rollout.file.stem
    if spawned:
        nick = str_or_none(rollout.meta.get("agent_nickname")) or str_or_none(
            rollout.meta.get("agent_role")
        )
        return label_of(project, what, f"subagent {nick}: " if nick else "subagent: ")
    return label_of(project, what)


def _spawning_thread(source: Any) -> str | None:
    if not isinstance(source, dict):
        return None
    sub = source.get("subagent") or source.get("sub_agent") or source.get("subAgent")
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    return str_or_none(spawn.get("parent_thread_id")) if isinstance(spawn, dict) else None
