"""Import Aider's chat histories: ``.aider.chat.history.md`` in the folders aider ran in (or
the name ``$AIDER_CHAT_HISTORY_FILE`` gives). Aider keeps no central folder, so its format is
opt-in: only the folders a person adds (``backscroll sources add aider ~/code``) are searched
for these files; the home is never walked (docs/importers.md, "Aider").

The file is Markdown that aider appends to (Aider-AI/aider ``aider/io.py``,
``append_chat_history``, ``user_input``, ``ai_output``, ``tool_output``):

- ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local time) starts a run: one session each.
- ``#### `` lines are what the user typed (a multi-line input is several ``#### `` lines in a
  row; a blank line ends it); ``#### /command`` is a command, stored, not indexed: the words
  of ``/ask``, ``/code``, ``/architect`` are written again as the next ``#### `` input
  (``Coder.run`` calls ``user_input``), indexed there once.
- ``> `` lines are aider's own output (tool and system messages): stored, not indexed; the
  ``Main model:`` line gives the run's model.
- A ``> Tokens: 3.2k sent, 1.0k cache write, 2.0k cache hit, 222 received. Cost: $0.01
  message, $0.05 session.`` line (``Coder.calculate_and_show_tokens_and_cost``: one model
  call) is also an empty assistant message carrying that usage. Aider rounds the counts it
  prints (``1.2k``, ``12k``): they are what the file holds, no closer.
- Every other line is the assistant's reply (a heading inside it is text, not a marker).
- There are no ids: a run's id is derived from the file's path, its start and how many runs
  started at that second before it; an entry's from the run, its position and its content, so
  a file re-read (it grew, or was copied) stores nothing twice.
"""

from __future__ import annotations

import os
import re
import time
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
from ..usage import openclaw_usage
from ..whole import chain, derived_id, ms_to_iso, unseen

SOURCE = "aider"
HISTORY_NAME = ".aider.chat.history.md"
NAME_ENV = "AIDER_CHAT_HISTORY_FILE"
MAX_FILE_BYTES = 256 * 1024 * 1024

_START = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_MODEL = re.compile(r"^> (?:Main )?[Mm]odel: (\S+)")
_COUNT = r"(\d+(?:\.\d+)?k?)"
_TOKENS = re.compile(rf"^Tokens: {_COUNT} sent(?:, {_COUNT} cache write)?(?:, {_COUNT} cache hit)?"
                     rf", {_COUNT} received\.(?:\s+Cost: \$(\d+(?:\.\d+)?) message)?", re.M)


def is_transcript_name(name: str) -> bool:
    """Aider's default name, or the name ``$AIDER_CHAT_HISTORY_FILE`` gives."""
    other = os.environ.get(NAME_ENV)
    return name == HISTORY_NAME or bool(other) and name == os.path.basename(other or "")


def _local_ms(stamp: str) -> int | None:
    try:
        return int(time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) * 1000)
    except (ValueError, OverflowError):
        return None


def _clean(line: str) -> str:
    """A line as aider meant it: without the two spaces of a Markdown line break."""
    return line[:-2] if line.endswith("  ") else line


class Run:
    """One ``aider chat started`` run: its blocks, in order."""

    def __init__(self, session_id: str, stamp: str | None) -> None:
        self.session_id = session_id
        self.stamp = stamp
        self.blocks: list[tuple[str, list[str]]] = []  # (user | tool | assistant, lines)
        self.model: str | None = None
        self.closed = False  # a blank line ended the last user input or output

    def line(self, line: str) -> None:
        if line.startswith("#### ") or line == "####":
            kind, text = "user", _clean(line[5:])
        elif line.startswith("> ") or line == ">":
            kind, text = "tool", _clean(line[2:])
            if self.model is None and (model := _MODEL.match(line)):
                self.model = model.group(1)
        else:
            kind, text = "assistant", line
        if kind == "assistant" and not text.strip() and (
                not self.blocks or self.blocks[-1][0] != "assistant"):
            self.closed = True  # between blocks: it belongs to none, and ends an input
            return
        if self.blocks and self.blocks[-1][0] == kind and not self.closed:
            self.blocks[-1][1].append(text)
        else:
            self.blocks.append((kind, [text]))
        self.closed = False

    def entries(self) -> tuple[list[dict[str, Any]], str | None]:
        """The run's entries (ids from position and content) and its first prompt."""
        out: list[dict[str, Any]] = []
        first: str | None = None
        when = ms_to_iso(_local_ms(self.stamp)) if self.stamp else None
        for position, (kind, lines) in enumerate(self.blocks):
            text = "\n".join(lines).strip()
            if not text:
                continue
            entry_id = derived_id("aider-", self.session_id, position, kind, text)
            if kind == "user" and text.startswith("/"):
                body = {"type": "custom", "customType": "aider.command",
                        "data": {"command": text}}
            elif kind == "user":
                first = first or text
                body = {"type": "message", "message": {
                    "role": "user", "content": [{"type": "text", "text": text}]}}
            elif kind == "tool":
                body = {"type": "message", "message": {
                    "role": "toolResult", "toolCallId": "", "toolName": "aider",
                    "content": [{"type": "text", "text": text}], "isError": False}}
            else:
                message: dict[str, Any] = {"role": "assistant", "api": SOURCE,
                                           "content": [{"type": "text", "text": text}]}
                if self.model:
                    message["model"] = self.model
                body = {"type": "message", "message": message}
            entry = {"type": body.pop("type"), "id": entry_id, "parentId": None}
            if when:
                entry["timestamp"] = when
            entry.update(body)
            out.append(entry)
            for n, usage in enumerate(usages_in_output(text) if kind == "tool" else []):
                answer = {"role": "assistant", "api": SOURCE, "content": [], "usage": usage}
                if self.model:
                    answer["model"] = self.model
                out.append({**entry, "id": f"{entry_id}:usage{n}", "message": answer})
        return chain(out), first


