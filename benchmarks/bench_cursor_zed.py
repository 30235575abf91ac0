"""The Cursor editor and Zed readers on databases of realistic shape (not a test).

Builds, in a temporary folder, a Cursor ``state.vscdb`` (``--composers`` composers of
``--bubbles`` bubbles of about 2 KB, and as many bytes again of other keys the editor keeps in
the same table) and a Zed ``threads.db`` (``--threads`` threads of ``--messages`` messages,
zstd as Zed writes them), then times each reader's first read (entries/s) and a read from its
watermark with nothing new (what a sync costs after a write that touched no conversation:
Cursor scans its composers' keys, Zed reads ids and times only). The reader alone: storing
is measured by bench_sync.py.

    .venv/bin/python benchmarks/bench_cursor_zed.py [--composers 1000] [--bubbles 50]
        [--threads 500] [--messages 100]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from pathlib import Path

import zstandard

from backscroll.core.importers.common import ImportReport
from backscroll.core.importers.cursor_editor.reading import read_new as read_cursor
from backscroll.core.importers.zed.reading import read_new as read_zed

PAD = " ".join(f"word{i % 997}" for i in range(300))


def cursor_db(path: Path, composers: int, bubbles: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    for i in range(composers):
        cid = f"{i:08x}-0000-4000-8000-000000000000"
        heads = []
        for j in range(bubbles):
            bid = f"{j:08x}-1111-4000-8000-000000000000"
            heads.append({"bubbleId": bid, "type": 1 + j % 2})
            conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (
                f"bubbleId:{cid}:{bid}", json.dumps({"type": 1 + j % 2, "text": f"{i} {j} {PAD}"})))
            conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"checkpointId:{cid}:{bid}", PAD))
        conn.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{cid}", json.dumps({
            "composerId": cid, "createdAt": 1, "lastUpdatedAt": 2,
            "fullConversationHeadersOnly": heads})))
    conn.commit()
    conn.close()


def zed_db(path: Path, threads: int, messages: int) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at "
                 "TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT, "
                 "folder_paths TEXT, folder_paths_order TEXT, created_at TEXT)")
    compress = zstandard.ZstdCompressor(level=3).compress
    for i in range(threads):
        items = []
        for j in range(messages // 2):
            items.append({"User": {"id": f"u{i}-{j}", "content": [{"Text": f"{i} {j} {PAD}"}]}})
            items.append({"Agent": {"content": [{"Text": f"{j} {i} {PAD}"}], "tool_results": {}}})
        data = compress(json.dumps({"title": "t", "messages": items, "version": "0.3.0",
                                    "updated_at": "2026-01-01T00:00:00Z"}).encode())
        conn.execute("INSERT INTO threads VALUES (?, 't', '2026-01-01T00:00:00+00:00', 'zstd', ?,"
                     " NULL, '/p', '0', NULL)", (f"t{i}", data))
    conn.commit()
    conn.close()


def measure(name: str, path: Path, read) -> None:  # noqa: ANN001
    started = time.perf_counter()
    reads, mark = read(path, None, "bench", ImportReport())
    first = time.perf_counter() - started
    entries = sum(len(r.events) - 1 for r in reads)
    started = time.perf_counter()
    again, _ = read(path, mark, "bench", ImportReport())
    nothing = time.perf_counter() - started
    print(f"{name:<8} {path.stat().st_size / 2**20:8.1f} MB  first read {entries:,} entries in "
          f"{first:.2f} s ({entries / first:,.0f}/s)  nothing new: {len(again)} sessions in "
          f"{nothing * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--composers", type=int, default=1000)
    parser.add_argument("--bubbles", type=int, default=50)
    parser.add_argument("--threads", type=int, default=500)
    parser.add_argument("--messages", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cursor = Path(tmp) / "User" / "globalStorage" / "state.vscdb"
        cursor.parent.mkdir(parents=True)
        cursor_db(cursor, args.composers, args.bubbles)
        measure("cursor", cursor, read_cursor)
        zed = Path(tmp) / "threads.db"
        zed_db(zed, args.threads, args.messages)
        measure("zed", zed, read_zed)


if __name__ == "__main__":
    main()
