"""Import OpenClaw sessions folders: ``sessions.json`` + ``<sessionId>.jsonl`` transcripts.

PATH may be one agent's sessions folder, or a whole state dir (``agents/*/sessions/``).
Transcripts are stored without indexing; reconciliation indexes them later (SPEC 3).

Decisions (see docs/importers.md):
- the agent id comes from the keys in ``sessions.json``, else from the folder
  (``agents/<id>/sessions`` -> ``<id>``; any other folder -> its own name);
- ``<id>.jsonl.reset.<ts>`` / ``.deleted.<ts>`` archives become their own sessions, keyed
  ``agent:<id>:reset:<sessionId>`` / ``agent:<id>:deleted:<sessionId>`` and labelled;
- a transcript with no ``sessions.json`` entry is keyed ``agent:<id>:import:<sessionId>``;
- a ``sessions.json`` entry whose transcript is missing still becomes a (message-less)
  session, so ``spawnedBy`` links keep pointing at something;
- checkpoint / backup copies, trajectories and locks are not transcripts and are skipped.
"""

from __future__ import annotations

import re
from contextlib import closing
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

from ...bounds import MAX_STORE_BYTES, decode_json, open_regular
from ...errors import ValidationError
from ...keys import check_agent_id, normalize_key
from ...labels import archive_label, import_label
from ...state import StateDir
from ...storage import AgentWriter, SessionMeta
from ...storage.stored import as_imported
from ...transcript import CANONICAL_TYPES, iso_to_ms, parse_event
from .. import readahead
from ..common import (
    ImportReport,
    NumberedLines,
    each_file,
    found_inside,
    import_path,
    json_lines,
    note_rekeyed,
    over_bound,
)

_ARCHIVE_RE = re.compile(r"^(?P<sid>.+?)\.jsonl\.(?P<kind>reset|deleted)\.(?P<ts>.+)$")
_SKIPPED_PARTS = (".trajectory.", ".checkpoint.", ".bak-", ".lock", "-path.json")

_ENTRY_TYPES = CANONICAL_TYPES | {"session", "leaf"}  # an OpenClaw transcript's entries


def import_openclaw(
    state: StateDir, path: Path, agent: str | None = None, read_ahead: bool = False
) -> ImportReport:
    """Import the transcripts under ``path``. ``read_ahead``: a big folder's files are read
    in a helper process while this one stores (``readahead.py``). It is the command line's
    choice; a library caller opts in, since a spawned helper imports the caller's main
    module again (a script without an ``if __name__ == "__main__"`` guard would run twice)."""
    if agent is not None:
        agent = check_agent_id(agent)  # before anything is read or created
    path = import_path(path)
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    if not path.is_dir():
        raise ValidationError(
            f"{path} is not a folder (give an OpenClaw sessions folder or state dir)"
        )
    report = ImportReport()
    folders = [f for f in session_folders(path) if found_inside(path, f, report)]
    for folder in folders:
        _import_folder(state, path, folder, agent, report, read_ahead)
    if not report.sessions and not report.skipped:
        raise ValidationError(
            f"{path} holds no OpenClaw transcripts (expected sessions.json and *.jsonl files, "
            "or agents/<id>/sessions/)"
        )
    return report


def session_folders(path: Path) -> list[Path]:
    """A sessions folder itself, an agent dir, a state dir, or a folder of agent folders."""
    if _holds_transcripts(path):
        return [path]
    for pattern in ("sessions", "agents/*/sessions", "*/sessions", "*"):
        found = sorted(p for p in path.glob(pattern) if p.is_dir() and _holds_transcripts(p))
        if found:
            return found
    return []


def _holds_transcripts(folder: Path) -> bool:
    return (folder / "sessions.json").is_file() or any(folder.glob("*.jsonl*"))


def _import_folder(
    state: StateDir, root: Path, folder: Path, agent: str | None, report: ImportReport,
    read_ahead: bool,
) -> None:
    store_file = folder / "sessions.json"
    inside = not store_file.exists() or found_inside(root, store_file, report)
    store = read_store(store_file, report) if inside else {}
    agent_id = agent or _agent_id(folder, store)  # checked again by the storage's door
    view = StoreView.of(agent_id, store, report, folder)
    files = [f for f in sorted(folder.iterdir()) if f.is_file() and is_transcript_name(f.name)]
    reader = partial(read_transcript, root)
    reads = readahead.read_ahead(files, reader) if read_ahead else ((f, reader(f)) for f in files)
    with state.open(agent_id, write=True) as db, db.importing(), closing(reads):
        seen_ids: set[str] = set()
        for file, read in reads:
            report.take(read.report)
            if read.lines is not None:
                with each_file(file, report):
                    if (session_id := store_transcript(db, view, file, report, read)) is not None:
                        seen_ids.add(session_id)
        for key, entry in view.store.items():
            found = entry.get("sessionId")
            if found is not None and found in seen_ids:
                continue
            meta = view.meta_of(key, entry)
            stored_as, added, messages = db.import_session(meta, [])
            note_rekeyed(report, meta.key, stored_as)
            report.add(stored_as, added, messages)
            report.notes.append(
                f"{key}: no transcript {found}.jsonl with events; kept without messages"
                if found else f"{key}: no sessionId, so no transcript; kept without messages"
            )


