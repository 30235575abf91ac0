"""Read OpenClaw's SQLite transcript store (release 2026.8 and later) into backscroll.

Each agent keeps ``<stateDir>/agents/<agentId>/agent/openclaw-agent.sqlite``. This module
finds those stores (``state_dirs``, ``find_stores``: path logic only) and reads one
(``read_store_file``) or stores what it read (``import_store``), the entry point a format
registry / ``sync`` calls with the watermarks it kept from the last read.

How the store maps onto sessions (docs/importers.md):
- a node (``session_nodes``) is what a ``sessions.json`` entry was; its windows
  (``session_windows``) are what ``<sessionId>.jsonl`` files were. The node's current window is
  stored under the node's key and label; every other window (a reset, rollover, fork, ...) is
  stored as a reset archive is today: ``agent:<id>:reset:<sessionId>``, labelled
  ``reset archive of <sessionId> (<time>)``;
- events are the JSONL lines themselves: they go through the JSONL importer's path
  (``openclaw.read_events`` / ``store_transcript``), so validation, trees and keys are its own;
- a cold window (``session_transcript_cold_archives``) is read from its archive once, verified
  (length, SHA-256 of the compressed bytes, the envelope's header and counts); its session is
  marked archived (``mark_archived``: a stored flag, ``SessionRow.archived``, so results say
  ``archived: true``); for people its label ends `` (archived)`` too, never read back.

The store is opened read-only (``mode=ro``: never created, never written, never checkpointed;
not ``immutable``, which would miss the ``-wal``), in one read transaction, so a window moved
from hot to cold while it is read is seen on one side only.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from ...errors import ValidationError
from ...keys import check_agent_id, normalize_key
from ...labels import archive_label
from ...state import StateDir
from ...storage import AgentWriter, SessionMeta
from ...storage.model import ARCHIVED_LABEL as ARCHIVED
from ...storage.stored import as_imported
from ..common import ImportReport, store_live
from . import StoreView, TranscriptRead, folder_agent_id, read_events, store_transcript

STORE_NAME = "openclaw-agent.sqlite"
KNOWN_VERSIONS = range(20, 25)  # 20 added cold archives, 23 compressed rows, 24 is the newest
BATCH = 500  # events per keyset page
BUSY_MS = 5000
MAX_EVENT_BYTES = 4 * 1024 * 1024  # a compressed event's decoded size (transcript-payload.ts)
MAX_ARCHIVE_BYTES = 65 * 1024 * 1024  # a cold archive's compressed size
MAX_ARCHIVE_RAW = 64 * 1024 * 1024  # and decoded (session-cold-storage-codec.ts)
_ZSTD_MISSING = "install backscroll[zstd] (the zstandard package) to read it"


# ---- where the stores are -------------------------------------------------------------------


def state_dirs(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """OpenClaw's state dirs, most likely first: ``$OPENCLAW_STATE_DIR`` alone when set, else
    ``~/.openclaw``, each ``~/.openclaw-<profile>`` and the legacy ``~/.clawdbot`` that exist."""
    env = os.environ if env is None else env
    if env.get("OPENCLAW_STATE_DIR"):
        return [Path(env["OPENCLAW_STATE_DIR"]).expanduser()]
    home = Path.home() if home is None else home
    found = [home / ".openclaw"]
    found += sorted(p for p in home.glob(".openclaw-*") if p.is_dir())
    found.append(home / ".clawdbot")
    return [p for p in found if p.is_dir()]


def find_stores(state_dir: Path) -> list[tuple[str, Path]]:
    """(agent id, store path) of every agent store under a state dir, by agent id."""
    found = []
    for path in sorted(state_dir.glob(f"agents/*/agent/{STORE_NAME}")):
        if path.is_file():
            found.append((folder_agent_id(path.parent.parent), path))
    return found


def window_key(store: Path, session_id: str) -> str | None:
    """The key of the node a store's window belongs to, as stored (lower case); None when
    the store has no such window or cannot be read now."""
    try:
        with closing(connect(store)) as con:
            row = con.execute("SELECT session_key FROM session_windows WHERE session_id = ?",
                              (session_id,)).fetchone()
    except sqlite3.Error:
        return None
    if row is None or not isinstance(row[0], str) or row[0].count(":") < 2:
        return None
    _, _, rest = row[0].split(":", 2)  # owned by the store's agent, as it is stored
    return normalize_key(f"agent:{folder_agent_id(store.parent.parent)}:{rest}")


def cold_folder(store: Path) -> Path:
    """Where a store's file-backed cold archives are: the sibling ``sessions/cold/``."""
    return store.parent.parent / "sessions" / "cold"


