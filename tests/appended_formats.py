"""Helpers for the tests of the formats that grow by appends (Qwen Code, Cursor's CLI agent,
Factory Droid): a sync as the background reconciliation completes it, what search finds and
what history shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.state import StateDir
from backscroll.core.visibility import OPERATOR

from .fakehome import hits, stored, sync

__all__ = ["hits", "stored", "sync", "history", "write_lines", "append_lines", "session_of"]



def history(state: StateDir, key: str, tools: bool = False) -> tuple[str, Any]:
    """The session's history as JSON text (with tools or not), and the response."""
    response = sessions_history(state, HistoryRequest(key, include_tools=tools), OPERATOR)
    return json.dumps(response.as_json(), ensure_ascii=False), response


def write_lines(path: Path, *records: dict[str, Any] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False))
                            + "\n" for r in records), encoding="utf-8")
    return path


def append_lines(path: Path, *records: dict[str, Any] | str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for r in records:
            handle.write((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n")


def session_of(state: StateDir, agent: str, key: str) -> Any:
    with state.open(agent) as db:
        session = db.session(key)
        assert session is not None, key
        return session, db.events(session.pk)