def usages_in_output(text: str) -> list[dict[str, Any]]:
    """The usage of each ``Tokens:`` line of aider's output: "sent" counts the cache too."""
    out = []
    for sent, write, hit, received, cost in _TOKENS.findall(text):
        cached = [_tokens(n) for n in (write, hit)]
        usage = openclaw_usage(input=max(_tokens(sent) - sum(cached), 0), output=_tokens(received),
                               cache_write=cached[0] if write else None,
                               cache_read=cached[1] if hit else None,
                               cost=float(cost) if cost else None)
        if usage is not None:
            out.append(usage)
    return out


def _tokens(count: str) -> int:
    """A count as aider prints it: ``222``, ``3.2k``, ``12k``."""
    if not count:
        return 0
    return round(float(count[:-1]) * 1000) if count.endswith("k") else int(count)


def read_runs(file: Path, report: ImportReport) -> list[Run]:
    """The runs of one chat history (lines before the first run start: a run of their own)."""
    try:
        with open(file, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as err:
        report.skip(file, None, f"cannot be read ({err.strerror or err})")
        return []
    if len(raw) > MAX_FILE_BYTES:
        report.skip(file, None, "larger than 256 MB; only its first 256 MB are read")
        raw = raw[:MAX_FILE_BYTES]
    if b"\0" in raw[:8192]:
        report.skip(file, None, "binary data, not an aider chat history; nothing imported")
        return []
    text = raw.decode("utf-8", "replace")
    where = str(file.absolute())
    runs: list[Run] = []
    counts: dict[str | None, int] = {}
    for line in text.splitlines():
        start = _START.match(line)
        if start or not runs:
            stamp = start.group(1) if start else None
            n = counts.get(stamp, 0)
            counts[stamp] = n + 1
            runs.append(Run(derived_id("", where, stamp, n)[:24], stamp))
            if start:
                continue
        runs[-1].line(line)
    return [run for run in runs if run.blocks]


def import_history(db: AgentWriter, agent_id: str, file: Path, report: ImportReport,
                   live: bool = False, marks: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read and store every run of one chat history; each run's session id and the mark of
    what was read of it (``whole.unseen``: given ``marks``, only what follows is stored)."""
    folder = str(file.absolute().parent)
    done: dict[str, Any] = {}
    marks = marks or {}
    runs = read_runs(file, report)
    if not runs and not report.skipped:
        report.notes.append(f"{file}: no aider chat in it; nothing imported")
    for run in runs:
        entries, first = run.entries()
        if not entries:
            continue
        started = _local_ms(run.stamp) if run.stamp else None
        header: dict[str, Any] = {"type": "session", "version": 3, "id": run.session_id,
                                  "cwd": folder}
        if ms_to_iso(started):
            header["timestamp"] = ms_to_iso(started)
        meta = SessionMeta(
            key=f"agent:{agent_id}:{SOURCE}:{run.session_id}", session_id=run.session_id,
            label=label_of(Path(folder).name, first or run.stamp or "aider"),
            created_at=started, updated_at=started,
            source=SOURCE)
        events, done[run.session_id] = unseen([header, *entries], marks.get(run.session_id),
                                              meta.key, report)
        if events and (len(events) > 1 or not live):
            store_converted(db, meta, events, report, file, live=live)
    return done


def import_aider(state: StateDir, path: Path, agent: str | None = None) -> ImportReport:
    """Import one chat history, or every ``.aider.chat.history.md`` under a folder."""
    path, agent_id, report = import_start(path, agent, SOURCE)
    files = files_under(path, "*", report, lambda p: is_transcript_name(p.name))
    return import_each(
        state, agent_id, files, report,
        f"{path} holds no aider chat history (expected {HISTORY_NAME} files in project "
        "folders, or one of them)",
        lambda db, file: import_history(db, agent_id, file, report))