# ---- what a read returns --------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """How far one window was read: its last ``seq`` stored, its update times then, and the
    SHA-256 of the cold archive read (an archive is immutable: never read twice)."""

    seq: int = 0
    updated_at: int | None = None
    transcript_updated_at: int | None = None
    archive: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "updatedAt": self.updated_at,
                "transcriptUpdatedAt": self.transcript_updated_at, "archive": self.archive}

    @classmethod
    def of_json(cls, value: Any) -> Mark:
        value = value if isinstance(value, dict) else {}
        seq = value.get("seq")
        archive = value.get("archive")
        return cls(seq if isinstance(seq, int) else 0, _int(value.get("updatedAt")),
                   _int(value.get("transcriptUpdatedAt")),
                   archive if isinstance(archive, str) else None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass
class Window:
    """One window read: where it belongs and its new events (JSONL lines, numbered by seq)."""

    session_id: str
    session_key: str
    current: bool
    reason: str | None
    ended: int | None
    lines: list[tuple[int, bytes]] = field(default_factory=list)
    archived: bool = False
    mark: Mark = field(default_factory=Mark)


@dataclass
class StoreRead:
    """A store read: its agent, the nodes (as ``sessions.json`` entries), the windows with new
    events, and every window's watermark (to keep for the next read)."""

    agent_id: str
    path: Path
    version: int
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    windows: list[Window] = field(default_factory=list)
    marks: dict[str, Mark] = field(default_factory=dict)


# ---- reading --------------------------------------------------------------------------------


def connect(path: Path) -> sqlite3.Connection:
    """The store, read-only: never created, never written, never checkpointed."""
    uri = f"file:{path.resolve().as_posix()}?mode=ro"
    con = sqlite3.connect(uri, uri=True, timeout=BUSY_MS / 1000, isolation_level=None,
                          check_same_thread=False)
    con.execute(f"PRAGMA busy_timeout={BUSY_MS}")
    con.execute("PRAGMA query_only=1")
    return con


def schema_version(con: sqlite3.Connection, path: Path) -> int:
    """The store's schema version, or a ValidationError (one sentence) when it is not one
    this reader knows, or the two records of it disagree."""
    user = con.execute("PRAGMA user_version").fetchone()[0]
    meta = None
    if _has_table(con, "schema_meta"):
        row = con.execute("SELECT schema_version FROM schema_meta WHERE meta_key='primary' "
                          "AND role='agent'").fetchone()
        meta = row[0] if row else None
    known = f"{KNOWN_VERSIONS.start} to {KNOWN_VERSIONS.stop - 1}"
    if user not in KNOWN_VERSIONS:
        raise ValidationError(f"{path}: OpenClaw store schema version {user} is not one "
                              f"backscroll reads (it reads {known}); nothing read from it")
    if meta is not None and meta != user:
        raise ValidationError(f"{path}: OpenClaw store says schema version {user} and "
                              f"{meta} in schema_meta; nothing read from it")
    return user


def _has_table(con: sqlite3.Connection, name: str) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                       (name,)).fetchone() is not None


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f"PRAGMA table_info({table})")}


