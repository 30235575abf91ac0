"""What every importer shares: the report, reading JSON lines with ``file:line: reason``,
the agent id to import into, short labels, and storing converted sessions.

Importers never import each other; what two of them need lives here.
"""

from __future__ import annotations

import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..bounds import check_encoded, open_regular, read_lines, too_long
from ..errors import ValidationError
from ..formats import get
from ..keys import check_agent_id, normalize_key
from ..redact import redact
from ..storage import AgentWriter, SessionMeta
from ..transcript import active_branch, decode_line, moves_leaf, parse_event

if TYPE_CHECKING:
    from ..state import StateDir

LABEL_CHARS = 80


@dataclass
class ImportReport:
    """What an import did: sessions touched, events added, lines skipped (``file:line: why``)."""

    sessions: int = 0
    events: int = 0
    messages: int = 0  # of the events, message events
    keys: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    holders: dict[str, str] = field(default_factory=dict)  # session key -> the file feeding it
    # keys deleted in backscroll from the file being read (sync sets it; ``sources/deleted.py``)
    deleted: frozenset[str] = frozenset()

    def add(self, key: str, events: int, messages: int = 0) -> None:
        self.sessions += 1
        self.events += events
        self.messages += messages
        self.keys.append(key)

    def take(self, part: ImportReport) -> None:
        """Add what a part of the import (a file read elsewhere) skipped and noted."""
        self.skipped += part.skipped
        self.notes += part.notes

    def feeds(self, key: str, file: Path, session_id: str | None, kind: str | None) -> bool:
        """Whether ``file`` may feed session ``key`` (id ``session_id``) in this import: the
        file named after the session id holds it (``<id>.jsonl``, ``rollout-*-<id>.jsonl``
        beside it), else the first file that feeds it; another file naming it (its header or
        records name that session id) is noted and kept apart, so it cannot plant turns in a
        conversation it does not hold."""
        key, path = normalize_key(key), str(file)
        named = _named_after(file, session_id)
        if named is not None:
            self.holders.setdefault(key, str(named))
        holder = self.holders.setdefault(key, path)
        if holder == path or same_family(kind, key, path, holder):
            return True
        self.skip(file, None, f"names session {key}, which {holder} holds; not taken in "
                  "(a session is fed by the file that holds it)")
        return False

    def skip(self, file: Path, lineno: int | None, reason: str) -> None:
        self.skipped.append(f"{file}:{lineno}: {reason}" if lineno else f"{file}: {reason}")

    def as_json(self) -> dict[str, object]:
        return {
            "sessions": self.sessions,
            "events": self.events,
            "skipped": [redact(line) for line in self.skipped],  # they quote keys and ids
            "notes": [redact(line) for line in self.notes],
        }


NumberedLines = Iterable[tuple[int, "bytes | int"]]  # (line number, the raw line or its length)
_SALVAGE_TRIES = 8
MAX_SKIPS_PER_FILE = 20  # malformed lines named one by one; beyond, one line counts them
BINARY_PROBE_BYTES = 8192


def json_lines(
    file: Path, report: ImportReport, lines: NumberedLines | None = None
) -> Iterator[tuple[int, str, Any]]:
    """(line number, text, decoded value) of each non-blank line of ``file`` (or of ``lines``
    already read from it), decoded within the entry bounds (``bounds.py``); a line that is too
    long, not UTF-8 or not JSON is reported as ``file:line: reason`` and skipped, never
    raised. Junk in front of a whole JSON object (bytes written into a line that a writer then
    completed) is dropped and reported. A binary file (a NUL byte in its first block, and no
    JSON object among that block's lines) is one skip, and after ``MAX_SKIPS_PER_FILE``
    complaints the rest are counted."""
    if lines is not None:
        yield from _decoded(file, report, lines)
        return
    try:
        handle = open_regular(file)  # never waits: a FIFO swapped in is named, not read
    except OSError as err:
        report.skip(file, None, f"cannot read ({err.strerror or err})")
        return
    with handle:
        if _binary(handle.peek(BINARY_PROBE_BYTES)[:BINARY_PROBE_BYTES]):
            report.skip(file, None, "a binary file, not JSON lines; skipped")
            return
        yield from _decoded(file, report, enumerate(read_lines(handle), start=1))


