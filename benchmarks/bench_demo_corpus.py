"""Generation rate of the demo corpus: ``python benchmarks/bench_demo_corpus.py [messages]``.

Streams ``generate(messages=N, sessions=N // 100, agents=1)`` (the benchmark shape) without
storing anything and prints sessions, messages, entries and messages per second.
"""

from __future__ import annotations

import sys
import time

from backscroll.core.demo.corpus import generate


def main(messages: int = 200_000) -> None:
    start = time.perf_counter()
    sessions = entries = counted = 0
    for session in generate(messages=messages, sessions=max(1, messages // 100), agents=1):
        sessions += 1
        entries += len(session.events)
        counted += sum(
            1 for e in session.events
            if e["type"] == "message" and e["message"]["role"] in ("user", "assistant")
        )
    elapsed = time.perf_counter() - start
    print(
        f"{sessions:,} sessions, {counted:,} messages, {entries:,} entries in {elapsed:.2f} s: "
        f"{counted / elapsed:,.0f} messages/s ({entries / elapsed:,.0f} entries/s)"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