def transcript_session_id(name: str) -> str:
    """The session id a transcript's name gives (``<id>.jsonl``, ``<id>.jsonl.<kind>.<ts>``)."""
    archive = _ARCHIVE_RE.match(name)
    return archive.group("sid") if archive else name.removesuffix(".jsonl")


def is_transcript_name(name: str) -> bool:
    """A transcript or an archive of one, not a checkpoint, backup, trajectory or lock."""
    if any(part in name for part in _SKIPPED_PARTS):
        return False
    return name.endswith(".jsonl") or _ARCHIVE_RE.match(name) is not None


@dataclass
class StoreView:
    """One agent folder's ``sessions.json``, its keys owned by the agent they are stored in."""

    agent_id: str
    store: dict[str, dict[str, Any]]
    own: Callable[[str], str]
    by_session_id: dict[str, str]

    @classmethod
    def of(cls, agent_id: str, store: dict[str, Any], report: ImportReport, folder: Path) -> StoreView:
        own = _owner(agent_id, store, report, folder)
        owned = {own(key): entry for key, entry in store.items()}
        by_id = {entry["sessionId"]: key for key, entry in owned.items() if entry.get("sessionId")}
        return cls(agent_id, owned, own, by_id)

    def key_of(self, session_id: str) -> str | None:
        return self.by_session_id.get(session_id)

    def meta_of(self, key: str, entry: dict[str, Any]) -> SessionMeta:
        """A store entry whose transcript is not read (yet): its session without messages."""
        return _meta(key, entry.get("sessionId"), entry, entry.get("label"), None, [], self.own)


class TranscriptRead(NamedTuple):
    """A transcript read for storing (``read_transcript``): what reading it found (links not
    followed, bad lines), and unless it was not read (``lines`` None) its lines, their events
    as ``import_session`` reads them (``stored.as_imported``) and its header."""

    report: ImportReport
    lines: list[str] | None = None
    events: Sequence[dict[str, Any]] = ()
    header: dict[str, Any] | None = None


def read_transcript(root: Path, file: Path) -> TranscriptRead:
    """Read one transcript found under ``root`` (in a helper process for a big folder:
    ``readahead.py``); nothing it holds raises."""
    report = ImportReport()
    if found_inside(root, file, report):
        with each_file(file, report):
            lines, events, header = read_events(file, report)
            return TranscriptRead(report, lines, [as_imported(e) for e in events], header)
    return TranscriptRead(report)


def import_transcript(
    db: AgentWriter, view: StoreView, file: Path, report: ImportReport, lines: NumberedLines
) -> str | None:
    """Store one transcript from its ``lines`` already read; see ``store_transcript``."""
    read = TranscriptRead(report, *read_events(file, report, lines))
    return store_transcript(db, view, file, report, read)


def store_transcript(
    db: AgentWriter, view: StoreView, file: Path, report: ImportReport, read: TranscriptRead
) -> str | None:
    """Store one transcript read, keyed and labelled from the store; return its session id
    (None: no events in it, nothing stored)."""
    archive = _ARCHIVE_RE.match(file.name)
    lines_, events, header = read.lines or [], read.events, read.header
    if not lines_:
        if not over_bound(file, report.skipped):  # (a line over the bound is named already)
            report.notes.append(f"{file}: no events in it; nothing imported")
        return None
    if header is None and not any(event["type"] in _ENTRY_TYPES for event in events):
        # Another tool's JSON lines (a Claude Code or Codex transcript named by mistake)
        report.notes.append(f"{file}: not an OpenClaw transcript; skipped")
        return None
    session_id = (header or {}).get("id") or (
        archive.group("sid") if archive else file.name[: -len(".jsonl")]
    )
    key = view.key_of(session_id)
    entry = view.store.get(key, {}) if key else {}
    if archive:
        label = archive_label(archive.group("kind"), key or session_id, archive.group("ts"))
        key = f"agent:{view.agent_id}:{archive.group('kind')}:{session_id}"
    else:
        label = entry.get("label") or entry.get("displayName") or (
            None if key else import_label(file.name)
        )
        key = key or f"agent:{view.agent_id}:import:{session_id}"
    meta = _meta(key, session_id, entry, label, header, lines_, view.own)
    if not report.feeds(meta.key, file, session_id, "openclaw"):
        return None
    stored_as, added, messages = db.import_session(meta, lines_, events)
    note_rekeyed(report, meta.key, stored_as)
    report.add(stored_as, added, messages)
    return session_id