def read_store_file(
    path: Path, report: ImportReport, since: Mapping[str, Mark] | None = None,
    agent: str | None = None,
) -> StoreRead:
    """Read what is new in one store since the watermarks ``since`` (per window id). Raises
    ValidationError for a store it cannot read at all; a bad window or event is reported
    in ``report`` and the others are read."""
    since = since or {}
    agent_id = check_agent_id(agent) if agent else folder_agent_id(path.parent.parent)
    try:
        con = connect(path)
    except sqlite3.Error as err:
        raise ValidationError(f"{path}: cannot open the OpenClaw store ({err})") from None
    with closing(con):
        try:
            con.execute("BEGIN")  # one snapshot: a window is hot or cold, never both
            version = schema_version(con, path)
            read = StoreRead(agent_id, path, version)
            _read_nodes(con, read)
            _read_windows(con, read, since, report)
            con.execute("COMMIT")
        except sqlite3.Error as err:
            raise ValidationError(f"{path}: cannot read the OpenClaw store ({err})") from None
    return read


def _read_nodes(con: sqlite3.Connection, read: StoreRead) -> None:
    rows = con.execute("SELECT session_key, current_session_id, entry_json, label, display_name,"
                       " parent_session_key, spawned_by FROM session_nodes ORDER BY session_key")
    for key, current, entry_json, label, display, parent, spawned in rows:
        try:
            entry = json.loads(entry_json) if entry_json else {}
        except ValueError:
            entry = {}
        entry = entry if isinstance(entry, dict) else {}
        # the promoted columns win: they are what OpenClaw's own list reads
        for name, value in (("sessionId", current), ("label", label),
                            ("displayName", display), ("parentSessionKey", parent),
                            ("spawnedBy", spawned)):
            if value:
                entry[name] = value
        read.entries[key] = entry


def _read_windows(
    con: sqlite3.Connection, read: StoreRead, since: Mapping[str, Mark], report: ImportReport
) -> None:
    currents = {entry.get("sessionId") for entry in read.entries.values()}
    cold_rows = {}
    if _has_table(con, "session_transcript_cold_archives"):
        for row in con.execute("SELECT session_id, generation, archive_name, archive_sha256, "
                               "event_count, raw_bytes, archive_bytes, last_seq, storage, "
                               "archive_blob FROM session_transcript_cold_archives"):
            cold_rows[row[0]] = row
    columns = _columns(con, "transcript_events")
    rows = con.execute("SELECT session_id, session_key, reason, updated_at, "
                       "transcript_updated_at, ended_at FROM session_windows "
                       "ORDER BY created_at, session_id").fetchall()
    for session_id, key, reason, updated, t_updated, ended in rows:
        before = since.get(session_id, Mark())
        window = Window(session_id, key, session_id in currents, reason, ended)
        mark = Mark(before.seq, updated, t_updated, before.archive)
        where = f"{read.path}#{session_id}"
        try:
            if session_id in cold_rows:
                window.archived = True
                sha = cold_rows[session_id][3]
                if before.archive != sha:
                    window.lines = _read_cold(read.path, cold_rows[session_id], where)
                    mark = Mark(max([before.seq, *(s for s, _ in window.lines)]),
                                updated, t_updated, sha)
            elif (before.updated_at, before.transcript_updated_at) != (updated, t_updated) \
                    or session_id not in since or before.archive is not None:
                window.lines, last = _read_hot(con, session_id, before.seq, columns, where,
                                               report)
                mark = Mark(last, updated, t_updated, None)
        except ValidationError as err:
            report.skipped.append(str(err))
            mark = before  # read again next time
        read.marks[session_id] = mark
        window.mark = mark
        read.windows.append(window)


