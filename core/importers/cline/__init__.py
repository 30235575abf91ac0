"""Import Cline and Roo Code tasks: VS Code extension storage, one folder per task.

Cline (cline/cline ``apps/vscode/src/core/storage/disk.ts``) keeps
``<globalStorage>/saoudrizwan.claude-dev/tasks/<id>/api_conversation_history.json`` (and
``ui_messages.json``), with ``state/taskHistory.json`` (its CLI: ``~/.cline/data``); Roo Code
(RooCodeInc/Roo-Code ``src/core/task-persistence/``) ``<globalStorage>/rooveterinaryinc.roo-cline/
tasks/<uuid>/`` with the task's ``history_item.json`` beside them. Both files are rewritten whole
on every change (docs/importers.md, "Cline and Roo Code"):

- ``api_conversation_history.json`` is read: Anthropic-style ``[{role, content[], ts}]``. Its
  entries get ids derived from their content (role, content, time), so a re-read stores
  nothing twice and a history the extension condensed or trimmed loses nothing stored (Roo's
  ``condenseParent``/``truncationParent`` marks are not content).
- A user message holds the user's words inside ``<task>``, ``<feedback>``, ``<answer>``,
  ``<user_message>`` tags, among environment details, tool results and file bodies: the words
  become a user message (indexed), the rest one tool result (stored, never indexed).
- Assistant text is indexed without its ``<thinking>`` (kept as thinking) and without a tool
  call written as XML (kept as a tool call); the answers Cline gives through tools
  (``attempt_completion``'s result, ``plan_mode_respond``'s response,
  ``ask_followup_question``'s question) are the assistant's text. Roo's reasoning items are
  thinking; a condensing summary is stored as a custom entry (not indexed).
- An assistant message's ``metrics`` (Cline: ``tokens {prompt, completion, cached}`` and
  ``cost``, one model call) are its usage; Roo's history records none (its per-call usage is
  only in ``ui_messages.json``, read for a task without an api history: ``ui.py``).
- Title from the task's history item (``task``), project folder from it
  (``cwdOnTaskInitialization``, Roo's ``workspace``) or the environment details, model from
  ``modelInfo``.
- A task folder without an api history is read from its ``ui_messages.json`` (``ui.py``).
- Keys are ``agent:<agent>:<source>:<task id>``; the source is ``cline`` or ``roo-code``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...state import StateDir
from ...storage import AgentWriter, SessionMeta
from ..common import (
    ImportReport,
    files_under,
    import_each,
    import_start,
    label_of,
    store_converted,
)
from ..usage import minus, openclaw_usage, with_usage
from ..whole import chain, derived_id, ms_to_iso, read_json, read_json_quietly, unseen
from .ui import UI_FILE, has_history, ui_entries

HISTORY_FILE = "api_conversation_history.json"
LABELS = {"cline": "Cline", "roo-code": "Roo Code"}

_WORDS = re.compile(r"<(task|feedback|answer|user_message)>\s*(.*?)\s*</\1>", re.DOTALL)
_THINKING = re.compile(r"<thinking>(.*?)</thinking>", re.DOTALL)
_CWD = re.compile(r"# Current (?:Working Directory|Workspace Directory) \((.+?)\) Files")
_TOOLS = (
    "execute_command read_file write_to_file replace_in_file apply_diff insert_content "
    "search_and_replace search_files list_files list_code_definition_names browser_action "
    "use_mcp_tool access_mcp_resource ask_followup_question attempt_completion new_task "
    "plan_mode_respond load_mcp_documentation web_fetch web_search codebase_search switch_mode "
    "fetch_instructions update_todo_list new_rule condense report_bug summarize_task use_skill "
    "run_slash_command generate_image focus_chain"
).split()
_XML_TOOL = re.compile(r"^<(" + "|".join(_TOOLS) + r")>\s*$", re.MULTILINE)
# a tool whose input is the assistant's words to the user: (tool, the field holding them)
_SPOKEN = {"attempt_completion": "result", "plan_mode_respond": "response",
           "ask_followup_question": "question"}


def is_transcript_name(name: str) -> bool:
    return name in (HISTORY_FILE, UI_FILE)


def task_info(file: Path, task_id: str) -> dict[str, Any]:
    """The task's history item: Roo's ``history_item.json`` beside the file, else the entry of
    Cline's ``taskHistory.json`` (``state/`` beside ``tasks/``, or in ``tasks/``)."""
    item = read_json_quietly(file.parent / "history_item.json")
    if isinstance(item, dict):
        return item
    tasks = file.parent.parent
    for index in (tasks.parent / "state" / "taskHistory.json", tasks / "taskHistory.json"):
        items = read_json_quietly(index)
        if isinstance(items, list):
            for item in items:
                if isinstance(item, dict) and item.get("id") == task_id:
                    return item
    return {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _result_text(content: Any) -> str:
    """A tool result's content (a string or blocks) as text."""
    if isinstance(content, str):
        return content
    return "\n".join(_text(b.get("text")) for b in _blocks(content) if b.get("type") == "text")


def _image(block: dict[str, Any]) -> dict[str, Any]:
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    if source.get("type") == "base64":
        return {"type": "image", "data": _text(source.get("data")),
                "mimeType": _text(source.get("media_type"))}
    return {"type": "image", "url": _text(source.get("url"))}


class Task:
    """One task's api history converted: entries with derived ids, and what the session says."""

    def __init__(self, task_id: str, source: str) -> None:
        self.task_id = task_id
        self.source = source
        self.entries: list[dict[str, Any]] = []
        self.first_prompt: str | None = None
        self.cwd: str | None = None
        self.model: str | None = None
        self.times: list[int] = []

    def add(self, index: int, record: Any, report: ImportReport, file: Path) -> None:
        if not isinstance(record, dict):
            report.skip(file, None, f"message {index}: not an object; skipped")
            return
        ts = record.get("ts") if isinstance(record.get("ts"), (int, float)) else None
        when = ms_to_iso(ts)
        if when:
            self.times.append(int(ts))  # type: ignore[arg-type]
        base = derived_id(f"{self.source}-", self.task_id, record.get("role"),
                          record.get("type"), record.get("content"), record.get("text"),
                          record.get("summary"), ts)
        role = record.get("role")
        if record.get("type") == "reasoning":
            thought = _text(record.get("text")) or "\n".join(
                _text(s.get("text")) for s in _blocks(record.get("summary")))
            self._message(base, when, {"role": "assistant",
                                       "content": [{"type": "thinking", "thinking": thought}]})
        elif record.get("isSummary"):
            self._entry(base, when, {"type": "custom", "customType": f"{self.source}.summary",
                                     "data": {"role": role, "content": record.get("content")}})
        elif role == "user":
            self._user(base, when, record)
        elif role == "assistant":
            self._assistant(base, when, record)
        else:
            report.skip(file, None, f"message {index}: no user or assistant role; skipped")

    def _entry(self, entry_id: str, when: str | None, body: dict[str, Any]) -> None:
        entry = {"type": body.pop("type"), "id": entry_id, "parentId": None}
        if when:
            entry["timestamp"] = when
        entry.update(body)
        self.entries.append(entry)

    def _message(self, entry_id: str, when: str | None, message: dict[str, Any]) -> None:
        self._entry(entry_id, when, {"type": "message", "message": message})

    def _user(self, base: str, when: str | None, record: dict[str, Any]) -> None:
        words: list[dict[str, Any]] = []
        context: list[str] = []
        results: list[dict[str, Any]] = []
        for block in _blocks(record.get("content")):
            kind = block.get("type")
            if kind == "text":
                text = _text(block.get("text"))
                found = [m.group(2) for m in _WORDS.finditer(text)]
                words += [{"type": "text", "text": w} for w in found if w.strip()]
                rest = _WORDS.sub("", text).strip()
                if rest:
                    context.append(rest)
                    if self.cwd is None and (cwd := _CWD.search(rest)):
                        self.cwd = cwd.group(1).strip()
            elif kind == "image":
                words.append(_image(block))
            elif kind == "tool_result":
                results.append({"role": "toolResult", "toolCallId": _text(block.get("tool_use_id")),
                                "toolName": "", "content": [
                                    {"type": "text", "text": _result_text(block.get("content"))}],
                                "isError": block.get("is_error") is True})
        text = "\n".join(_text(b.get("text")) for b in words if b.get("type") == "text")
        if self.first_prompt is None and text.strip():
            self.first_prompt = text
        for n, result in enumerate(results):
            self._message(f"{base}-r{n}", when, result)
        if context:  # environment details, tool results written as text, file bodies
            self._message(f"{base}-c", when, {
                "role": "toolResult", "toolCallId": "", "toolName": "context",
                "content": [{"type": "text", "text": "\n\n".join(context)}], "isError": False})
        if words:
            self._message(base, when, {"role": "user", "content": words})

    def _assistant(self, base: str, when: str | None, record: dict[str, Any]) -> None:
        content: list[dict[str, Any]] = []
        for n, block in enumerate(_blocks(record.get("content"))):
            kind = block.get("type")
            if kind == "text":
                content += _assistant_text(_text(block.get("text")), f"{base}-x{n}")
            elif kind in ("thinking", "reasoning", "redacted_thinking"):
                content.append({"type": "thinking",
                                "thinking": _text(block.get("thinking") or block.get("text"))})
            elif kind == "tool_use":
                name = _text(block.get("name"))
                arguments = block.get("input") if isinstance(block.get("input"), dict) else {}
                spoken = _text(arguments.get(_SPOKEN.get(name, "")))
                content.append({"type": "toolCall", "id": _text(block.get("id")), "name": name,
                                "arguments": arguments})
                if spoken.strip():
                    content.append({"type": "text", "text": spoken})
            elif kind == "image":
                content.append(_image(block))
        info = record.get("modelInfo")
        model = _text(info.get("modelId")) if isinstance(info, dict) else ""
        message: dict[str, Any] = {"role": "assistant", "content": content,
                                   "provider": _text(info.get("providerId"))
                                   if isinstance(info, dict) else "", "api": self.source}
        if model:
            message["model"] = self.model = model
        self._message(base, when, with_usage(message, _metrics_usage(record.get("metrics"))))


def _metrics_usage(metrics: Any) -> dict[str, Any] | None:
    """Cline's ``metrics`` of a model call: ``prompt`` counts the cached tokens too."""
    if not isinstance(metrics, dict):
        return None
    tokens = metrics.get("tokens") if isinstance(metrics.get("tokens"), dict) else {}
    return openclaw_usage(input=minus(tokens.get("prompt"), tokens.get("cached")),
                          output=tokens.get("completion"), cache_read=tokens.get("cached"),
                          cost=metrics.get("cost"))


def _assistant_text(text: str, call_id: str) -> list[dict[str, Any]]:
    """Assistant text: its ``<thinking>`` as thinking, a tool call written as XML as a tool
    call (the words of ``attempt_completion`` and the like as text), the rest as text."""
    out: list[dict[str, Any]] = []
    for thought in _THINKING.findall(text):
        out.append({"type": "thinking", "thinking": thought.strip()})
    text = _THINKING.sub("", text)
    call = _XML_TOOL.search(text)
    said, xml = (text[:call.start()], text[call.start():]) if call else (text, "")
    if said.strip():
        out.append({"type": "text", "text": said.strip()})
    if call:
        name = call.group(1)
        out.append({"type": "toolCall", "id": call_id, "name": name, "arguments": {"xml": xml}})
        field = _SPOKEN.get(name)
        spoken = re.search(rf"<{field}>(.*?)</{field}>", xml, re.DOTALL) if field else None
        if spoken and spoken.group(1).strip():
            out.append({"type": "text", "text": spoken.group(1).strip()})
    return out


def convert_task(file: Path, source: str, report: ImportReport) -> tuple[Task, SessionMeta,
                                                                        list[dict[str, Any]]] | None:
    """The task in ``file`` (its api history) as a header and entries; None when the file holds
    no conversation (said in ``report``)."""
    ui = file.name == UI_FILE
    if ui and has_history(file):
        return None  # the task's api history is read instead (``ui.py``)
    data = read_json(file, report, f"a {LABELS[source]} conversation (a JSON list of messages)")
    if data is None:
        return None
    if not isinstance(data, list):
        report.skip(file, None, "not a JSON list of messages; nothing imported from it")
        return None
    task_id = file.parent.name
    task = Task(task_id, source)
    if ui:
        task.entries, task.times, task.first_prompt, task.model = ui_entries(
            task_id, source, data, report, file)
    for index, record in enumerate([] if ui else data):
        task.add(index, record, report, file)
    info = task_info(file, task_id)
    cwd = _text(info.get("cwdOnTaskInitialization")) or _text(info.get("workspace")) or task.cwd
    started = info.get("ts") if isinstance(info.get("ts"), (int, float)) else None
    started = min([*task.times, *([int(started)] if started else [])], default=None)
    if started is None and task_id.isdigit():
        started = int(task_id)  # Cline's task ids are the time it was created
    header: dict[str, Any] = {"type": "session", "version": 3, "id": task_id}
    if ms_to_iso(started):
        header["timestamp"] = ms_to_iso(started)
    if cwd:
        header["cwd"] = cwd
    title = _text(info.get("task")) or task.first_prompt or task_id
    project = Path(cwd.replace("\\", "/")).name if cwd else ""
    meta = SessionMeta(
        key=f"agent:{{agent}}:{source}:{task_id}",
        session_id=task_id,
        label=label_of(project, title),
        created_at=started or None,
        updated_at=max(task.times) if task.times else (started or None),
        source=source,
    )
    if not task.entries and not data:
        report.notes.append(f"{file}: no messages in it yet; nothing imported")
        return None
    return task, meta, [header, *chain(task.entries)]


def import_task(db: AgentWriter, agent_id: str, source: str, file: Path, report: ImportReport,
                live: bool = False, mark: Any = None) -> tuple[str, list[Any]] | None:
    """Read, convert and store one task's file; its task id and the mark of what was read
    (``whole.unseen``: given the last one, only what follows it is stored). None: nothing."""
    done = convert_task(file, source, report)
    if done is None:
        return None
    _task, meta, events = done
    meta = meta._replace(key=meta.key.replace("{agent}", agent_id))
    events, mark = unseen(events, mark, meta.key, report)
    if events:  # (none: a conversation deleted in backscroll)
        store_converted(db, meta, events, report, file, live=live)
    return meta.session_id, mark


def import_tasks(state: StateDir, path: Path, agent: str | None = None,
                 source: str = "cline") -> ImportReport:
    """Import a Cline / Roo Code ``tasks`` folder (recursively), or one task's folder or file."""
    path, agent_id, report = import_start(path, agent, source)
    files = files_under(path, "*.json", report, lambda p: is_transcript_name(p.name) and not (
        p.name == UI_FILE and has_history(p)))
    return import_each(
        state, agent_id, files, report,
        f"{path} holds no {LABELS.get(source, source)} tasks (expected the extension's tasks "
        f"folder with <id>/{HISTORY_FILE} files, or one of them)",
        lambda db, file: import_task(db, agent_id, source, file, report))