def _owner(
    agent_id: str, store: dict[str, Any], report: ImportReport, folder: Path
) -> Callable[[str], str]:
    """Keys stored in an agent's database must name that agent (or no caller could reach
    them): keys of another agent in this folder's store (``--agent``, or a store shared by
    several agents) are re-keyed ``agent:<agent_id>:<rest>``, and so are links to them."""
    foreign = {key.split(":")[1] for key in store} - {agent_id}
    if foreign:
        report.notes.append(
            f"{folder}: keys of agent {', '.join(sorted(foreign))} stored as agent {agent_id}"
        )

    def own(key: str) -> str:
        _, agent, rest = key.split(":", 2)
        return f"agent:{agent_id}:{rest}" if agent in foreign else key

    return own


def read_store(path: Path, report: ImportReport, follow: bool = True) -> dict[str, dict[str, Any]]:
    """sessions.json, read defensively: missing or broken means no metadata, not failure; a
    field of the wrong type is dropped (the entry keeps the rest). Opened without blocking,
    and only if it is a regular file (``follow=False``: not through a symbolic link)."""
    if not (path.is_file() if follow else path.is_file() and not path.is_symlink()):
        return {}
    try:
        with open_regular(path, follow) as handle:
            data = decode_json(handle.read(MAX_STORE_BYTES + 1), MAX_STORE_BYTES)
    except (OSError, ValidationError) as err:
        report.skipped.append(
            f"{path}: unreadable session store ({getattr(err, 'strerror', None) or err}); "
            "transcripts imported without it"
        )
        return {}
    if not isinstance(data, dict):
        report.skipped.append(f"{path}: not a JSON object; ignored")
        return {}
    store = {}
    for key, entry in data.items():
        try:
            store[normalize_key(key)] = _clean_entry(entry, f"{path}: {key!r}", report)
        except ValidationError as err:
            report.skipped.append(f"{path}: {err}; entry skipped")
    return store


# The fields of a sessions.json entry this importer reads: text, and times (epoch ms or ISO).
_TEXT_FIELDS = ("sessionId", "label", "displayName", "spawnedBy", "parentSessionKey")
_TIME_FIELDS = ("updatedAt", "sessionStartedAt", "startedAt")


def _clean_entry(entry: Any, where: str, report: ImportReport) -> dict[str, Any]:
    """The fields read from one entry; one of the wrong type is named and dropped."""
    if not isinstance(entry, dict):
        report.skipped.append(f"{where}: not a JSON object; kept without metadata")
        return {}
    clean = {}
    for name in (*_TEXT_FIELDS, *_TIME_FIELDS):
        value = entry.get(name)
        if value is None:
            continue
        if name in _TIME_FIELDS and iso_to_ms(value):
            clean[name] = value
        elif name in _TEXT_FIELDS and isinstance(value, str) and value:
            clean[name] = value
        else:
            what = "time" if name in _TIME_FIELDS else "string"
            report.skipped.append(f"{where}: {name} is not a {what}; ignored")
    return clean


def _agent_id(folder: Path, store: dict[str, Any]) -> str:
    agents = {key.split(":")[1] for key in store}
    if len(agents) == 1:
        return agents.pop()
    return folder_agent_id(folder)


def folder_agent_id(folder: Path) -> str:
    """The agent a sessions folder belongs to by its place: ``agents/<id>/sessions`` -> id."""
    name = folder.parent.name if folder.name == "sessions" else folder.name
    return re.sub(r"[^a-z0-9_.-]", "-", name.lower()).strip("-.") or "main"


def read_events(
    file: Path, report: ImportReport, lines: NumberedLines | None = None
) -> tuple[list[str], list[dict[str, Any]], dict[str, Any] | None]:
    """(lines, their events, the header) of a transcript, bad lines reported."""
    texts: list[str] = []
    events: list[dict[str, Any]] = []
    header = None
    for lineno, line, value in json_lines(file, report, lines):
        try:
            event = parse_event(value)
        except ValidationError as err:
            report.skip(file, lineno, str(err))
            continue
        if event["type"] == "session" and header is None:
            header = event
        texts.append(line)
        events.append(event)
    return texts, events, header


def _meta(
    key: str,
    session_id: str | None,
    entry: dict[str, Any],
    label: str | None,
    header: dict[str, Any] | None,
    lines: list[str],
    own: Callable[[str], str],
) -> SessionMeta:
    created = iso_to_ms((header or {}).get("timestamp")) or iso_to_ms(
        entry.get("sessionStartedAt") or entry.get("startedAt") or entry.get("updatedAt")
    )
    return SessionMeta(
        key=key,
        session_id=session_id,
        spawned_by=_key_or_none(entry.get("spawnedBy"), own),
        parent_key=_key_or_none(entry.get("parentSessionKey"), own),
        label=label if isinstance(label, str) else None,
        created_at=created or None,
        updated_at=iso_to_ms(entry.get("updatedAt")) or created or None,
        source="openclaw",
    )


def _key_or_none(value: Any, own: Callable[[str], str]) -> str | None:
    try:
        return own(normalize_key(value)) if value else None
    except ValidationError:
        return None

