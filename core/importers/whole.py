"""What the importers of whole-file formats share: files an agent rewrites whole on every change
(a JSON document, not a log of lines). Sync hands their followers no lines (``Doors.whole``):
the follower reads the file itself each time it changes, every entry gets an id derived from
its content (the format has none, or none that survive a rewrite), and what is stored already
is recognised by that id, so a re-read stores nothing twice and a file the agent trimmed loses
nothing backscroll holds."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..bounds import MAX_STORE_BYTES, decode_json, open_regular
from ..errors import ValidationError
from ..keys import normalize_key
from .common import ImportReport


def read_json(path: Path, report: ImportReport, what: str) -> Any | None:
    """The JSON document in ``path`` (at most ``MAX_STORE_BYTES``), or None with one sentence
    in ``report`` saying why not (``what``: what the file should be, for that sentence)."""
    try:
        with open_regular(path, follow=False) as handle:
            raw = handle.read(MAX_STORE_BYTES + 1)
    except OSError as err:
        report.skip(path, None, f"cannot be read ({err.strerror or err})")
        return None
    if not raw.strip():
        report.notes.append(f"{path}: empty; nothing imported")
        return None
    try:
        return decode_json(raw, MAX_STORE_BYTES)
    except ValidationError as err:
        report.skip(path, None, f"not {what} ({err}); nothing imported from it")
        return None


def read_json_quietly(path: Path) -> Any | None:
    """A side file (a task's title, an index): its JSON, or None when absent or unreadable
    (the conversation is imported without what it would have said)."""
    try:
        with open_regular(path, follow=False) as handle:
            return decode_json(handle.read(MAX_STORE_BYTES + 1), MAX_STORE_BYTES)
    except (OSError, ValidationError):
        return None


def derived_id(prefix: str, *parts: Any) -> str:
    """A stable id from an entry's content: the same entry gives the same id in every rewrite."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)
    return prefix + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def ms_to_iso(ms: Any) -> str | None:
    """Epoch milliseconds as the ISO time the entries carry (None: not a plausible time)."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms < 2**53:
        return None
    try:
        when = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None
    return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def iso(ms: int) -> str:
    """Epoch milliseconds as an ISO time with milliseconds, ``Z`` for UTC (Cursor editor, Zed)."""
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


def append_linked(events: list[dict[str, Any]], entry: dict[str, Any], when: int | None) -> None:
    """Append ``entry`` hanging from the entry before it (none when only the header is there),
    stamped with ``when`` (its message too) when known (Cursor editor, Zed)."""
    entry["parentId"] = events[-1]["id"] if len(events) > 1 else None
    if when:
        entry["timestamp"] = iso(when)
        if "message" in entry:
            entry["message"]["timestamp"] = when
    events.append(entry)


def chain(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each entry hangs from the one before (a whole file is one line of conversation); an
    entry met twice (same derived id) is kept once."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for entry in entries:
        if entry["id"] in seen:
            continue
        seen.add(entry["id"])
        entry["parentId"] = out[-1]["id"] if out else None
        out.append(entry)
    return out


def unseen(events: list[dict[str, Any]], mark: Any, key: str | None = None,
           report: ImportReport | None = None) -> tuple[list[dict[str, Any]], list[Any]]:
    """``events`` (header first) without the entries the last read stored, when the file still
    begins with them (it grew: the common change), and this read's mark for the next one. The
    mark is how many entries were read and a hash of their ids; a file that no longer begins
    with them (trimmed, condensed, edited) gives every entry, and the stored ones are
    recognised by id as always.

    A conversation deleted in backscroll (``key`` in ``report.deleted``, SECURITY.md 3) gives
    only what the file gained after it (its session opens anew on that), and nothing (``[]``:
    store nothing) when the file no longer begins with what was read: what it holds then
    cannot be told apart from the deleted entries, so none of it is taken in again (and the
    mark stays the last one, so entries a later rewrite adds after it are taken in)."""
    ids = [str(e.get("id")) for e in events[1:]]
    new_mark = [len(ids), _ids_hash(ids)]
    deleted = (key is not None and report is not None and bool(report.deleted)
               and normalize_key(key) in report.deleted)
    if (isinstance(mark, list) and len(mark) == 2 and isinstance(mark[0], int)
            and 0 < mark[0] <= len(ids) and _ids_hash(ids[:mark[0]]) == mark[1]):
        if deleted and mark[0] == len(ids):
            return [], new_mark  # nothing after the delete: not even an empty session
        return [events[0], *events[1 + mark[0]:]], new_mark
    if deleted:
        assert report is not None
        report.notes.append(f"{key}: deleted in backscroll and its file rewritten since; "
                            "not taken in again")
        return [], mark  # (kept: what a later rewrite adds after it is still told apart)
    return events, new_mark


def _ids_hash(ids: list[str]) -> str:
    return hashlib.blake2b("\n".join(ids).encode("utf-8", "surrogatepass"),
                           digest_size=12).hexdigest()


def load_carry(carry: str | None) -> dict[str, Any]:
    """A whole-file follower's carry (what it read last time), or {} for none or another
    version's."""
    if carry is None:
        return {}
    try:
        value = json.loads(carry)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def dump_carry(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
