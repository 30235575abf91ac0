"""The entry point: find the chats under PATH and import each one (``appended`` drives)."""

from __future__ import annotations

from pathlib import Path

from ...state import StateDir
from ..appended import Reader, Records, import_files, jsonl_under
from ..common import ImportReport
from .convert import convert, is_record

DEFAULT_AGENT = "qwen-code"


def chat_folders(root: Path) -> list[Path]:
    """The ``chats`` folders under a Qwen Code home (``projects/*/chats``, ``tmp/*/chats``),
    a ``projects`` or ``tmp`` folder, or a ``chats`` folder itself."""
    candidates = [root] if root.name == "chats" else []
    candidates += [*root.glob("*/chats"), *root.glob("projects/*/chats"),
                   *root.glob("tmp/*/chats")]
    return sorted({p for p in candidates if p.is_dir()})


def _files(root: Path, report: ImportReport) -> list[Path]:
    return jsonl_under(chat_folders(root))


def _session(file: Path, records: Records) -> tuple[str, str | None]:
    own = next((r["sessionId"] for _, r in records
                if isinstance(r.get("sessionId"), str) and r["sessionId"]), None)
    parent = next((r["systemPayload"].get("parentSessionId") for _, r in records
                   if r.get("subtype") == "parent_session"
                   and isinstance(r.get("systemPayload"), dict)), None)
    return own or file.stem, parent if isinstance(parent, str) and parent else None


READER = Reader(
    source="qwen-code",
    what="Qwen Code chat",
    expected="~/.qwen with projects/<project>/chats/<session id>.jsonl files, or one file",
    files=_files,
    ours=lambda records: any(is_record(r) for _, r in records),
    session=_session,
    convert=convert,
)


def import_qwen_code(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Qwen Code home (or a projects or chats folder) or one chat file."""
    return import_files(state, path, agent, READER, DEFAULT_AGENT)
