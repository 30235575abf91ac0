"""A fake home with the three agent tools' folders, filled from the shared real transcripts,
and the helpers the live-source tests share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from backscroll.core.indexer import expected_rows
from backscroll.core.reconcile import reconcile_all
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.sources import sync_sources
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

PROJECT = "-home-me-app"
CC_SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"  # short.jsonl's session id
CC_MAIN = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"  # the big one, with subagents/
ROLLOUT = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
CODEX_KEY = "agent:codex:codex:019e1625-789d-76c0-80ab-3724b5ddb799"
OPENCLAW_SESSION = "96f4b6e6-6a7d-4515-a766-1400dc13c0f0"  # in chairong's sessions.json


def build_home(home: Path, data: Path, big: bool = False) -> dict[str, Path]:
    """``~/.claude/projects``, ``~/.codex/sessions`` and ``~/.openclaw`` under ``home``;
    returns the interesting files by name. ``big``: also the 2.7 MB Claude Code session."""
    project = home / ".claude" / "projects" / PROJECT
    project.mkdir(parents=True)
    for name in ("short.jsonl", "tool_heavy.jsonl", "subagent.jsonl"):
        shutil.copy(data / "claude-code" / name, project / name)
    if big:
        shutil.copy(data / "claude-code" / f"{CC_MAIN}.jsonl", project)
        shutil.copytree(data / "claude-code" / CC_MAIN, project / CC_MAIN)
    rollouts = home / ".codex" / "sessions" / "2026" / "05" / "11"
    rollouts.mkdir(parents=True)
    shutil.copy(data / "codex" / ROLLOUT, rollouts / ROLLOUT)
    agents = home / ".openclaw" / "agents"
    shutil.copytree(data / "openclaw" / "chairong", agents / "chairong" / "sessions")
    shutil.copytree(data / "openclaw" / "reinforcementsleeping_main", agents / "main" / "sessions")
    return {
        "short": project / "short.jsonl",
        "project": project,
        "rollout": rollouts / ROLLOUT,
        "openclaw": agents / "chairong" / "sessions" / f"{OPENCLAW_SESSION}.jsonl",
        "store": agents / "chairong" / "sessions" / "sessions.json",
        "agents": agents,
    }


def append(path: Path, *records: dict[str, Any], raw: bytes = b"") -> None:
    with path.open("ab") as handle:
        for record in records:
            handle.write(json.dumps(record).encode() + b"\n")
        handle.write(raw)


def last_record(path: Path) -> dict[str, Any]:
    return json.loads(path.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])


def claude_user(path: Path, uuid: str, text: str, parent: str | None = None) -> dict[str, Any]:
    """A Claude Code user record continuing ``path``."""
    last = last_record(path)
    return {"parentUuid": parent or last.get("uuid"), "isSidechain": False, "type": "user",
            "cwd": last.get("cwd"), "sessionId": last.get("sessionId"), "uuid": uuid,
            "timestamp": "2026-06-01T10:00:00.000Z", "message": {"role": "user", "content": text}}


def codex_user(text: str) -> dict[str, Any]:
    return {"timestamp": "2026-06-01T10:00:00.000Z", "type": "response_item",
            "payload": {"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": text}]}}


def openclaw_user(path: Path, entry_id: str, text: str) -> dict[str, Any]:
    parent = next(json.loads(line)["id"] for line in reversed(path.read_text().splitlines())
                  if line.strip() and json.loads(line).get("id")
                  and json.loads(line).get("type") == "message")
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": "2026-06-01T10:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": text}],
                        "timestamp": 1780308000000}}


def sync(state: StateDir) -> Any:
    """A sync, then the index brought up to date (as the background reconciliation does)."""
    report = sync_sources(state)
    reconcile_all(state)
    return report


def hits(state: StateDir, word: str) -> list[tuple[str, str]]:
    """(session key, message id) of every message matching ``word``, as the operator."""
    response = sessions_search(state, SearchRequest(query=word, limit=25), OPERATOR)
    assert not response.indexing, "still indexing"
    return [(r.session_key, r.message_id) for r in response.results]


def stored(state: StateDir) -> dict[str, tuple[list[str], list[tuple[str, str]]]]:
    """Per session: its entry ids (sorted, repeats kept) and the index rows its active branch
    gives (entry id, text): what two ways of taking a transcript in must agree on."""
    out = {}
    for agent in state.agents():
        with state.open(agent) as db:
            for session in db.sessions():
                events = db.events(session.pk)
                ids = sorted(e["id"] for _, e in events if isinstance(e.get("id"), str))
                rows, _branch = expected_rows(events, session.created_at)
                out[session.key] = (ids, [(row.entry_id, row.body) for row in rows])
    return out