def _decoded(file: Path, report: ImportReport, lines: NumberedLines) -> Iterator[tuple[int, str, Any]]:
    skipped = 0
    for lineno, raw in lines:
        try:
            if isinstance(raw, int):
                raise ValidationError(too_long(raw))
            raw = raw.strip()
            if not raw:
                continue
            value = decode_line(raw)
        except ValidationError as err:
            salvaged = _after_junk(raw) if isinstance(raw, bytes) else None
            if salvaged is None:
                skipped += 1
                if skipped <= MAX_SKIPS_PER_FILE:
                    report.skip(file, lineno, str(err))
                continue
            cut, value = salvaged
            report.skip(file, lineno, f"{cut} bytes of junk before the record dropped")
            raw = raw[cut:]
        yield lineno, raw.decode("utf-8").lstrip("\ufeff"), value
    if skipped > MAX_SKIPS_PER_FILE:
        report.skip(file, None, f"{skipped - MAX_SKIPS_PER_FILE} more malformed lines skipped")


def over_bound(file: Path, skipped: list[str]) -> list[str]:
    """Of a file's bad lines (``json_lines``' sentences), those over the size bound: they
    say nothing of what the file is, so a reader that finds no record of its format names
    them rather than calling the file "not a transcript"."""
    return [line for line in skipped
            if line.startswith(f"{file}:") and line.endswith(_OVER_BOUND)]


_OVER_BOUND = ";" + too_long(0).split(";", 1)[1]  # "; the limit is 32.0 MB"


def _binary(head: bytes) -> bool:
    """Whether a file's first block says it is not JSON lines: a NUL byte, and no line of the
    block holds a JSON object. NUL bytes a crash left between whole lines of a transcript
    being appended to are one bad line, not a binary file."""
    if b"\0" not in head:
        return False
    for raw in head.split(b"\n"):
        line = raw.strip()
        try:
            if isinstance(decode_line(line), dict):
                return False
        except ValidationError:
            if _after_junk(line) is not None:
                return False
    return True


def _after_junk(raw: bytes) -> tuple[int, Any] | None:
    """(junk length, object) when the line ends in a whole JSON object after some junk."""
    start = 0
    for _ in range(_SALVAGE_TRIES):
        start = raw.find(b'{"', start + 1)
        if start < 0:
            return None
        try:
            value = decode_line(raw[start:])
        except ValidationError:
            continue
        if isinstance(value, dict):
            return start, value
    return None


def found_inside(root: Path, found: Path, report: ImportReport) -> bool:
    """Whether a file or folder found under ``root`` really is there: a symbolic link that
    leads out of the folder given is not followed (noted once)."""
    try:
        real, base = found.resolve(), root.resolve()
    except (OSError, RuntimeError) as err:  # a link loop
        report.notes.append(f"{found}: cannot be resolved ({err}); not followed")
        return False
    if real == base or real.is_relative_to(base):
        return True
    report.notes.append(f"{found}: a link to {real}, outside {root}; not followed")
    return False


# What data no rule foresaw raises while one file is converted or stored: it stops that file
DATA_ERRORS = (ValidationError, ValueError, TypeError, KeyError, AttributeError, OverflowError,
               RecursionError)


def data_problem(err: BaseException) -> str:
    """Why a file's data stopped it (one of ``DATA_ERRORS``), as part of a sentence."""
    if isinstance(err, ValidationError):
        return str(err)
    return f"stopped by unexpected data ({type(err).__name__}: {err})"


@contextmanager
def each_file(file: Path, report: ImportReport) -> Iterator[None]:
    """One file's import: data no rule foresaw (or a key its ids cannot make) stops this file,
    never the import. A store error (the database itself) still stops everything."""
    try:
        yield
    except ValidationError as err:
        report.skip(file, None, f"{err}; the rest of this file is not imported")
    except DATA_ERRORS as err:
        report.skip(
            file, None, f"import {data_problem(err)}; "
            "sessions stored before it are kept, the rest of this file is not imported"
        )


