"""The ``[[sources]]`` entries of ``<state>/config.toml``, read and edited.

```toml
[[sources]]
kind = "claude-code"                 # a format: openclaw | claude-code | codex (the registry)
path = "~/work/.claude/projects"     # ~ is expanded; a relative path is under the state dir
agent = "work"                       # optional: store its sessions under this agent id

[[sources]]                          # a detected folder not to read
kind = "codex"
path = "~/.codex/sessions"
enabled = false

[sync]
on_open = true                       # the browser syncs and follows the sources on open
```

``on_open`` defaults to true on the local SQLite files and to false with a database URL:
taking a machine's transcripts into a team server, where others read them, is an explicit
act (``sync``, ``watch``, ``push``, ``t`` or ``L`` in the browser, or this setting), never a
side effect of looking (``sync_on_open``).

``tomllib`` only reads, so ``sources add`` / ``remove`` edit the text: add appends a block,
remove cuts the block out; every other line (settings, comments) stays as it was. The new
text is parsed again and must say exactly what was meant before it replaces the file (written
next to it, then renamed), so an edit never leaves a broken or surprising config behind.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import formats
from ..config import read_toml
from ..errors import ValidationError
from ..keys import check_agent_id

if TYPE_CHECKING:
    from ..state import StateDir

_BLOCK_START = re.compile(r"^\s*\[\[\s*sources\s*\]\]\s*(#.*)?$")
_TABLE_START = re.compile(r"^\s*\[")
_HEADER = "# backscroll settings: see `backscroll sources --help` and docs/sources.md\n"


@dataclass(frozen=True)
class SourceEntry:
    """One ``[[sources]]`` entry."""

    kind: str
    path: Path  # expanded and absolute
    agent: str | None = None
    enabled: bool = True


def config_file(state_dir: Path) -> Path:
    return Path(state_dir) / "config.toml"


def configured_sources(state_dir: Path) -> list[SourceEntry]:
    """The file's ``[[sources]]``, checked; a bad entry is one sentence naming the file."""
    path = config_file(state_dir)
    try:
        return _entries(read_toml(path), Path(state_dir))
    except ValidationError as err:
        if str(err).startswith(str(path)):
            raise
        raise ValidationError(f"{path}: {err}") from None


def sync_on_open(state: StateDir) -> bool:
    """Whether the browser takes the sources in when it opens (and follows them): the file's
    ``[sync] on_open``, else true on the local files and false on a shared server."""
    path = config_file(state.path)
    data = read_toml(path)
    table = data.get("sync", {})
    if not isinstance(table, dict):
        raise ValidationError(f"{path}: sync must be a table ([sync])")
    value = table.get("on_open", not state.shared)
    if not isinstance(value, bool):
        raise ValidationError(f"{path}: sync.on_open must be true or false")
    return value


def add_source(state_dir: Path, kind: str, path: Path, agent: str | None = None) -> SourceEntry:
    """Add a ``[[sources]]`` entry (or re-enable one that was removed); return it."""
    state_dir = Path(state_dir)
    entry = SourceEntry(check_kind(kind), resolve_path(path, state_dir),
                        check_agent_id(agent) if agent is not None else None)
    if not entry.path.exists():
        raise ValidationError(f"{entry.path} does not exist")
    if not entry.path.is_dir():
        raise ValidationError(f"{entry.path} is not a folder (a source is a folder of transcripts)")
    current = configured_sources(state_dir)
    same = [e for e in current if e.path == entry.path]
    if any(e.enabled for e in same):
        raise ValidationError(f"{entry.path} is already a source in {config_file(state_dir)}")
    text = _text(state_dir)
    for old in same:  # a disabled entry for this folder gives way to the new one
        text = _cut_block(text, old.path, state_dir)
    text = _appended(text, entry)
    expected = [e for e in current if e.path != entry.path] + [entry]
    _replace(state_dir, text, expected)
    return entry


def remove_entry(state_dir: Path, target: Path, detected_kind: str | None = None) -> str:
    """Remove the entry for the folder ``target``; for a folder found by default (of
    ``detected_kind``), write an entry that turns it off. Return what was done, in one
    sentence."""
    state_dir = Path(state_dir)
    current = configured_sources(state_dir)
    same = [e for e in current if e.path == target]
    detected = SourceEntry(detected_kind, target) if detected_kind else None
    if detected is None and not same:
        raise ValidationError(f"{target} is not a source (see `backscroll sources`)")
    if detected is not None and any(not e.enabled for e in same):
        raise ValidationError(f"{target} is already turned off in {config_file(state_dir)}")
    text = _text(state_dir)
    for old in same:
        text = _cut_block(text, target, state_dir)
    expected = [e for e in current if e.path != target]
    if detected is not None:
        off = SourceEntry(detected.kind, target, enabled=False)
        text = _appended(text, off)
        expected.append(off)
    _replace(state_dir, text, expected)
    if detected is not None:
        return f"{target} is found by default; it is now turned off in {config_file(state_dir)}"
    return f"removed {target} from {config_file(state_dir)}; its sessions stay"


