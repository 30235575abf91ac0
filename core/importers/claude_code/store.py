"""Storing converted groups as sessions: the header line, OpenClaw's key order in each entry,
and the label (``<project>: <title or first prompt>``, or what a sub-agent was asked to do)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...storage import AgentWriter, SessionMeta
from ..common import ImportReport, label_of, store_converted
from .convert import Group
from .reading import Tasks

SOURCE = "claude-code"


def store_groups(
    db: AgentWriter,
    file: Path,
    groups: dict[str, Group],
    tasks: Tasks,
    report: ImportReport,
    live: bool = False,
) -> None:
    """Store each group that has entries as one session (``live``: through the live write
    path, for records that continue a transcript being written)."""
    for group in groups.values():
        if not group.entries:
            continue
        header: dict[str, Any] = {"type": "session", "version": 3, "id": group.session_id}
        if group.first_ts:
            header["timestamp"] = group.first_ts
        if group.cwd:
            header["cwd"] = group.cwd
        events = [header, *(_ordered(e) for e in group.entries)]
        meta = SessionMeta(
            key=group.key,
            session_id=group.session_id,
            spawned_by=group.parent_key,
            parent_key=group.parent_key,
            label=_label(group, file, tasks),
            created_at=min(group.times) if group.times else None,
            updated_at=max(group.times) if group.times else None,
            source=SOURCE,
        )
        store_converted(db, meta, events, report, file, live)


def _label(group: Group, file: Path, tasks: Tasks) -> str:
    project = Path(group.cwd).name if group.cwd else ""
    project = project or (file.parent.name if file.parent.name != "subagents" else "")
    if group.parent_key is not None:
        sub = group.agent_sub_id or ""
        if sub.startswith("acompact"):
            what = "compaction summariser"
        else:
            task = tasks.get((group.parent_session_id or "", sub))
            if task:
                return label_of(project, task)
            if group.first_prompt:
                return label_of(project, group.first_prompt, "subagent: ")
            what = f"subagent {sub}"
    else:
        what = group.title or group.first_prompt or file.stem
    return label_of(project, what)


def _ordered(entry: dict[str, Any]) -> dict[str, Any]:
    """``type``, ``id``, ``parentId``, ``timestamp`` first, as OpenClaw writes them."""
    head = {k: entry[k] for k in ("type", "id", "parentId", "timestamp") if k in entry}
    return {**head, **{k: v for k, v in entry.items() if k not in head}}