def _read_hot(
    con: sqlite3.Connection, session_id: str, after: int, columns: set[str], where: str,
    report: ImportReport,
) -> tuple[list[tuple[int, bytes]], int]:
    """A window's events after ``after``, by keyset on seq; (lines, the last seq read)."""
    zstd_cols = "event_zstd, event_utf8_bytes" if "event_zstd" in columns else "NULL, NULL"
    query = (f"SELECT seq, event_json, {zstd_cols} FROM transcript_events "
             "WHERE session_id=? AND seq>? ORDER BY seq LIMIT ?")
    lines: list[tuple[int, bytes]] = []
    last = after
    while True:
        page = con.execute(query, (session_id, last, BATCH)).fetchall()
        for seq, text, frame, size in page:
            last = seq
            if text is not None:
                lines.append((seq, text.encode("utf-8", "surrogatepass")))
                continue
            try:
                lines.append((seq, decode_frame(frame, size)))
            except ValidationError as err:
                report.skipped.append(f"{where}:{seq}: {err}; event skipped")
        if len(page) < BATCH:
            return lines, last


def decode_frame(frame: Any, size: Any) -> bytes:
    """One compressed event: a zstd frame that decodes to exactly ``size`` bytes of UTF-8
    (at most that plus one byte is ever produced, whatever the frame claims)."""
    if not isinstance(frame, bytes) or not isinstance(size, int) or not 1 <= size <= MAX_EVENT_BYTES:
        raise ValidationError("a compressed event without a valid recorded length")
    zstandard = _zstandard("a compressed event")
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(frame)) as stream:
            data = _read_up_to(stream, size + 1)
    except zstandard.ZstdError as err:
        raise ValidationError(f"a compressed event that is not a readable zstd frame ({err})") from None
    if len(data) != size:
        got = "more" if len(data) > size else len(data)
        raise ValidationError(f"a compressed event that decodes to {got} bytes, not the "
                              f"{size} recorded")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError("a compressed event that is not UTF-8") from None
    return data


def _read_up_to(stream: Any, limit: int) -> bytes:
    parts, got = [], 0
    while got < limit:
        chunk = stream.read(min(1 << 20, limit - got))
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _zstandard(what: str) -> Any:
    try:
        import zstandard
    except ImportError:
        raise ValidationError(f"{what}: {_ZSTD_MISSING}") from None
    return zstandard


def _read_cold(store: Path, row: tuple[Any, ...], where: str) -> list[tuple[int, bytes]]:
    """A cold window's events from its archive, verified before it is used (a missing or
    damaged archive is an error, never empty history)."""
    session_id, generation, name, sha, count, raw_bytes, size, last_seq, storage, blob = row
    if not isinstance(name, str) or name != f"{sha}.jsonl.zst" or len(name) != 74:
        raise ValidationError(f"{where}: cold archive name {name!r} is not <sha256>.jsonl.zst; "
                              "window not read")
    if not isinstance(size, int) or not 0 < size <= MAX_ARCHIVE_BYTES:
        raise ValidationError(f"{where}: cold archive size {size} is out of bounds; window not read")
    if storage == "sqlite":
        data = blob if isinstance(blob, bytes) else b""
    else:
        file = cold_folder(store) / name
        try:
            with open(file, "rb") as handle:
                data = handle.read(MAX_ARCHIVE_BYTES + 1)
        except OSError as err:
            raise ValidationError(f"{where}: cold archive {file} cannot be read "
                                  f"({err.strerror or err}); window not read") from None
    if len(data) != size or hashlib.sha256(data).hexdigest() != sha:
        raise ValidationError(f"{where}: cold archive {name} does not match its recorded "
                              "length and SHA-256; window not read")
    zstandard = _zstandard(f"{where}: a cold archive")
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)) as stream:
            raw = _read_up_to(stream, MAX_ARCHIVE_RAW + 1)
    except zstandard.ZstdError as err:
        raise ValidationError(f"{where}: cold archive {name} is not readable zstd ({err}); "
                              "window not read") from None
    if len(raw) > MAX_ARCHIVE_RAW:
        raise ValidationError(f"{where}: cold archive {name} expands beyond 64 MiB; window not read")
    return _envelope(raw, session_id, generation, count, raw_bytes, last_seq, where, name)


