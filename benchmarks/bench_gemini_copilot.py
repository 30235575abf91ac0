"""What ``sync`` costs on Gemini CLI and Copilot CLI sessions (not a test): a fake home with
one long Gemini upsert log (each answer written twice, as the CLI does when it adds tool
calls) and one long Copilot ``events.jsonl``; first sync, a no-change sync, and a sync after
one new message (Gemini: the whole file is read again; Copilot: read on with its carry).

    .venv/bin/python benchmarks/bench_gemini_copilot.py [--turns 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from backscroll.core.sources import sync_sources
from backscroll.core.state import StateDir

SID = "11111111-2222-3333-4444-555555555555"


def _gemini(chats: Path, turns: int) -> Path:
    log = chats / "session-2026-05-01T10-00-11111111.jsonl"
    with log.open("w") as out:
        out.write(json.dumps({"sessionId": SID, "projectHash": "h",
                              "startTime": "2026-05-01T10:00:00Z"}) + "\n")
        for n in range(turns):
            out.write(json.dumps({"id": f"u{n}", "timestamp": "2026-05-01T10:00:01Z",
                                  "type": "user", "content": [{"text": f"question {n} " * 20}]})
                      + "\n")
            answer = {"id": f"g{n}", "timestamp": "2026-05-01T10:00:02Z", "type": "gemini",
                      "content": f"answer {n} " * 60, "model": "gemini-2.5-pro",
                      "thoughts": [{"subject": "s", "description": "d " * 50}]}
            out.write(json.dumps(answer) + "\n")
            answer["toolCalls"] = [{"id": f"c{n}", "name": "read_file", "args": {"p": "x"},
                                    "status": "success", "result": "r " * 400}]
            out.write(json.dumps(answer) + "\n")
    return log


def _copilot(folder: Path, turns: int) -> Path:
    log = folder / "events.jsonl"
    log.parent.mkdir(parents=True)
    n = iter(range(10**9))

    def line(kind: str, data: dict) -> str:
        return json.dumps({"type": kind, "data": data, "timestamp": "2026-05-01T10:00:00Z",
                           "id": f"00000000-0000-4000-8000-{next(n):012d}"}) + "\n"

    with log.open("w") as out:
        out.write(line("session.start", {"sessionId": SID, "context": {"cwd": "/w"}}))
        for t in range(turns):
            out.write(line("user.message", {"content": f"question {t} " * 20}))
            out.write(line("assistant.message", {"content": f"answer {t} " * 60, "toolRequests": [
                {"toolCallId": f"c{t}", "name": "bash", "arguments": {}}]}))
            out.write(line("tool.execution_complete", {"toolCallId": f"c{t}", "success": True,
                                                       "result": {"content": "r " * 400}}))
    return log


def _timed(state: StateDir) -> tuple[float, int]:
    began = time.perf_counter()
    report = sync_sources(state)
    return time.perf_counter() - began, report.events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        os.environ["HOME"] = str(home)
        os.environ["BACKSCROLL_STATE_DIR"] = str(Path(tmp) / "state")
        chats = home / ".gemini" / "tmp" / "proj" / "chats"
        chats.mkdir(parents=True)
        gemini = _gemini(chats, args.turns)
        copilot = _copilot(home / ".copilot" / "session-state" / SID, args.turns)
        state = StateDir(Path(tmp) / "state")
        sizes = f"gemini {gemini.stat().st_size / 1e6:.1f} MB, copilot " \
                f"{copilot.stat().st_size / 1e6:.1f} MB, {args.turns} turns each"
        print(sizes)
        took, events = _timed(state)
        print(f"first sync: {took:.2f} s, {events} events, {events / took:,.0f} events/s")
        took, _ = _timed(state)
        print(f"no-change sync: {took * 1000:.0f} ms")
        for name, log, record in (
            ("gemini", gemini, {"id": "new", "timestamp": "2026-05-01T11:00:00Z",
                                "type": "user", "content": [{"text": "one more"}]}),
            ("copilot", copilot, {"type": "user.message", "data": {"content": "one more"},
                                  "id": "00000000-0000-4000-8000-999999999999"}),
        ):
            with log.open("a") as out:
                out.write(json.dumps(record) + "\n")
            took, events = _timed(state)
            print(f"{name}: sync after one new message: {took * 1000:.0f} ms ({events} event)")


if __name__ == "__main__":
    main()
