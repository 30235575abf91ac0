"""Import Claude Code transcripts: ``~/.claude/projects/<encoded-cwd>/*.jsonl``.

PATH may be the projects folder, one project folder, or a single ``.jsonl`` file. Each
Claude Code record becomes OpenClaw entries; events are stored without indexing and
reconciliation indexes them later (SPEC 3). Decisions (also in docs/importers.md):

- Agent id ``claude-code`` unless given. A session is ``agent:<id>:claude-code:<sessionId>``;
  a sidechain (``isSidechain`` records, ``subagents/agent-<agentId>.jsonl`` and the older flat
  ``agent-<agentId>.jsonl``) is its own session ``agent:<id>:subagent:<agentId>`` spawned by
  its parent (``spawnedBy`` = ``parentSessionKey`` = the parent's key). Its sessionId is a
  UUID derived from (parent sessionId, agentId), since Claude Code gives sub-agent records
  the parent's sessionId. A sub-agent known only from the parent's ``agent_progress`` lines
  (no transcript file next to it) is rebuilt from those lines as a linear session.
- ``uuid`` becomes ``id`` and ``parentUuid`` becomes ``parentId``, so branches (rewinds,
  retries) survive and the last conversation record in the file is the active leaf, the same
  rule Claude Code's own viewer uses. Records that are not kept (``progress`` and other
  bookkeeping) are passed through: an entry whose parent was such a record hangs from that
  record's nearest kept ancestor. A parent that is not in the file (a lost line) continues
  from the entry before; a second parentless record (an edited first prompt) starts a new
  tree, through a ``leaf`` control that clears the active leaf before it.
- ``user`` text -> user message; a ``tool_result`` block -> its own ``toolResult`` message
  (never indexed); ``assistant`` blocks: text, thinking (and redacted thinking), ``tool_use``
  -> ``toolCall``, images -> image. Signatures are dropped (opaque).
- Not user speech, kept visible but never indexed (``custom_message``
  ``claude-code.meta``): ``isMeta`` records, ``<local-command-stdout>`` /
  ``<local-command-caveat>`` / ``<bash-stdout>`` wrappers, ``[Request interrupted …]``
  markers. A slash command keeps what the user typed (``/compact and continue``).
- ``system`` ``compact_boundary`` -> a ``compaction`` entry carrying the summary of the
  ``isCompactSummary`` record that follows it (that record is folded in, not indexed). The
  compaction hangs from ``logicalParentUuid``, so the conversation before it stays on the
  active branch and searchable. Other ``system`` records -> ``custom`` entries
  ``claude-code.<subtype>`` (not indexed).
- ``summary`` records are trusted only when their ``leafUuid`` is in the same file (Claude
  Code writes other sessions' summaries too); a trusted one becomes a side ``session_info``
  entry and the session's title. ``progress``, ``file-history-snapshot`` and
  ``queue-operation`` records are dropped.
- Label: ``<project>: <title or first prompt>``, project = last part of ``cwd``.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..state import StateDir
from ..storage import SessionMeta
from ..storage.sqlite import AgentWriter
from ..transcript import iso_to_ms
from .common import ImportReport, import_agent_id, json_lines, shorten, store_converted

DEFAULT_AGENT = "claude-code"
SOURCE = "claude-code"
_NAMESPACE = uuid.UUID("8f0c6f0e-6b43-4d4e-9a53-1f3c2a6f5b71")
_KNOWN_TYPES = frozenset(
    {
        "user",
        "assistant",
        "system",
        "progress",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "custom-title",
        "ai-title",
        "agent-name",
        "pr-link",
        "last-prompt",
    }
)
_META_PREFIXES = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-stdout>",
    "<bash-stderr>",
    "[Request interrupted by user",
)
_COMMAND_RE = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS_RE = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_BASH_INPUT_RE = re.compile(r"^<bash-input>(.*?)</bash-input>\s*$", re.DOTALL)
_STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "toolUse",
    "max_tokens": "length",
    "pause_turn": "stop",
    "refusal": "stop",
}


def import_claude_code(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import a Claude Code projects folder, one project folder, or one transcript file."""
    path = Path(path).expanduser()
    if not path.exists():
        raise ValidationError(f"{path} does not exist")
    agent_id = import_agent_id(agent, DEFAULT_AGENT)
    files = _transcript_files(path)
    if not files:
        raise ValidationError(
            f"{path} holds no Claude Code transcripts (expected ~/.claude/projects, "
            "a project folder of *.jsonl files, or one .jsonl file)"
        )
    report = ImportReport()
    tasks: dict[tuple[str, str], str] = {}  # (parent sessionId, agentId) -> Task description
    with state.open(agent_id, write=True) as db:
        for file in files:
            _FileImport(db, agent_id, file, report, tasks).run()
    return report


