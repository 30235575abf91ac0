"""Import speed of two formats that grow by appends (Qwen Code, Cursor's CLI agent): N
generated lines each, imported into a fresh SQLite state.

Run: ``.venv/bin/python benchmarks/bench_appended_formats.py [N]`` (N defaults to 20000).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from backscroll.core.importers.cursor_cli import import_cursor_cli
from backscroll.core.importers.qwen_code import import_qwen_code
from backscroll.core.state import StateDir

SID = "5b0c7d0e-1a2b-4c3d-8e4f-112233445566"


def qwen_chat(root: Path, n: int) -> Path:
    path = root / "projects/p/chats" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    with path.open("w") as out:
        for i in range(n):
            kind = "user" if i % 2 == 0 else "assistant"
            out.write(json.dumps({
                "uuid": f"u{i}", "parentUuid": f"u{i - 1}" if i else None, "sessionId": SID,
                "timestamp": "2026-05-05T11:00:00.000Z", "type": kind, "cwd": "/w",
                "message": {"role": "user" if kind == "user" else "model",
                            "parts": [{"text": f"message {i} about things"}]}}) + "\n")
    return root


def cursor_transcript(root: Path, n: int) -> Path:
    path = root / "projects/p/agent-transcripts" / SID / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    with path.open("w") as out:
        for i in range(n):
            role = "user" if i % 2 == 0 else "assistant"
            block = {"type": "text", "text": f"<user_query>message {i}</user_query>"}
            out.write(json.dumps({"role": role, "message": {"content": [block]}}) + "\n")
    return root / "projects"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    tmp = Path(tempfile.mkdtemp())
    for name, importer, path in (("qwen-code", import_qwen_code, qwen_chat(tmp / "q", n)),
                                 ("cursor", import_cursor_cli, cursor_transcript(tmp / "c", n))):
        state = StateDir(tmp / f"state-{name}")
        start = time.perf_counter()
        report = importer(state, path)
        took = time.perf_counter() - start
        print(f"{name}: {n} lines imported in {took:.2f}s ({n / took:,.0f} lines/s), "
              f"{report.events} events")


if __name__ == "__main__":
    main()
