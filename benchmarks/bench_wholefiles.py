"""Whole-file formats (Cline, Continue, Aider): what a change costs when the file is read
whole each time (not a test).

Builds a fake home with one Cline task of ``--messages`` api messages (the real sample's
messages repeated with fresh times), one Continue session and one Aider history of the same
size, takes them in once, then measures, in process: the first sync (messages/s), a sync that
finds nothing new (only stat), and a sync after one message was added to each file (each
read and converted whole again, the new message stored live), p50 over ``--runs`` runs.

    .venv/bin/python benchmarks/bench_wholefiles.py [--messages 2000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

SID = "8f0a3c52-1b7e-4d2c-9a61-0c2f4b5d6e7f"  # Continue names sessions by UUID
SAMPLE = Path("/work/shared/data/agents/cline/home/.config/Code/User/globalStorage/"
              "saoudrizwan.claude-dev/tasks/1777073160794/api_conversation_history.json")


def cline_messages(n: int, ts: int = 1767000000000) -> list[dict[str, Any]]:
    """``n`` api messages of the real Cline sample, repeated, with fresh times from ``ts``."""
    base = json.loads(SAMPLE.read_text())
    return [dict(m, ts=ts + i * 1000) for i, m in enumerate((base * (n // len(base) + 1))[:n])]


def write_cline_task(task: Path, messages: list[dict[str, Any]]) -> Path:
    """A Cline (or Roo Code) task folder ``task`` holding ``messages``; the file written."""
    task.mkdir(parents=True, exist_ok=True)
    path = task / "api_conversation_history.json"
    path.write_text(json.dumps(messages))
    return path


def continue_history(n: int) -> list[dict[str, Any]]:
    return [{"message": {"role": "user" if i % 2 == 0 else "assistant",
                         "content": f"message {i} about the {i % 97} wombat"},
             "contextItems": []} for i in range(n)]


def write_continue_session(sessions: Path, sid: str, history: list[dict[str, Any]]) -> Path:
    sessions.mkdir(parents=True, exist_ok=True)
    path = sessions / f"{sid}.json"
    path.write_text(json.dumps({"sessionId": sid, "title": "t", "workspaceDirectory": "file:///x",
                                "history": history}))
    return path


def write_aider_history(project: Path, n: int) -> Path:
    """An Aider chat history of ``n`` messages (questions and answers) in ``project``."""
    project.mkdir(parents=True, exist_ok=True)
    path = project / ".aider.chat.history.md"
    path.write_text("\n# aider chat started at 2026-01-01 10:00:00\n\n" + "".join(
        f"#### question {i} on the {i % 97} emu  \n\nanswer {i}\n\n" for i in range(n // 2)))
    return path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-whole-"))
    os.environ["HOME"] = str(root / "home")
    os.environ["BACKSCROLL_STATE_DIR"] = str(root / "state")
    from backscroll.core.sources import add_source, sync_sources
    from backscroll.core.state import StateDir

    cline = cline_messages(args.messages)
    task = root / "home/.config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/1767000000000"
    write_cline_task(task, cline)
    history = continue_history(args.messages)
    sessions = root / "home/.continue/sessions"
    write_continue_session(sessions, SID, history)
    project = root / "home/code/p"
    write_aider_history(project, args.messages)
    state = StateDir(root / "state")
    add_source(state.path, "aider", root / "home/code", None)
    started = time.perf_counter()
    first = sync_sources(state)
    took = time.perf_counter() - started
    print(f"first sync: {first.messages:,} messages in {took:.2f} s "
          f"({first.messages / took:,.0f} messages/s), problems {len(first.problems)}")
    idle, grown = [], []
    for run in range(args.runs):
        started = time.perf_counter()
        sync_sources(state)
        idle.append(time.perf_counter() - started)
        cline.append({"role": "user", "ts": 1768000000000 + run, "content": [
            {"type": "text", "text": f"<feedback>more {run}</feedback>"}]})
        (task / "api_conversation_history.json").write_text(json.dumps(cline))
        history.append({"message": {"role": "user", "content": f"more {run}"},
                        "contextItems": []})
        (sessions / f"{SID}.json").write_text(json.dumps({"sessionId": SID, "history": history}))
        with (project / ".aider.chat.history.md").open("a") as handle:
            handle.write(f"#### more {run}  \n\n")
        started = time.perf_counter()
        report = sync_sources(state)
        grown.append(time.perf_counter() - started)
        assert report.messages == 3, report.as_json()
    if os.environ.get("BENCH_PROFILE"):
        import cProfile
        cProfile.runctx("sync_sources(state)", globals(), locals(), sort="cumtime")
    print(f"no-change sync: p50 {statistics.median(idle) * 1000:.1f} ms")
    print(f"sync after one message added to each of the 3 files (read whole): "
          f"p50 {statistics.median(grown) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