def _envelope(
    raw: bytes, session_id: str, generation: str, count: Any, raw_bytes: Any, last_seq: Any,
    where: str, name: str,
) -> list[tuple[int, bytes]]:
    bad = f"{where}: cold archive {name}"
    records = []
    try:
        for line in raw.split(b"\n"):
            if line.strip():
                records.append(json.loads(line))
    except ValueError:
        raise ValidationError(f"{bad} holds a line that is not JSON; window not read") from None
    head = records[0] if records else None
    if not isinstance(head, dict) or head.get("kind") != "header" or \
            head.get("sessionId") != session_id or head.get("generation") != generation:
        raise ValidationError(f"{bad} does not start with this window's header; window not read")
    events: list[tuple[int, bytes]] = []
    for record in records[1:]:
        if not isinstance(record, dict) or record.get("kind") != "event":
            continue  # identity, active, index and fts records: OpenClaw's own indexes
        row = record.get("row")
        if not isinstance(row, dict) or not isinstance(row.get("seq"), int) \
                or not isinstance(row.get("event_json"), str):
            raise ValidationError(f"{bad} holds a malformed event record; window not read")
        events.append((row["seq"], row["event_json"].encode("utf-8", "surrogatepass")))
    total = sum(len(line) for _, line in events) + max(len(events) - 1, 0)
    if len(events) != count or (events and events[-1][0] != last_seq) or total != raw_bytes:
        raise ValidationError(f"{bad} does not hold the event count, last seq and size its row "
                              "records; window not read")
    return events


# ---- storing --------------------------------------------------------------------------------


def _when(ms: int | None) -> str:
    if not ms:
        return "unknown time"
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%Y-%m-%dT%H-%M-%S.%fZ")


def import_store(
    state: StateDir, path: Path, since: Mapping[str, Mark] | None = None,
    agent: str | None = None, report: ImportReport | None = None,
) -> tuple[ImportReport, dict[str, Mark]]:
    """Store what is new in one OpenClaw store; return the report and the watermarks to keep
    for the next call (``Mark.as_json`` / ``of_json`` to keep them as JSON)."""
    report = report if report is not None else ImportReport()
    read = read_store_file(path, report, since, agent)
    with state.open(read.agent_id, write=True) as db, db.importing():
        store_read(db, read, report)
    return report, read.marks


def store_database(db: AgentWriter, path: Path, watermark: dict[str, Any] | None, agent: str,
                   report: ImportReport) -> dict[str, Any]:
    """The store as a source (``Doors.database.store``): what is new since ``watermark``
    (the JSON the last call returned: each window's ``Mark``) stored into ``db`` (the agent
    ``agent``'s); the new watermark."""
    windows = (watermark or {}).get("windows")
    since = {sid: Mark.of_json(mark) for sid, mark in windows.items()} \
        if isinstance(windows, dict) else {}
    read = read_store_file(path, report, since, agent)
    if report.deleted:  # sessions deleted in backscroll (``sources/deleted.py``)
        read.windows = [w for w in read.windows
                        if not _deleted_window(db, read.agent_id, w, report.deleted,
                                               watermark is None or w.session_id in since)]
    with db.importing():
        store_read(db, read, report, live=watermark is not None)
    return {"version": read.version,
            "windows": {sid: mark.as_json() for sid, mark in read.marks.items()}}


def _deleted_window(db: AgentWriter, agent: str, window: Window, deleted: frozenset[str],
                    known: bool) -> bool:
    """A window not to take in: it fed a session deleted in backscroll (the rule of every
    SQLite format, ``sqlite_source.follow_database``). A window the store gained after the
    delete (a reset of the node: not in the watermark the delete left, or stored since) is a
    new conversation and is taken in."""
    keys = {normalize_key(window.session_key),
            normalize_key(f"agent:{agent}:reset:{window.session_id}")}
    return known and not keys.isdisjoint(deleted) \
        and db.session_key_of(window.session_id) is None