def check_kind(kind: Any) -> str:
    kinds = formats.names()
    if kind not in kinds:
        raise ValidationError(f"a source kind is one of {', '.join(kinds)}, not {kind!r}")
    return kind


def resolve_path(path: Path | str, state_dir: Path) -> Path:
    """``~`` expanded; relative to the state dir; made absolute (symlinks are kept)."""
    expanded = Path(path).expanduser()
    return Path(os.path.abspath(expanded if expanded.is_absolute() else state_dir / expanded))


# ----------------------------------------------------------------- reading the entries


def _entries(data: dict[str, Any], state_dir: Path) -> list[SourceEntry]:
    raw = data.get("sources", [])
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise ValidationError("sources must be [[sources]] tables")
    entries = []
    for n, item in enumerate(raw, start=1):
        where = f"[[sources]] entry {n}"
        unknown = set(item) - {"kind", "path", "agent", "enabled"}
        if unknown:
            raise ValidationError(f"{where} has unknown keys: {', '.join(sorted(unknown))}")
        if not isinstance(item.get("path"), str) or not item["path"].strip():
            raise ValidationError(f"{where} needs a path")
        try:
            kind = check_kind(item.get("kind"))
            agent = item.get("agent")
            if agent is not None and not isinstance(agent, str):
                raise ValidationError("agent must be a string")
            agent = check_agent_id(agent) if agent is not None else None
        except ValidationError as err:
            raise ValidationError(f"{where}: {err}") from None
        enabled = item.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ValidationError(f"{where}: enabled must be true or false")
        entries.append(SourceEntry(kind, resolve_path(item["path"], state_dir), agent, enabled))
    return entries


# ----------------------------------------------------------------- editing the text


def _text(state_dir: Path) -> str:
    path = config_file(state_dir)
    if not path.is_file():
        return ""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValidationError(f"{path} cannot be read: {err}") from None


def _appended(text: str, entry: SourceEntry) -> str:
    """``text`` and, after a blank line, the entry's block."""
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text else "") + _block(entry)


def _block(entry: SourceEntry) -> str:
    # A JSON string is a valid TOML basic string (the result is parsed again anyway).
    lines = ["[[sources]]", f"kind = {json.dumps(entry.kind)}",
             f"path = {json.dumps(str(entry.path), ensure_ascii=False)}"]
    if entry.agent is not None:
        lines.append(f"agent = {json.dumps(entry.agent)}")
    if not entry.enabled:
        lines.append("enabled = false")
    return "\n".join(lines) + "\n"


def _cut_block(text: str, target: Path, state_dir: Path) -> str:
    """``text`` without the ``[[sources]]`` block whose path is ``target`` (and the blank
    line before it)."""
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines):
        if not _BLOCK_START.match(lines[start]):
            start += 1
            continue
        end = start + 1
        while end < len(lines) and not _TABLE_START.match(lines[end]):
            end += 1
        try:
            block = tomllib.loads("".join(lines[start + 1 : end]))
        except tomllib.TOMLDecodeError:
            block = {}
        if isinstance(block.get("path"), str) and resolve_path(block["path"], state_dir) == target:
            if start > 0 and not lines[start - 1].strip():
                start -= 1
            return "".join(lines[:start] + lines[end:])
        start = end
    return text


def _replace(state_dir: Path, text: str, expected: list[SourceEntry]) -> None:
    """Write ``text`` as the config file, if it parses to exactly ``expected`` sources."""
    path = config_file(state_dir)
    body = text if text.strip() else ""
    if body and not path.is_file():
        body = _HEADER + "\n" + body
    try:
        parsed = _entries(tomllib.loads(body), state_dir)
    except (tomllib.TOMLDecodeError, ValidationError):
        parsed = None
    if parsed != expected:
        raise ValidationError(
            f"{path} holds its sources in a form backscroll cannot edit safely; "
            "edit the [[sources]] entries by hand"
        )
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as err:
        temporary.unlink(missing_ok=True)
        raise ValidationError(f"cannot write {path}: {err.strerror or err}") from None