def import_each(state: StateDir, agent_id: str, files: list[Path], report: ImportReport,
                nothing: str, one: Callable[[AgentWriter, Path], object]) -> ImportReport:
    """Store each of ``files`` with ``one(db, file)``, a file's bad data stopping that file
    alone (``each_file``). No files: the report when finding them left notes, else
    ``ValidationError(nothing)``."""
    if not files and report.notes:
        return report
    if not files:
        raise ValidationError(nothing)
    with state.open(agent_id, write=True) as db, db.importing():
        for file in files:
            with each_file(file, report):
                one(db, file)
    return report


def _named_after(file: Path, session_id: str | None) -> Path | None:
    """Another transcript beside ``file`` named after ``session_id``, when ``file``'s own name
    does not carry it."""
    if not session_id or session_id in file.name or not _PLAIN_ID.match(session_id):
        return None
    own = file.parent / f"{session_id}.jsonl"
    if own.is_file():
        return own
    return next(iter(file.parent.glob(f"rollout-*-{session_id}.jsonl")), None)


_PLAIN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def same_family(kind: str | None, key: str, path: str, holder: str) -> bool:
    """Two files that both feed ``key`` by design, by the rule of the format of ``kind`` (if
    it has one: Claude Code's sub-agent files, ``claude_code/format.py``)."""
    fmt = get(kind)
    rule = fmt.doors.same_family if fmt is not None else None
    return rule is not None and rule(key, path, holder)


def import_path(path: str | Path) -> Path:
    """The PATH an import was given, ``~`` expanded; an empty one (``Path("")`` is the current
    directory, which nobody means by an empty argument) or one that does not exist is
    refused."""
    if not str(path).strip():
        raise ValidationError("the path to import is empty: give a folder or a transcript file")
    found = Path(path).expanduser()
    if not found.exists():
        raise ValidationError(f"{found} does not exist")
    return found


def import_start(path: str | Path, agent: str | None,
                 default_agent: str) -> tuple[Path, str, ImportReport]:
    """What an import begins with: the PATH given (``import_path``), the agent id it imports
    into (``import_agent_id``: the one given, else ``default_agent``), and a new report."""
    return import_path(path), import_agent_id(agent, default_agent), ImportReport()


def files_under(path: Path, pattern: str, report: ImportReport,
                keep: Callable[[Path], bool] = lambda _file: True,
                recursive: bool = True) -> list[Path]:
    """The files an import of ``path`` reads: ``path`` itself when it is a file (named by the
    user: followed even when it is a link), else, sorted, the files whose names match
    ``pattern`` under it (in it only, without ``recursive``) that ``keep`` keeps; a link that
    leads out of ``path`` is noted and not followed (``found_inside``)."""
    if path.is_file():
        return [path]
    found = path.rglob(pattern) if recursive else path.glob(pattern)
    return sorted(p for p in found if p.is_file() and keep(p) and found_inside(path, p, report))


def import_agent_id(agent: str | None, default: str) -> str:
    """The agent id to import into: the one given (checked), else the importer's default."""
    return check_agent_id(agent if agent is not None else default)


def label_of(project: str, what: str, lead: str = "") -> str:
    """A session's label: ``<project>: <lead><what>`` on one line, cut. ``what`` (a first
    prompt, a task) is redacted before anything else, as it is: a cut through a secret would
    leave a part no rule knows, and a prefix would hide a command's start
    (``app: mysql -pS3cret``). The project (a cwd's folder) is redacted on its own for the
    same reason."""
    what = lead + redact(what)
    project = redact(project)
    return shorten(f"{project}: {what}" if project else what)


