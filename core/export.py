"""Export a whole conversation (active branch; tool calls and results unless left out),
redacted, as Markdown, JSON or a self-contained HTML page (``export_html``), and write it to
a file that only its owner can read, by one rule of what may be written over
(``check_target``), the same for the browser and the command line."""

from __future__ import annotations

import json
import os
import re
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import StoreError, ValidationError
from .export_html import header_facts, render_html
from .file_modes import FILE_MODE
from .history import HistoryRequest, sessions_history
from .redact import redact
from .state import StateDir
from .visibility import Caller

EXPORT_MAX_BYTES = 256 * 1024 * 1024
EXPORT_FIELD_CHARS = 1_000_000
FORMATS = ("markdown", "json", "html")
EXTENSIONS = {"markdown": ".md", "json": ".json", "html": ".html"}


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValidationError(f"export format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return fmt


def export_conversation(state: StateDir, key: str, caller: Caller, fmt: str = "markdown",
                        host: str | None = None, include_tools: bool = True) -> str:
    """The conversation as the caller may see it (of ``host``: ``visible.find_session``);
    every text field is redacted, and whole up to ``EXPORT_FIELD_CHARS``."""
    check_format(fmt)
    history = sessions_history(
        state,
        HistoryRequest(
            session_key=key,
            include_tools=include_tools,
            max_bytes=EXPORT_MAX_BYTES,
            field_max_chars=EXPORT_FIELD_CHARS,
            host=host or None,
        ),
        caller,
    )
    if fmt == "json":
        return json.dumps(history.as_json(), ensure_ascii=False, indent=2) + "\n"
    if fmt == "html":
        return render_html(history)
    lines = [f"# {redact(history.session_key)}", "", f"Session id: `{history.session_id}`", ""]
    facts = header_facts(history.facts)
    if facts:
        lines += [f"- {name}: {value}" for name, value in facts] + [""]
    for message in history.messages:
        when = datetime.fromtimestamp(message["timestamp"] / 1000, tz=timezone.utc)
        lines.append(f"## {message['role']} · {when:%Y-%m-%d %H:%M:%S} UTC · `{message['id']}`")
        lines.append("")
        for block in message["content"]:
            lines.extend(_markdown_block(block))
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _markdown_block(block: dict[str, Any]) -> list[str]:
    kind = block.get("type")
    if kind == "text":
        return [block["text"]]
    if kind == "thinking":
        return ["> *thinking:* " + block["thinking"].replace("\n", "\n> ")]
    if kind == "image":
        return [f"*{block['placeholder']}*"]
    if kind == "toolCall":
        fence = _fence(block["arguments"])
        return [f"**tool call** `{block['name']}`", f"{fence}json", block["arguments"], fence]
    if kind == "toolResult":
        inner = "\n".join(b.get("text", b.get("placeholder", "")) for b in block["content"])
        status = " (error)" if block.get("isError") else ""
        fence = _fence(inner)
        return [f"**tool result** `{block.get('name') or 'tool'}`{status}", fence, inner, fence]
    return []


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in ``text``, so output holding a fence
    of its own (a README, a diff) cannot close the block early."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def check_target(path: Path | str, overwrite: bool = False, how: str = "overwrite it") -> Path:
    """The file an export may be written to, or one sentence why not: a folder, a device, a
    pipe or a socket never (renamed over, it would become a file holding the conversation);
    an existing file or a symlink (even a dangling one) only with ``overwrite``, and then the
    link itself is replaced, never its target. ``how``: how the caller asks to overwrite
    (the command line's ``--force``)."""
    target = Path(path).expanduser().absolute()
    if target.is_dir():
        raise ValidationError(f"{target} is a folder: give a file name to export to")
    if target.exists() and not target.is_symlink() and not target.is_file():
        raise ValidationError(
            f"{target} is not a regular file (a device, a pipe or a socket): give a file name "
            "to export to"
        )
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise ValidationError(f"{target} already exists: choose another path or {how}")
    return target


def write_export(
    state: StateDir,
    key: str,
    caller: Caller,
    path: Path | str,
    fmt: str = "markdown",
    overwrite: bool = False,
    host: str | None = None,
    include_tools: bool = True,
) -> tuple[Path, int]:
    """Export ``key`` to ``path`` (mode 0600 whatever the umask); return (path, bytes).

    The target is checked before the conversation is read and again before it is written
    (``check_target``). The file is written beside the target and renamed over it, so a
    reader never sees half an export and an old file's loose mode is not kept.
    """
    check_format(fmt)
    check_target(path, overwrite)
    data = export_conversation(state, key, caller, fmt, host, include_tools).encode("utf-8")
    return write_file(path, data, overwrite)


def write_file(path: Path | str, data: bytes, overwrite: bool = False,
               how: str = "overwrite it") -> tuple[Path, int]:
    """``data`` to ``path`` by the rule of ``check_target``, atomically, mode 0600."""
    target = check_target(path, overwrite, how)
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as err:
        raise StoreError(f"cannot write {target}: {err.strerror or err}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), FILE_MODE)  # 0600, whatever the umask took away
            handle.write(data)
        os.replace(temp, target)
    except OSError as err:
        Path(temp).unlink(missing_ok=True)
        raise StoreError(f"cannot write {target}: {err.strerror or err}") from None
    return target, len(data)