def _transcript_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    found = [p for p in path.rglob("*.jsonl") if p.is_file()]
    # Main transcripts first, so sub-agents can be labelled from their parent's Task call.
    return sorted(found, key=lambda p: (_is_subagent_file(p), str(p)))


def _is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


@dataclass
class _Group:
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


class _FileImport:
    """Convert one Claude Code ``.jsonl`` file into one or more sessions and store them."""

    def __init__(
        self,
        db: AgentWriter,
        agent_id: str,
        file: Path,
        report: ImportReport,
        tasks: dict[tuple[str, str], str],
    ) -> None:
        self.db = db
        self.agent_id = agent_id
        self.file = file
        self.report = report
        self.tasks = tasks
        self.records: list[tuple[int, dict[str, Any]]] = []
        self.by_uuid: dict[str, dict[str, Any]] = {}
        self.exit_ids: dict[str, str] = {}  # record uuid -> id its children hang from
        self.entry_group: dict[str, str] = {}  # entry id -> session id of its group
        self.tool_names: dict[str, str] = {}
        self.groups: dict[str, _Group] = {}
        self.main_session_id: str | None = None
        self.compactions: dict[str, dict[str, Any]] = {}  # boundary uuid -> compaction entry
        self.task_calls: dict[str, str] = {}  # Task tool_use id -> "type: description"

    # ------------------------------------------------------------------ reading

    def run(self) -> None:
        bad = self._read()
        if not self.records:
            # Nothing in the file is a Claude Code record (e.g. history.jsonl): one note, not
            # one complaint per line.
            self.report.notes.append(f"{self.file}: not a Claude Code transcript; skipped")
            return
        self.report.skipped.extend(bad)
        self._index_records()
        self._add_progress_subagents()
        self._convert()
        if not any(group.entries for group in self.groups.values()):
            self.report.notes.append(f"{self.file}: no conversation records; nothing imported")
            return
        self._store()

    def _read(self) -> list[str]:
        """Read the records; return the bad lines, reported only if the file turns out to
        be a transcript (a file of other JSON gets one note, not a complaint per line)."""
        bad = ImportReport()
        for lineno, _text, record in json_lines(self.file, bad):
            problem = _record_problem(record)
            if problem:
                bad.skip(self.file, lineno, problem)
                continue
            self.records.append((lineno, record))
        return bad.skipped

    def _index_records(self) -> None:
        sids = Counter(
            r.get("sessionId")
            for _, r in self.records
            if isinstance(r.get("sessionId"), str)
            and r.get("sessionId")
            and not r.get("isSidechain")
        )
        if sids:
            self.main_session_id = sids.most_common(1)[0][0]
        else:
            sidechain_sids = [r.get("sessionId") for _, r in self.records if r.get("isSidechain")]
            stem = self.file.stem
            if _is_subagent_file(self.file) and any(
                isinstance(s, str) and s for s in sidechain_sids
            ):
                # A sub-agent file on its own: its parent is the session its records name.
                self.main_session_id = next(s for s in sidechain_sids if isinstance(s, str) and s)
            else:
                self.main_session_id = stem
        for _, record in self.records:
            uid = record.get("uuid")
            if isinstance(uid, str) and uid and uid not in self.by_uuid:
                self.by_uuid[uid] = record
            message = record.get("message")
            if record.get("type") == "assistant" and isinstance(message, dict):
                for block in _blocks(message.get("content")):
                    if block.get("type") in ("tool_use", "server_tool_use") and isinstance(
                        block.get("id"), str
                    ):
                        self.tool_names[block["id"]] = str(block.get("name") or "")
                        if block.get("name") in ("Task", "Agent"):
                            self._remember_task(block)
        for _, record in self.records:
            self._link_task(record)

    # Task calls: remember what a sub-agent was asked to do, to label its session.
    def _remember_task(self, block: dict[str, Any]) -> None:
        args = block.get("input") if isinstance(block.get("input"), dict) else {}
        kind = args.get("subagent_type") or "subagent"
        what = args.get("description") or args.get("prompt") or ""
        self.task_calls[block["id"]] = f"{kind}: {what}" if what else str(kind)

    def _link_task(self, record: dict[str, Any]) -> None:
        calls = self.task_calls
        if not calls:
            return
        agent_sub_id = call_id = None
        data = record.get("data")
        if (
            record.get("type") == "progress"
            and isinstance(data, dict)
            and data.get("type") == "agent_progress"
        ):
            agent_sub_id, call_id = data.get("agentId"), record.get("parentToolUseID")
        result = record.get("toolUseResult")
        if record.get("type") == "user" and isinstance(result, dict) and result.get("agentId"):
            agent_sub_id = result.get("agentId")
            message = record.get("message")
            for block in _blocks(message.get("content") if isinstance(message, dict) else None):
                if block.get("type") == "tool_result":
                    call_id = block.get("tool_use_id")
        if isinstance(agent_sub_id, str) and call_id in calls and self.main_session_id:
            self.tasks.setdefault((self.main_session_id, agent_sub_id), calls[call_id])

    def _add_progress_subagents(self) -> None:
        """A sub-agent seen only through ``agent_progress`` lines becomes a linear session."""
        embedded: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        seen: set[str] = set()
        for lineno, record in self.records:
            data = record.get("data")
            if record.get("type") != "progress" or not isinstance(data, dict):
                continue
            if data.get("type") != "agent_progress" or not isinstance(data.get("agentId"), str):
                continue
            inner = data.get("message")
            if not isinstance(inner, dict) or inner.get("type") not in ("user", "assistant"):
                continue
            uid = inner.get("uuid")
            if not isinstance(uid, str) or not uid or uid in seen or uid in self.by_uuid:
                continue
            if _record_problem(inner):
                continue
            seen.add(uid)
            embedded.setdefault(data["agentId"], []).append((lineno, inner))
        for agent_sub_id, items in embedded.items():
            if self._subagent_file_exists(agent_sub_id):
                continue
            previous = None
            for lineno, inner in items:
                record = dict(inner)
                record.update(
                    parentUuid=previous,
                    isSidechain=True,
                    agentId=agent_sub_id,
                    sessionId=self.main_session_id,
                )
                record.setdefault("cwd", self._any_cwd())
                previous = inner["uuid"]
                self.records.append((lineno, record))
                self.by_uuid[previous] = record
            self.report.notes.append(
                f"{self.file}: sub-agent {agent_sub_id} rebuilt from {len(items)} progress lines "
                "(no transcript file next to it)"
            )

    def _subagent_file_exists(self, agent_sub_id: str) -> bool:
        name = f"agent-{agent_sub_id}.jsonl"
        folder = self.file.parent
        return (folder / self.file.stem / "subagents" / name).is_file() or (folder / name).is_file()

    def _any_cwd(self) -> str | None:
        return next((r["cwd"] for _, r in self.records if isinstance(r.get("cwd"), str)), None)

    # ------------------------------------------------------------------ converting

    def _group_for(self, record: dict[str, Any]) -> _Group:
        main_sid = self.main_session_id or self.file.stem
        if not record.get("isSidechain"):
            sid = main_sid
            if sid not in self.groups:
                self.groups[sid] = _Group(sid, f"agent:{self.agent_id}:claude-code:{sid}")
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
            self.groups[sid] = _Group(
                sid,
                f"agent:{self.agent_id}:subagent:{sub or parent_sid}",
                parent_key=f"agent:{self.agent_id}:claude-code:{parent_sid}",
                agent_sub_id=sub,
                parent_session_id=parent_sid,
            )
        return self.groups[sid]

    def _convert(self) -> None:
        pending: list[tuple[_Group, str | None, bool, list[dict[str, Any]]]] = []
        emitted: set[str] = set()
        last_ts: str | None = None
        duplicates = untrusted = 0
        for _lineno, record in self.records:
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
            entries = self._entries(record, uid, ts, group)
            if entries is None:  # folded into another entry (compact summary)
                continue
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
        started: set[str] = set()
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

    def _resolve(self, parent_uuid: str | None) -> str | None:
        """The entry a record hangs from: its parent, or the parent's nearest kept ancestor."""
        seen: set[str] = set()
        current = parent_uuid
        while current:
            if current in self.exit_ids:
                return self.exit_ids[current]
            if current in seen:
                return None
            seen.add(current)
            record = self.by_uuid.get(current)
            if record is None:
                return None
            nxt = record.get("parentUuid")
            current = nxt if isinstance(nxt, str) else None
        return None

    def _title(self, record: dict[str, Any]) -> bool:
        """A title line; True when it was trusted and recorded."""
        if record.get("type") == "summary":
            text, leaf = record.get("summary"), record.get("leafUuid")
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

    def _entries(
        self, record: dict[str, Any], uid: str, ts: str | None, group: _Group
    ) -> list[dict[str, Any]] | None:
        kind = record["type"]
        ms = iso_to_ms(ts) if ts else 0
        base = {"timestamp": ts} if ts else {}
        if kind == "system":
            return [self._system_entry(record, uid, base)]
        message = record["message"]
        if kind == "assistant":
            return [_entry(uid, base, _assistant_message(message, record, ms))]
        # user
        content = message.get("content")
        if record.get("isCompactSummary"):
            text = _plain_text(content)
            boundary = self.by_uuid.get(record.get("parentUuid") or "")
            if boundary is not None and boundary.get("subtype") == "compact_boundary":
                target = self.compactions.get(boundary.get("uuid"))
                if target is not None and not target.get("summary"):
                    target["summary"] = text
                    self.exit_ids[uid] = target["id"]
                    return None
            return [
                {
                    "type": "compaction",
                    "id": uid,
                    **base,
                    "summary": text,
                    "tokensBefore": 0,
                    "details": {"source": "claude-code", "isCompactSummary": True},
                }
            ]
        entries: list[dict[str, Any]] = []
        rest: list[dict[str, Any]] = []
        for block in _blocks(content) if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                entries.append(_entry("", base, self._tool_result(block, record, ms)))
            else:
                rest.append(block)
        if isinstance(content, str):
            rest = [{"type": "text", "text": content}]
        if rest:
            blocks = [_content_block(b) for b in rest]
            meta_kind = _meta_kind(record, blocks)
            if meta_kind:
                entries.append(
                    {
                        "type": "custom_message",
                        "id": "",
                        **base,
                        "customType": "claude-code.meta",
                        "content": blocks,
                        "display": False,
                        "details": {"kind": meta_kind},
                    }
                )
            else:
                blocks = [_typed_command(b) for b in blocks]
                user = {"role": "user", "content": blocks}
                if ms:
                    user["timestamp"] = ms
                entries.append(_entry("", base, user))
                if group.first_prompt is None:
                    text = _plain_text(blocks)
                    if text.strip():
                        group.first_prompt = text
        for n, entry in enumerate(entries):
            entry["id"] = uid if n == 0 else f"{uid}:{n}"
            if n:
                entry["parentId"] = entries[n - 1]["id"]
        return entries

    def _system_entry(
        self, record: dict[str, Any], uid: str, base: dict[str, Any]
    ) -> dict[str, Any]:
        subtype = record.get("subtype") if isinstance(record.get("subtype"), str) else "system"
        if subtype == "compact_boundary":
            meta = (
                record.get("compactMetadata")
                if isinstance(record.get("compactMetadata"), dict)
                else {}
            )
            entry = {
                "type": "compaction",
                "id": uid,
                **base,
                "summary": "",
                "tokensBefore": meta.get("preTokens")
                if isinstance(meta.get("preTokens"), int)
                else 0,
                "details": {"source": "claude-code", "trigger": meta.get("trigger")},
            }
            self.compactions[uid] = entry
            return entry
        data = {k: v for k, v in record.items() if k not in _ENVELOPE and v is not None}
        return {
            "type": "custom",
            "id": uid,
            **base,
            "customType": f"claude-code.{subtype}",
            "data": data,
        }

    def _tool_result(
        self, block: dict[str, Any], record: dict[str, Any], ms: int
    ) -> dict[str, Any]:
        call_id = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else ""
        raw = block.get("content")
        if isinstance(raw, str):
            content = [{"type": "text", "text": raw}]
        else:
            content = [_content_block(b) for b in _blocks(raw)]
        result: dict[str, Any] = {
            "role": "toolResult",
            "toolCallId": call_id,
            "toolName": self.tool_names.get(call_id, ""),
            "content": content,
            "isError": bool(block.get("is_error")),
        }
        extra = record.get("toolUseResult")
        if isinstance(extra, dict) and isinstance(extra.get("agentId"), str):
            result["details"] = {"agentId": extra["agentId"], "status": extra.get("status")}
        if ms:
            result["timestamp"] = ms
        return result

    # ------------------------------------------------------------------ storing

    def _store(self) -> None:
        for group in self.groups.values():
            if not group.entries:
                continue
            header: dict[str, Any] = {"type": "session", "version": 3, "id": group.session_id}
            if group.first_ts:
                header["timestamp"] = group.first_ts
            if group.cwd:
                header["cwd"] = group.cwd
            events = [header, *(_ordered(e) for e in group.entries)]
            meta = SessionMeta(
                key=group.key,
                session_id=group.session_id,
                spawned_by=group.parent_key,
                parent_key=group.parent_key,
                label=self._label(group),
                created_at=min(group.times) if group.times else None,
                updated_at=max(group.times) if group.times else None,
                source=SOURCE,
            )
            store_converted(self.db, meta, events, self.report, self.file)

    def _label(self, group: _Group) -> str:
        project = Path(group.cwd).name if group.cwd else ""
        project = project or (self.file.parent.name if self.file.parent.name != "subagents" else "")
        if group.parent_key is not None:
            sub = group.agent_sub_id or ""
            if sub.startswith("acompact"):
                what = "compaction summariser"
            else:
                what = self.tasks.get((group.parent_session_id or "", sub)) or (
                    f"subagent: {group.first_prompt}" if group.first_prompt else f"subagent {sub}"
                )
        else:
            what = group.title or group.first_prompt or self.file.stem
        return shorten(f"{project}: {what}" if project else what)


