"""Converting a read :class:`Transcript` into one :class:`Group` of OpenClaw entries per session
(the main session and each sidechain): which session a record belongs to, titles, and the tree
links (``parentId``) between entries. Each record's own entries come from ``entries``."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ...transcript import iso_to_ms
from ..common import ImportReport
from ..usage import increment, with_usage
from .blocks import plain_text, response_usage
from .entries import EntryMaker
from .reading import Transcript

_NAMESPACE = uuid.UUID("8f0c6f0e-6b43-4d4e-9a53-1f3c2a6f5b71")


@dataclass
class Group:
    """The records of one session inside a file: the main session or one sidechain."""

    session_id: str
    key: str
    parent_key: str | None = None
    agent_sub_id: str | None = None
    parent_session_id: str | None = None
    entries: list[dict[str, Any]] = field(default_factory=list)
    cwd: str | None = None
    first_ts: str | None = None
    times: list[int] = field(default_factory=list)
    first_prompt: str | None = None
    title: str | None = None


@dataclass
class Carry:
    """What the records after the converted ones need to convert as the whole file would:
    the file's session id, where the latest records' children hang (``exits``: uuid -> [entry
    id or None, its group], for progress lines too, whose children hang from their nearest
    kept ancestor), which groups have started, the latest tool names, the last time, and the
    usage the latest responses' lines have carried (``counted``: message id -> usage)."""

    main: str | None = None
    exits: dict[str, list[str | None]] = field(default_factory=dict)
    started: list[str] = field(default_factory=list)
    tool_names: dict[str, str] = field(default_factory=dict)
    last_ts: str | None = None
    counted: dict[str, dict[str, Any]] = field(default_factory=dict)


CARRY_UUIDS = 512  # records remembered for the next read; an older parent means a full read
CARRY_TOOLS = 256
CARRY_RESPONSES = 64


