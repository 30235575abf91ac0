"""Rules about stored events that every backend applies alike (no SQL here): which id an
event is stored under, which lines of an import a session already holds, and how a stored
row is read back. The tree rules load only with the write path (a search reads rows back,
nothing more: tests/test_cli_start.py)."""

from __future__ import annotations

import json
from typing import Any, Iterable, NamedTuple

from ..bounds import decode_json
from ..errors import ValidationError


def stored_entry_id(event: dict[str, Any]) -> str | None:
    """The entry id an event is stored and found by: none for a header or a leaf control,
    nor for an id-less entry (whose tree id, ``#<seq>``, is only positional:
    ``transcript.node_id``)."""
    entry_id = event.get("id")
    if (event.get("type") in ("session", "leaf") or not isinstance(entry_id, str) or not entry_id
            or entry_id.startswith("#")):
        return None
    return entry_id


def as_imported(event: dict[str, Any]) -> dict[str, Any]:
    """What ``import_session`` reads of a parsed event: its type and id (``stored_entry_id``),
    and a header whole (a backend reads its cwd). Much cheaper to send between processes
    than the event (``importers/readahead.py``)."""
    if event.get("type") == "session":
        return event
    return {"type": event.get("type"), "id": event.get("id")}


class NewEvent(NamedTuple):
    seq: int
    entry_id: str | None
    kind: str
    line: str
    event: dict[str, Any]


def new_events(lines: list[str], parsed: list[dict[str, Any]] | None, last_seq: int,
               seen_ids: set[str], seen_bodies: set[str]) -> list[NewEvent]:
    """The lines of an import a session does not hold yet, numbered after ``last_seq``:
    entries already stored are recognised by id (id-less ones by their exact text). Repeats
    inside the lines are data (the tree rules report and ignore duplicate ids): kept."""
    from ..transcript import parse_event

    added: list[NewEvent] = []
    for n, line in enumerate(lines):
        event = parsed[n] if parsed is not None else parse_event(line)
        seq = last_seq + len(added) + 1
        entry_id = stored_entry_id(event)
        if (entry_id and entry_id in seen_ids) or (not entry_id and line in seen_bodies):
            continue
        added.append(NewEvent(seq, entry_id, event.get("type"), line, event))
    return added


# branch_seq of a branch whose messages are not stored: they are not in log order (an entry
# names a parent written after it), and stored ones are read back in log order. Readers then
# compute the branch from the log (it never equals last_seq), and the catch-up skips it: only
# a rebuild, which a move of the leaf asks for, can give the branch another order.
UNORDERED_BRANCH = -1


def in_log_order(batch: list[tuple[int, int, list[Any]]]) -> list[tuple[int, int, list[Any]]]:
    """Branch messages ``(pk, seq, shown)`` to store: as they are when ``shown`` is in log
    order, else none, under ``UNORDERED_BRANCH``."""
    return [(pk, seq, shown) if all(a[0] < b[0] for a, b in zip(shown, shown[1:]))
            else (pk, UNORDERED_BRANCH, []) for pk, seq, shown in batch]


def id_spellings(entry_id: str) -> tuple[str, str]:
    """How an id is spelled inside a stored line: as a JSON string written with its
    non-ASCII characters as they are, or escaped (``\\uXXXX``; the same for ASCII)."""
    return json.dumps(entry_id, ensure_ascii=False)[1:-1], json.dumps(entry_id)[1:-1]


def names_as_parent(rows: Iterable[tuple[int, str]], node: str) -> bool:
    """Whether one of the stored events ``rows`` names ``node`` as its parent."""
    return any(event.get("parentId") == node for _seq, event in parse_events(rows))


def parse_events(rows: Iterable[tuple[int, str]], problems: list[str] | None = None
                 ) -> list[tuple[int, dict[str, Any]]]:
    """Stored events parsed within the entry bounds but their size (an event stored before
    the bounds is read whole); a row that does not parse, stored by an older backscroll, is
    skipped and named in ``problems``, never raised."""
    parsed = []
    for seq, body in rows:
        try:
            event: Any = decode_json(body, max_bytes=None)
        except ValidationError as err:
            event = err
        if isinstance(event, dict):
            parsed.append((seq, event))
        elif problems is not None:
            reason = event if isinstance(event, ValidationError) else "not a JSON object"
            problems.append(f"event {seq}: {reason}; skipped")
    return parsed