_ENVELOPE = frozenset(
    {
        "type",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "isSidechain",
        "userType",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
        "slug",
        "timestamp",
        "agentId",
    }
)


def _ordered(entry: dict[str, Any]) -> dict[str, Any]:
    """``type``, ``id``, ``parentId``, ``timestamp`` first, as OpenClaw writes them."""
    head = {k: entry[k] for k in ("type", "id", "parentId", "timestamp") if k in entry}
    return {**head, **{k: v for k, v in entry.items() if k not in head}}


def _record_problem(record: Any) -> str | None:
    """Why a parsed line cannot be used, or None."""
    if not isinstance(record, dict):
        return "a Claude Code record must be a JSON object"
    kind = record.get("type")
    if not isinstance(kind, str) or not kind:
        return 'a Claude Code record needs a string "type"'
    if kind not in _KNOWN_TYPES and "uuid" not in record:
        return None  # unknown metadata lines are ignored, not errors
    for name in ("uuid", "parentUuid"):
        value = record.get(name)
        if value is not None and (not isinstance(value, str) or (name == "uuid" and not value)):
            return f'"{name}" must be a non-empty string'
    if kind in ("user", "assistant"):
        if not isinstance(record.get("uuid"), str):
            return f'a {kind} record needs a "uuid"'
        message = record.get("message")
        if not isinstance(message, dict):
            return f'a {kind} record needs a "message" object'
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            return '"message.content" must be a string or a list of blocks'
    return None