class Converter:
    """Turn one transcript's records into groups of entries (``convert``). With a ``carry``,
    the records continue a file converted up to there; a record that needs more of the file
    than the carry holds is counted in ``misses`` (the caller then converts the whole file)."""

    def __init__(
        self, transcript: Transcript, agent_id: str, report: ImportReport, carry: Carry | None = None
    ) -> None:
        self.transcript = transcript
        self.file = transcript.file
        self.by_uuid = transcript.by_uuid
        self.agent_id = agent_id
        self.report = report
        self.exit_ids: dict[str, str | None] = {}  # record uuid -> id its children hang from
        self.entry_group: dict[str, str] = {}  # entry id -> session id of its group
        self.groups: dict[str, Group] = {}
        self.make = EntryMaker(transcript)
        self.resuming = carry is not None
        self.before = carry or Carry()
        self.started: set[str] = set(self.before.started)
        self.misses = 0
        self.counted: dict[str, dict[str, Any]] = dict(self.before.counted)
        for uid, (exit_id, group) in self.before.exits.items():
            self.exit_ids[uid] = exit_id
            if exit_id is not None and group is not None:
                self.entry_group[exit_id] = group

    def _group_for(self, record: dict[str, Any]) -> Group:
        main_sid = self.transcript.main_session_id or self.file.stem
        if not record.get("isSidechain"):
            sid = main_sid
            if sid not in self.groups:
                self.groups[sid] = Group(sid, f"agent:{self.agent_id}:claude-code:{sid}")
            return self.groups[sid]
        parent_sid = (
            record.get("sessionId") if isinstance(record.get("sessionId"), str) else main_sid
        )
        sub = (
            record.get("agentId")
            if isinstance(record.get("agentId"), str) and record.get("agentId")
            else None
        )
        if sub is None and self.file.stem.startswith("agent-"):
            sub = self.file.stem[len("agent-") :]
        sid = str(uuid.uuid5(_NAMESPACE, f"claude-code:{parent_sid}:{sub or 'sidechain'}"))
        if sid not in self.groups:
            self.groups[sid] = Group(
                sid,
                f"agent:{self.agent_id}:subagent:{sub or parent_sid}",
                parent_key=f"agent:{self.agent_id}:claude-code:{parent_sid}",
                agent_sub_id=sub,
                parent_session_id=parent_sid,
            )
        return self.groups[sid]

    def convert(self) -> dict[str, Group]:
        """The groups by session id, entries linked into trees; notes what was ignored."""
        pending: list[tuple[Group, str | None, bool, list[dict[str, Any]]]] = []
        emitted: set[str] = set(self.before.exits)
        last_ts: str | None = self.before.last_ts
        duplicates = untrusted = 0
        for _lineno, record in self.transcript.records:
            kind = record.get("type")
            ts = record.get("timestamp") if isinstance(record.get("timestamp"), str) else last_ts
            last_ts = ts or last_ts
            uid = (
                record.get("uuid")
                if isinstance(record.get("uuid"), str) and record.get("uuid")
                else None
            )
            if uid is not None:
                if uid in emitted:
                    duplicates += 1
                    continue
                emitted.add(uid)
            if kind in ("summary", "custom-title", "ai-title"):
                if not self._title(record):
                    untrusted += 1
                continue
            if uid is None or kind not in ("user", "assistant", "system"):
                continue  # progress, snapshots, queue operations: bookkeeping
            group = self._group_for(record)
            if isinstance(record.get("cwd"), str) and group.cwd is None:
                group.cwd = record["cwd"]
            if ts:
                group.first_ts = group.first_ts or ts
                ms = iso_to_ms(ts)
                if ms:
                    group.times.append(ms)
            entries = self.make.of(record, uid, ts)
            if entries is None:  # folded into another entry (compact summary)
                self.exit_ids[uid] = self.make.folded[uid]
                continue
            if kind == "assistant" and entries:
                self._count(record, entries[0]["message"])
            if group.first_prompt is None:
                group.first_prompt = _first_prompt(entries)
            if not entries:
                continue
            for entry in entries:
                self.entry_group[entry["id"]] = group.session_id
            self.exit_ids[uid] = entries[-1]["id"]
            parent_uuid = record.get("parentUuid")
            root = not parent_uuid
            if kind == "system" and record.get("subtype") == "compact_boundary" and root:
                parent_uuid, root = record.get("logicalParentUuid"), False
            parent_uuid = parent_uuid if isinstance(parent_uuid, str) else None
            pending.append((group, parent_uuid, root, entries))
        started = self.started
        for group, parent_uuid, root, entries in pending:
            parent = self._resolve(parent_uuid)
            if parent is not None and self.entry_group.get(parent) != group.session_id:
                parent = None  # a sidechain's first record points into its parent's file
            if parent in {entry["id"] for entry in entries}:
                parent = None  # a record naming itself as its parent
            if root and group.session_id in started:
                # A second root (an edited first prompt): a parentless entry would continue
                # the current leaf, so clear the leaf first and the entry starts a new tree.
                group.entries.append(
                    {"type": "leaf", "targetId": None, "beforeId": entries[0]["id"]}
                )
            # Otherwise a parent that cannot be found continues from the entry before it.
            entries[0]["parentId"] = parent
            group.entries.extend(entries)
            started.add(group.session_id)
        if duplicates:
            self.report.notes.append(
                f"{self.file}: {duplicates} records with a repeated uuid ignored"
            )
        if untrusted:
            self.report.notes.append(
                f"{self.file}: {untrusted} summary lines about other sessions ignored"
            )
        return self.groups

    def _count(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        """Put the usage of an assistant line on its message, once per API response: Claude
        Code writes one response as several lines (one per content block, the same message
        id), each repeating the usage so far. Each line carries what it adds to the lines
        before it (``increment``): the first the input and cache counts, a later one the
        output written since. The same in a whole read and in one that goes on from a carry,
        so an entry stored by one read is the entry another read makes."""
        usage = response_usage(record["message"], record)
        if usage is None:
            return
        response = message.get("responseId")
        if not isinstance(response, str):
            with_usage(message, usage)
            return
        with_usage(message, increment(usage, self.counted.pop(response, None)))
        self.counted[response] = usage

    def _resolve(self, parent_uuid: str | None) -> str | None:
        """The entry a record hangs from: its parent, or the parent's nearest kept ancestor."""
        exit_id, certain = self._walk(parent_uuid)
        if not certain:
            self.misses += 1
        return exit_id

    def _walk(self, uid: str | None) -> tuple[str | None, bool]:
        """(the entry ``uid``'s children hang from, whether that is certain): when resuming, a
        uuid that is neither read nor carried may be in the part of the file not read."""
        seen: set[str] = set()
        current = uid
        while current:
            if current in self.exit_ids:
                return self.exit_ids[current], True
            if current in seen:
                return None, True
            seen.add(current)
            record = self.by_uuid.get(current)
            if record is None:
                return None, not self.resuming
            nxt = record.get("parentUuid")
            current = nxt if isinstance(nxt, str) else None
        return None, True

    def carry(self) -> Carry:
        """What the next read of this file needs (see ``Carry``)."""
        exits = dict(self.before.exits)
        for _, record in self.transcript.records:
            uid = record.get("uuid")
            if not isinstance(uid, str) or not uid:
                continue
            exit_id, certain = self._walk(uid)
            exits.pop(uid, None)
            if certain:
                exits[uid] = [exit_id, self.entry_group.get(exit_id) if exit_id else None]
        tools = list(self.transcript.tool_names.items())[-CARRY_TOOLS:]
        last_ts = next(
            (r["timestamp"] for _, r in reversed(self.transcript.records)
             if isinstance(r.get("timestamp"), str)),
            self.before.last_ts,
        )
        return Carry(
            main=self.before.main or self.transcript.records_session_id(),
            exits=dict(list(exits.items())[-CARRY_UUIDS:]),
            started=sorted(self.started),
            tool_names=dict(tools),
            last_ts=last_ts,
            counted=dict(list(self.counted.items())[-CARRY_RESPONSES:]),
        )

    def _title(self, record: dict[str, Any]) -> bool:
        """A title line; True when it was trusted and recorded."""
        if record.get("type") == "summary":
            text, leaf = record.get("summary"), record.get("leafUuid")
            if self.resuming and isinstance(leaf, str) and leaf not in self.by_uuid:
                self.misses += 1  # whether it is this file's is in the part not read
            if not isinstance(text, str) or not text.strip() or leaf not in self.by_uuid:
                return False
            group = self._group_for(self.by_uuid[leaf])
            group.title = text
            group.entries.append(
                {
                    "type": "session_info",
                    "id": f"cc-summary-{leaf}",
                    "parentId": None,
                    "timestamp": self.by_uuid[leaf].get("timestamp") or group.first_ts,
                    "appendMode": "side",
                    "name": text,
                }
            )
            return True
        text = record.get("customTitle") or record.get("aiTitle") or record.get("title")
        if not isinstance(text, str) or not text.strip():
            return False
        group = self._group_for(record)
        if record.get("type") == "custom-title" or not group.title:
            group.title = text
        return True


def _first_prompt(entries: list[dict[str, Any]]) -> str | None:
    """The text of the user message among a record's entries, unless it is blank."""
    for entry in entries:
        message = entry.get("message")
        if entry["type"] == "message" and message["role"] == "user":
            text = plain_text(message["content"])
            if text.strip():
                return text
    return None
