"""Hostile files in a source folder (issue 22): transcripts whose data stops their import,
FIFOs, sparse files, and a guard that turns a hang into a failure."""

from __future__ import annotations

import json
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

CC_GOOD = "33333333-1111-4111-8111-111111111111"
CODEX_GOOD = "019e0000-0000-7000-8000-000000000001"
OC_GOOD = "0a0a0a0a-1111-4222-8333-444455556666"
WORDS = {"claude-code": "zebrafinchledger", "codex": "okapiregister", "openclaw": "quokkaharbor"}


def claude_record(session_id: str, uuid: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"parentUuid": None, "isSidechain": False, "type": "user", "cwd": "/home/me/app",
            "sessionId": session_id, "uuid": uuid, "timestamp": "2026-06-01T10:00:00.000Z",
            "message": {"role": "user", "content": text}, **extra}


def codex_lines(session_id: str, text: str) -> list[dict[str, Any]]:
    return [{"timestamp": "2026-06-01T10:00:00.000Z", "type": "session_meta",
             "payload": {"id": session_id, "cwd": "/home/me/app"}},
            {"timestamp": "2026-06-01T10:00:01.000Z", "type": "response_item",
             "payload": {"type": "message", "role": "user",
                         "content": [{"type": "input_text", "text": text}]}}]


def openclaw_lines(session_id: str, text: str) -> list[dict[str, Any]]:
    return [{"type": "session", "version": 3, "id": session_id,
             "timestamp": "2026-06-01T10:00:00.000Z"},
            {"type": "message", "id": f"m-{session_id[:4]}", "parentId": None,
             "timestamp": "2026-06-01T10:00:01.000Z",
             "message": {"role": "user", "content": [{"type": "text", "text": text}]}}]


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def folders(home: Path) -> dict[str, Path]:
    """The default source folders under ``home`` (one project, one day, one agent)."""
    return {"claude-code": home / ".claude" / "projects" / "-home-me-app",
            "codex": home / ".codex" / "sessions" / "2026" / "06" / "01",
            "openclaw": home / ".openclaw" / "agents" / "main" / "sessions"}


def good_files(home: Path) -> dict[str, Path]:
    """One good transcript per source, sorted after every poison file."""
    where = folders(home)
    return {
        "claude-code": write_lines(where["claude-code"] / "z-good.jsonl", [
            claude_record(CC_GOOD, "cc-good-1", f"the {WORDS['claude-code']} line")]),
        "codex": write_lines(where["codex"] / f"rollout-z-good-{CODEX_GOOD}.jsonl",
                             codex_lines(CODEX_GOOD, f"the {WORDS['codex']} line")),
        "openclaw": write_lines(where["openclaw"] / f"{OC_GOOD}.jsonl",
                                openclaw_lines(OC_GOOD, f"the {WORDS['openclaw']} line")),
    }


def poison_files(home: Path) -> list[Path]:
    """The transcripts whose data stopped every sync (issue 22, item 3), each sorted before
    its source's good file."""
    where = folders(home)
    cc = where["claude-code"]
    sidechain = "44444444-1111-4111-8111-111111111111"
    return [
        write_lines(cc / "a-space.jsonl", [claude_record("a b", "s-1", "space")]),
        write_lines(cc / "a-newline.jsonl", [claude_record("a\nb", "n-1", "newline")]),
        write_lines(cc / "a-long.jsonl", [claude_record("x" * 600, "l-1", "long")]),
        write_lines(cc / "a-agent.jsonl", [claude_record(sidechain, "g-1", "agent",
                                                         isSidechain=True, agentId="a b")]),
        write_lines(cc / "a-leaf.jsonl", [
            {"type": "summary", "summary": "a summary", "leafUuid": ["not", "a", "uuid"]},
            claude_record("55555555-1111-4111-8111-111111111111", "f-1", "leaf")]),
        write_lines(where["codex"] / "rollout-a-poison.jsonl", codex_lines("a b", "codex")),
        write_lines(where["openclaw"] / "0-poison.jsonl", openclaw_lines("a b", "openclaw")),
    ]


class Hung(Exception):
    pass


@contextmanager
def no_hang(seconds: int = 30) -> Iterator[None]:
    """Fail instead of hanging: SIGALRM interrupts a blocked ``open()`` of a FIFO (the
    handler raises, so the call is not retried). Main thread only, as pytest runs tests."""

    def expired(signum: int, frame: Any) -> None:
        raise Hung(f"still blocked after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class CountingHandle:
    """A binary file handle that records how much each read returned (memory is bounded by
    the largest one) and how much was read in all."""

    def __init__(self, handle: Any, reads: list[int]) -> None:
        self._handle = handle
        self._reads = reads

    def __getattr__(self, name: str) -> Any:
        return getattr(self._handle, name)

    def __enter__(self) -> CountingHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()

    def read(self, *args: Any) -> bytes:
        data = self._handle.read(*args)
        self._reads.append(len(data))
        return data

    def readline(self, *args: Any) -> bytes:
        data = self._handle.readline(*args)
        self._reads.append(len(data))
        return data