def _blocks(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def _plain_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        b["text"]
        for b in _blocks(content)
        if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _entry(uid: str, base: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message", "id": uid, **base, "message": message}


def _content_block(block: dict[str, Any]) -> dict[str, Any]:
    """A Claude content block in OpenClaw form; unknown blocks pass through (never indexed)."""
    kind = block.get("type")
    if kind == "text":
        return {
            "type": "text",
            "text": block.get("text") if isinstance(block.get("text"), str) else "",
        }
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": block.get("thinking") if isinstance(block.get("thinking"), str) else "",
        }
    if kind == "redacted_thinking":
        return {"type": "thinking", "thinking": "", "redacted": True}
    if kind in ("tool_use", "server_tool_use"):
        return {
            "type": "toolCall",
            "id": block.get("id"),
            "name": block.get("name"),
            "arguments": block.get("input") if isinstance(block.get("input"), dict) else {},
        }
    if kind == "image":
        source = block.get("source") if isinstance(block.get("source"), dict) else {}
        if source.get("type") == "base64":
            return {
                "type": "image",
                "data": source.get("data"),
                "mimeType": source.get("media_type"),
            }
        return {"type": "image", "url": source.get("url"), "mimeType": source.get("media_type")}
    return dict(block)


def _assistant_message(message: dict[str, Any], record: dict[str, Any], ms: int) -> dict[str, Any]:
    content = message.get("content")
    blocks = (
        [{"type": "text", "text": content}]
        if isinstance(content, str)
        else [_content_block(b) for b in _blocks(content)]
    )
    out: dict[str, Any] = {
        "role": "assistant",
        "content": blocks,
        "api": "anthropic-messages",
        "provider": "anthropic",
    }
    if isinstance(message.get("model"), str):
        out["model"] = message["model"]
    if isinstance(message.get("id"), str):
        out["responseId"] = message["id"]
    stop = message.get("stop_reason")
    if record.get("isApiErrorMessage"):
        out["stopReason"] = "error"
    elif isinstance(stop, str):
        out["stopReason"] = _STOP_REASONS.get(stop, stop)
    if ms:
        out["timestamp"] = ms
    return out


def _meta_kind(record: dict[str, Any], blocks: list[dict[str, Any]]) -> str | None:
    """Why a user record is not user speech (injected or command output), or None."""
    if record.get("isMeta"):
        return "isMeta"
    text = _plain_text(blocks).lstrip()
    if not text and not any(b.get("type") == "image" for b in blocks):
        return None
    for prefix in _META_PREFIXES:
        if text.startswith(prefix):
            return prefix.strip("<>[").split(">")[0].split(" by")[0]
    return None


def _typed_command(block: dict[str, Any]) -> dict[str, Any]:
    """What the user typed for a slash command or ``!`` shell line, instead of its XML wrapper."""
    text = block.get("text")
    if block.get("type") != "text" or not isinstance(text, str):
        return block
    bash = _BASH_INPUT_RE.match(text.strip())
    if bash:
        return {"type": "text", "text": f"! {bash.group(1).strip()}"}
    name = _COMMAND_RE.search(text)
    if not name or not text.lstrip().startswith(("<command-name>", "<command-message>")):
        return block
    args = _COMMAND_ARGS_RE.search(text)
    typed = name.group(1).strip()
    if args and args.group(1).strip():
        typed = f"{typed} {args.group(1).strip()}"
    return {"type": "text", "text": typed}
