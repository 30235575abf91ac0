"""Reading Zed's ``threads.db`` from a watermark (the SQLite source kind).

The schema is Zed's own (zed-industries/zed ``crates/agent/src/db.rs``,
``ThreadsDatabase::new`` and ``save_thread_sync``): ``threads(id, summary, updated_at,
data_type, data, parent_id, folder_paths, folder_paths_order, created_at)``, the last four
added by later versions. ``data`` is the JSON of a ``DbThread``, as a zstd frame when
``data_type`` is ``zstd`` (what Zed writes) or as text when ``json`` (older rows).

A thread is rewritten whole (one row, ``INSERT … ON CONFLICT(id) DO UPDATE``) when it changes:
the watermark keeps each thread's ``updated_at``, and only the rows whose ``updated_at`` moved
have their ``data`` read (a no-change read reads the ids and times, never a blob). A blob that
cannot be read (a damaged zstd frame, JSON that is not a thread) is one sentence, said once
for that version of the thread; the other threads are kept.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from ... import bounds
from ..common import ImportReport
from ..format import SessionRead
from ..sqlite_source import read_snapshot
from .convert import convert_thread

TABLES = {"threads": ("id", "summary", "updated_at", "data_type", "data")}
VERSION = 1
MAX_THREAD_BYTES = bounds.MAX_STORE_BYTES  # one thread's JSON, once decompressed
ZSTD_MISSING = "install backscroll[zstd] (the zstandard package) to read it"


class BadThread(ValueError):
    """A thread's ``data`` that cannot be read (the reason, one sentence)."""


class NoZstandard(BadThread):
    """A compressed thread met without ``zstandard``: read again once it is installed."""


def read_new(path: Path, watermark: dict[str, Any] | None, agent: str, report: ImportReport,
             source: str = "zed") -> tuple[list[SessionRead], dict[str, Any]]:
    """Each thread of ``path`` changed since ``watermark``, and the new watermark."""
    mark = watermark if watermark and watermark.get("v") == VERSION else {}
    seen: dict[str, str] = mark.get("threads") or {}
    waiting = set(mark.get("waiting") or ())  # compressed threads said to need zstandard
    with read_snapshot(path, TABLES) as (conn, columns):
        extra = ", ".join(c if c in columns["threads"] else "NULL" for c in
                          ("parent_id", "folder_paths", "created_at"))
        times = {r[0]: r[1] for r in conn.execute("SELECT id, updated_at FROM threads")
                 if isinstance(r[0], str)}
        reads: list[SessionRead] = []
        for tid in sorted(t for t, when in times.items() if seen.get(t) != when):
            row = conn.execute(
                f"SELECT id, summary, updated_at, {extra}, data_type, data FROM threads "
                "WHERE id = ?", (tid,)).fetchone()
            if row is None:
                continue
            try:
                thread = decode(row[6], row[7])
            except NoZstandard as err:
                times.pop(tid)  # not read: read again at the next sync
                if tid not in waiting:
                    waiting.add(tid)
                    report.skip(path, None, f"thread {tid}: {err}")
                continue
            except BadThread as err:
                report.skip(path, None, f"thread {tid}: {err}; skipped")
                continue
            waiting.discard(tid)
            one = convert_thread(tuple(row[:6]), thread, agent, source)
            if one is not None:
                reads.append(one)
    return reads, {"v": VERSION, "threads": {**seen, **times}, "waiting": sorted(waiting)}


def decode(data_type: Any, data: Any) -> dict[str, Any]:
    """A row's ``DbThread`` JSON object (``db.rs`` ``deserialize_thread``)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, bytes):
        raise BadThread("its data is not a blob")
    if data_type == "zstd":
        data = _unzstd(data)
    elif data_type != "json":
        raise BadThread(f"its data type {str(data_type)[:40]!r} is not one Zed writes")
    if len(data) > MAX_THREAD_BYTES:
        raise BadThread(f"its data is over {MAX_THREAD_BYTES:,} bytes")
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BadThread("its data is not JSON") from None
    if not isinstance(value, dict):
        raise BadThread("its data is not a JSON object")
    return value


def _unzstd(frame: bytes) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise NoZstandard(f"it is compressed: {ZSTD_MISSING}") from None
    parts, got = [], 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(frame)) as stream:
            while got <= MAX_THREAD_BYTES:
                chunk = stream.read(1 << 20)
                if not chunk:
                    break
                parts.append(chunk)
                got += len(chunk)
    except zstandard.ZstdError as err:
        raise BadThread(f"its data is not a readable zstd frame ({err})") from None
    if got > MAX_THREAD_BYTES:
        raise BadThread(f"its data decompresses to over {MAX_THREAD_BYTES:,} bytes")
    return b"".join(parts)
