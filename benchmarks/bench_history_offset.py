"""Paging a long conversation by ``offset`` (not a test): ``sessions_history`` of 20 messages
at the newest end, in the middle and at the oldest end of a conversation of ``--messages``
messages (a tool result every tenth, left out without tools: skipped unread),
and a walk of the whole conversation page by page, against one page with no offset.

    .venv/bin/python benchmarks/bench_history_offset.py [--messages 5000] [--runs 7]

The build appends one event at a time (~30 ms each on a shared machine): 20,000 take minutes.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR

KEY = "agent:main:main"


def build(path: Path, messages: int) -> StateDir:
    state = StateDir(path, database_url="")
    with state.open("main", write=True) as db:
        meta, parent = SessionMeta(KEY), None
        for n in range(messages):
            role = "user" if n % 2 == 0 else "assistant"
            content: object = f"message {n} about the deploy and the canary " * 3
            if n % 10 == 9:
                role, content = "toolResult", [{"type": "text", "text": f"output {n}"}]
            event = {"type": "message", "id": f"m{n}", "parentId": parent,
                     "timestamp": "2026-11-30T12:00:00Z",
                     "message": {"role": role, "content": content, "toolName": "bash"}}
            db.append(meta, json.dumps(event))
            parent = f"m{n}"
    return state


def median_ms(call, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        state = build(Path(tmp), args.messages)
        print(f"built {args.messages:,} messages in {time.perf_counter() - started:.1f} s")
        for name, offset in (("newest (no offset)", None), ("middle", args.messages // 2),
                             ("oldest", args.messages - 20)):
            ms = median_ms(lambda o=offset: sessions_history(
                state, HistoryRequest(KEY, limit=20, offset=o), OPERATOR), args.runs)
            print(f"page of 20 at {name:<20} {ms:8.1f} ms")
        started, pages, offset = time.perf_counter(), 0, None
        while True:
            answer = sessions_history(state, HistoryRequest(KEY, limit=200, offset=offset),
                                      OPERATOR)
            pages += 1
            if answer.next_offset is None:
                break
            offset = answer.next_offset
        print(f"whole walk, pages of 200: {pages} pages in "
              f"{(time.perf_counter() - started) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