def shorten(text: str, limit: int = LABEL_CHARS) -> str:
    """One line of at most ``limit`` characters, cut at a word when possible."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,.;:") + "…"


def store_converted(
    db: AgentWriter,
    meta: SessionMeta,
    events: list[dict[str, Any]],
    report: ImportReport,
    file: Path,
    live: bool = False,
) -> None:
    """Store converted events (header first) and record the session in the report.

    When some of the events were stored by an earlier import and the new ones fill a gap (a
    line that was malformed then), the stored order no longer ends at the transcript's leaf;
    a ``leaf`` control then points the session back at it, so the active branch is the one
    the source file has. ``live``: the events continue a transcript being written, and take
    the live write path instead (``store_live``).
    """
    if not report.feeds(meta.key, file, meta.session_id, meta.source):
        return
    lines: list[str] = []
    parsed: list[dict[str, Any]] = []
    for event in events:
        line = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
        try:
            check_encoded(event, line)  # converting may nest a record a little deeper
            parsed.append(parse_event(event))
        except ValidationError as err:
            report.skip(file, None, f"entry {event.get('id')}: {err}")
            continue
        lines.append(line)
    if live:
        store_live(db, meta, lines, parsed, report)
        return
    key, added, messages = db.import_session(meta, lines, parsed)
    note_rekeyed(report, meta.key, key)
    if 0 < added < len(lines):
        leaf = next((e["id"] for e in reversed(parsed) if moves_leaf(e) and e.get("id")), None)
        session = db.session(key, db.host)  # this machine's: the one just imported
        if leaf is not None and session is not None:
            stored = db.events(session.pk)
            if active_branch(stored).leaf != leaf:
                control = {"type": "leaf", "targetId": leaf, "afterSeq": session.last_seq}
                db.import_session(meta, [json.dumps(control, separators=(",", ":"))], [control])
                added += 1
    report.add(key, added, messages)


def note_rekeyed(report: ImportReport, wanted: str, key: str) -> None:
    """The note for a session stored under another key than its own: the key already names
    another transcript's session (an OpenClaw reset, two hosts' ``agent:main:main``), so this
    one is kept apart as ``<key>:import-<sessionId>``."""
    if key != wanted.lower():
        report.notes.append(f"{wanted}: that key already names another transcript's session; "
                            f"this one is stored as {key}")


def store_live(
    db: AgentWriter,
    meta: SessionMeta,
    lines: list[str],
    parsed: list[dict[str, Any]],
    report: ImportReport,
) -> None:
    """Store the new events of a transcript being written through the live write path: each
    is indexed in the same transaction when it extends the active leaf (so it is searchable at
    once), else the session is left for reconciliation. Events the session already holds
    (same id) are not stored again; a header only opens a session that does not exist yet.
    The session is found by its id first, as ``import_session`` finds it."""
    key = db.session_key_of(meta.session_id) if meta.session_id else None
    exists = key is not None or db.session(meta.key, db.host) is not None
    meta = meta._replace(key=key or meta.key)
    added = messages = 0
    for line, event in zip(lines, parsed):
        if event["type"] == "session" and exists:
            continue
        if db.append(meta, line, skip_known=True).outcome != "known":
            added += 1
            messages += event["type"] == "message"
        exists = True
    report.add(normalize_key(meta.key), added, messages)


@dataclass(frozen=True)
class Followed:
    """What reading on in a transcript being written did. ``carry``: what the next read
    needs to go on from where this one stopped (JSON, kept with the file's state); ``restart``:
    the new lines need more of the file than the carry holds, nothing was stored, and the file
    is to be read from the start (what is stored already is recognised by id)."""

    carry: str | None = None
    restart: bool = False


RESTART = Followed(restart=True)


def deleted_here(report: ImportReport, key: str, file: Path) -> bool:
    """A conversation read whole from ``file`` that was deleted in backscroll (``key`` in
    ``report.deleted``, which sync sets; ``sources/deleted.py``): said once, not taken in."""
    if not report.deleted or normalize_key(key) not in report.deleted:
        return False
    report.notes.append(f"{file}: holds a conversation deleted in backscroll; not taken in "
                        "again")
    return True