def store_read(db: AgentWriter, read: StoreRead, report: ImportReport,
               live: bool = False) -> None:
    """Store the windows of one store read into its agent's database. ``live``: the store is
    being written (a sync after the first): a hot window's new events that continue a stored
    session take the live write path (searchable at once, as a JSONL line followed is)."""
    folder = read.path.parent.parent / "sessions"
    view = StoreView.of(read.agent_id, read.entries, report, folder)
    # windows that left their node's key first, so that the current ones can take it
    for window in sorted(read.windows, key=lambda w: w.current):
        _settle_key(db, view, window)
    for window in read.windows:
        if not window.lines:
            continue
        # a current window is <id>.jsonl; any other one is what a reset archive is today
        name = f"{window.session_id}.jsonl" if window.current else \
            f"{window.session_id}.jsonl.reset.{_when(window.ended)}"
        file = folder / name
        part = ImportReport()
        lines, events, header = read_events(file, part, window.lines)
        report.take(part)
        key = db.session_key_of(window.session_id)
        if live and not window.archived and key is not None and header is None:
            store_live(db, SessionMeta(key, window.session_id, source="openclaw"), lines,
                       events, report)
            continue
        stored = _stored_view(view, window) if window.archived else view
        store_transcript(db, stored, file, report,
                         TranscriptRead(part, lines, [as_imported(e) for e in events], header))
        db.mark_archived(window.session_id, window.archived)  # a flag, never its label
        key = stored.key_of(window.session_id)
        if window.archived and window.current and key is not None:
            db.relink_session(stored.meta_of(key, stored.store[key]))  # stored hot before
        elif window.archived:  # an older window: its made-up label says cold too (for people)
            archive = f"agent:{view.agent_id}:reset:{window.session_id}"
            db.rekey_session(window.session_id, archive, archive_label(
                "reset", key or window.session_id, _when(window.ended)) + ARCHIVED)


def _settle_key(db: AgentWriter, view: StoreView, window: Window) -> None:
    """Move a window stored under a key it no longer has to the one the store gives it now:
    a window a reset, rollover or fork replaced, stored under its node's key while it was
    current, becomes the reset archive it would be read as now
    (``agent:<id>:reset:<sessionId>``), so the node's key goes to the current window, each
    keeping its own events; a window first taken in from the JSONL transcript a migration
    left (``<id>.jsonl.deleted.<ts>``, stored as ``agent:<id>:deleted:<sessionId>``), or read
    without a ``sessions.json`` (``agent:<id>:import:<sessionId>``), takes the store's key (its
    events are the same entries: nothing is added twice)."""
    stored = db.session_key_of(window.session_id)
    if stored is None or window.session_key.count(":") < 2:
        return
    node = normalize_key(view.own(window.session_key))
    sid = window.session_id
    leftover = normalize_key(f"agent:{view.agent_id}:deleted:{sid}")
    placeholder = normalize_key(f"agent:{view.agent_id}:import:{sid}")  # read without an index
    if window.current:
        if stored in (leftover, placeholder):
            entry = view.store.get(node) or view.store.get(window.session_key) or {}
            db.rekey_session(sid, node, entry.get("label") or entry.get("displayName"))
        return
    archive = normalize_key(f"agent:{view.agent_id}:reset:{sid}")
    if stored in (node, leftover):
        db.rekey_session(sid, archive, archive_label("reset", sid, _when(window.ended)))


def _stored_view(view: StoreView, window: Window) -> StoreView:
    """The view a cold current window is stored through: its node's label says archived."""
    key = view.key_of(window.session_id)
    if key is None:
        return view
    entry = dict(view.store[key])
    entry["label"] = (entry.get("label") or entry.get("displayName") or key) + ARCHIVED
    return StoreView(view.agent_id, {**view.store, key: entry}, view.own, view.by_session_id)
