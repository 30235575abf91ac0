"""Reading one Claude Code ``.jsonl`` file into a :class:`Transcript`: its usable records, the
uuid index, tool names by call id, the Task calls that started sub-agents, and sub-agents
rebuilt from the parent's ``agent_progress`` lines when no transcript file of theirs exists."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..common import ImportReport, NumberedLines, json_lines
from .blocks import blocks

Tasks = dict[tuple[str, str], str]  # (parent sessionId, agentId) -> Task description
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


def is_subagent_file(path: Path) -> bool:
    return path.name.startswith("agent-") or path.parent.name == "subagents"


@dataclass
class Transcript:
    """The records of one file (``(line number, record)``) and what they say about each other."""

    file: Path
    records: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    by_uuid: dict[str, dict[str, Any]] = field(default_factory=dict)
    tool_names: dict[str, str] = field(default_factory=dict)
    task_calls: dict[str, str] = field(default_factory=dict)  # Task tool_use id -> "type: description"
    main_session_id: str | None = None

    def read(self, lines: NumberedLines | None = None) -> list[str]:
        """Read the records (of the file, or of ``lines`` read from it); return the bad lines,
        reported only if the file turns out to be a transcript (a file of other JSON gets one
        note, not a complaint per line)."""
        bad = ImportReport()
        for lineno, _text, record in json_lines(self.file, bad, lines):
            problem = _record_problem(record)
            if problem:
                bad.skip(self.file, lineno, problem)
                continue
            self.records.append((lineno, record))
        return bad.skipped

    def index(self, tasks: Tasks, main_session_id: str | None = None) -> None:
        """Find the main session id (unless given: the records continue a file read before),
        index records by uuid and tool names by call id, and remember in ``tasks`` what each
        sub-agent started here was asked to do."""
        self.main_session_id = main_session_id or self.records_session_id() or self.file.stem
        for _, record in self.records:
            uid = record.get("uuid")
            if isinstance(uid, str) and uid and uid not in self.by_uuid:
                self.by_uuid[uid] = record
            message = record.get("message")
            if record.get("type") == "assistant" and isinstance(message, dict):
                for block in blocks(message.get("content")):
                    if block.get("type") in ("tool_use", "server_tool_use") and isinstance(
                        block.get("id"), str
                    ):
                        self.tool_names[block["id"]] = str(block.get("name") or "")
                        if block.get("name") in ("Task", "Agent"):
                            self._remember_task(block)
        for _, record in self.records:
            self._link_task(record, tasks)

    def records_session_id(self) -> str | None:
        """The session id the records give the file (None: they name none)."""
        sids = Counter(
            r.get("sessionId")
            for _, r in self.records
            if isinstance(r.get("sessionId"), str)
            and r.get("sessionId")
            and not r.get("isSidechain")
        )
        if sids:
            return sids.most_common(1)[0][0]
        sidechain_sids = [r.get("sessionId") for _, r in self.records if r.get("isSidechain")]
        if is_subagent_file(self.file) and any(isinstance(s, str) and s for s in sidechain_sids):
            # A sub-agent file on its own: its parent is the session its records name.
            return next(s for s in sidechain_sids if isinstance(s, str) and s)
        return None

    # Task calls: remember what a sub-agent was asked to do, to label its session.
    def _remember_task(self, block: dict[str, Any]) -> None:
        args = block.get("input") if isinstance(block.get("input"), dict) else {}
        kind = args.get("subagent_type") or "subagent"
        what = args.get("description") or args.get("prompt") or ""
        self.task_calls[block["id"]] = f"{kind}: {what}" if what else str(kind)

    def _link_task(self, record: dict[str, Any], tasks: Tasks) -> None:
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
            for block in blocks(message.get("content") if isinstance(message, dict) else None):
                if block.get("type") == "tool_result":
                    call_id = block.get("tool_use_id")
        if isinstance(agent_sub_id, str) and call_id in calls and self.main_session_id:
            tasks.setdefault((self.main_session_id, agent_sub_id), calls[call_id])

    def add_progress_subagents(self, report: ImportReport) -> None:
        """A sub-agent seen only through ``agent_progress`` lines becomes a linear session."""
        for agent_sub_id, items in self.progress_subagents().items():
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
            report.notes.append(
                f"{self.file}: sub-agent {agent_sub_id} rebuilt from {len(items)} progress lines "
                "(no transcript file next to it)"
            )

    def progress_subagents(self) -> dict[str, list[tuple[int, dict[str, Any]]]]:
        """The messages of sub-agents known only from ``agent_progress`` lines, by agent."""
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
        return {a: items for a, items in embedded.items() if not self._subagent_file_exists(a)}

    def _subagent_file_exists(self, agent_sub_id: str) -> bool:
        name = f"agent-{agent_sub_id}.jsonl"
        folder = self.file.parent
        return (folder / self.file.stem / "subagents" / name).is_file() or (folder / name).is_file()

    def _any_cwd(self) -> str | None:
        return next((r["cwd"] for _, r in self.records if isinstance(r.get("cwd"), str)), None)


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
