"""The transcript formats backscroll reads: the registry, one entry each.

Everything that names the formats reads this list: the CLI's choices (``import KIND``,
``--source``, ``sources add``), the ``sources`` kinds (settings, detection, scanning, the
listing), ``sync``'s dispatch, the catalog's source values and labels (so the browser's source
filter), and the resume command's words. Adding a format is one importer package that exports
its ``DOORS`` (``importers/format.py``) and one entry here (docs/importers.md, "Adding a
format").

A ``Format`` holds what a search, a listing or the command line asks of a format; it loads no
importer (a ``search --json`` loads the search path only, tests/test_cli_start.py), so it is
a tuple, not a dataclass. What only an import or a sync needs (how it imports a path, follows
a live file, finds its transcripts) is its ``doors``, loaded from its package on first use.

The order is the order sources are detected and choices offered in.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any, Mapping, NamedTuple

_IMPORTERS = "backscroll.core.importers."
# OpenCode's session ids: ``ses_``, 12 hex digits of time, 14 base62 characters
# (anomalyco/opencode packages/opencode/src/id/id.ts)
OPENCODE_ID = r"ses_[0-9a-f]{12}[0-9A-Za-z]{14}"
# Goose's session ids: the day and a counter, ``20250930_3`` (block/goose
# crates/goose/src/session/session_manager.rs, ``create_session``)
GOOSE_ID = r"[0-9]{8}_[0-9]{1,9}"
# Crush's session ids: UUIDs (charmbracelet/crush internal/session/session.go)


def _vscode_folders(extension: str) -> tuple[str, ...]:
    """A VS Code extension's task folders under the home in VS Code's builds and forks
    (Linux, then macOS), but the first (its ``Format``'s own default)."""
    hosts = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
    bases = [".config", "Library/Application Support"]
    return tuple(f"{base}/{host}/User/globalStorage/{extension}/tasks"
                 for base in bases for host in hosts)[1:]


class Format(NamedTuple):
    """One transcript format, as the rest of backscroll knows it."""

    name: str  # the kind: ``import NAME``, ``--source NAME``, ``[[sources]] kind = NAME``
    label: str  # as a person names the tool that writes it (the browser's filter, lists)
    default_agent: str  # the agent id its sessions are stored under unless one is given
    code: str  # the module that exports its ``DOORS`` (``importers/<package>/format.py``)
    # Where the tool keeps its transcripts: ``$<home_env>/<subfolder>`` when the variable is
    # set, else ``~/<home_folder>/<subfolder>``.
    home_env: str
    home_folder: str
    subfolder: str = ""
    stored: tuple[str, ...] = ()  # the ``source`` values its sessions are stored with
    # A command that resumes one of its conversations: the words before the session id
    # (``resume.resume_command`` checks every part; None: no command).
    resume: tuple[str, ...] | None = None
    resume_by_key: bool = False  # its runtime opens a conversation by session key instead
    header_line: bool = False  # a file's first line is its header (kept when lines are cut)
    # Its sessions are also those stored with a ``source`` no format claims (OpenClaw's: an
    # agent runtime's live appends are in its format). One format says so.
    unclaimed: bool = False
    folder_env: str = ""  # a variable naming the transcripts' folder itself (wins when set)
    # The shape of its session ids, as a regular expression (None: a UUID); a resume command
    # is offered only for an id of that shape (``resume.resume_command``)
    resume_id: str | None = None
    # Other folders under the home where some installs keep them (a snap's home), detected
    # only when they exist.
    more_folders: tuple[str, ...] = ()
    # A variable naming the tool's root and the transcripts' folder under it (Goose's
    # ``GOOSE_PATH_ROOT``: ``data/sessions``): wins over ``home_env``, not over ``folder_env``
    root_env: tuple[str, str] = ("", "")
    # Further homes the tool itself uses when ``$<home_env>`` is not set (shell patterns
    # under the home: OpenClaw's ``~/.openclaw-<profile>``, its legacy ``~/.clawdbot``),
    # detected only when they exist.
    other_homes: tuple[str, ...] = ()
    # False: the tool keeps no folder of its own (Aider writes into each project): it is read
    # only from folders a person adds (``sources add``), never looked for in the home.
    detected: bool = True

    @property
    def store_kind(self) -> str:
        """The kind of its session-store files (``openclaw-store``), if it has any."""
        return f"{self.name}-store"

    @property
    def doors(self) -> Any:  # an importers.format.Doors (not named here: importers import this)
        """How it imports, follows and finds its transcripts (its package, loaded now)."""
        return importlib.import_module(self.code).DOORS  # type: ignore[no-any-return]

    def default_folder(self, env: Mapping[str, str], home: Path) -> Path:
        """Where the tool keeps its transcripts on this machine (existing or not)."""
        if self.folder_env and (folder := env.get(self.folder_env)):
            return Path(os.path.abspath(Path(folder).expanduser()))
        if self.root_env[0] and (root := env.get(self.root_env[0])):
            return Path(os.path.abspath(Path(root).expanduser() / self.root_env[1]))
        value = env.get(self.home_env)
        base = Path(value).expanduser() if value else home / self.home_folder
        return Path(os.path.abspath(base / self.subfolder if self.subfolder else base))


FORMATS: list[Format] = [
    Format("claude-code", "Claude Code", "claude-code", _IMPORTERS + "claude_code.format",
           "CLAUDE_CONFIG_DIR", ".claude", "projects", stored=("claude-code",),
           resume=("claude", "--resume")),
    Format("codex", "Codex", "codex", _IMPORTERS + "codex.format", "CODEX_HOME", ".codex",
           "sessions", stored=("codex",), resume=("codex", "resume", "--"), header_line=True),
    Format("openclaw", "OpenClaw", "main", _IMPORTERS + "openclaw.format", "OPENCLAW_STATE_DIR",
           ".openclaw", stored=("live", "openclaw", "demo"), resume_by_key=True, header_line=True,
           unclaimed=True, other_homes=(".openclaw-*", ".clawdbot")),
    Format("pi", "Pi", "pi", _IMPORTERS + "pi.format", "PI_CODING_AGENT_DIR", ".pi/agent",
           "sessions", stored=("pi",), resume=("pi", "--session"), header_line=True,
           folder_env="PI_CODING_AGENT_SESSION_DIR"),
    Format("omp", "Oh My Pi", "omp", _IMPORTERS + "pi.omp_format", "OMP_CODING_AGENT_DIR",
           ".omp/agent", "sessions", stored=("omp",), resume=("omp", "--resume"),
           header_line=True),
    Format("opencode", "OpenCode", "opencode", _IMPORTERS + "opencode.format", "XDG_DATA_HOME",
           ".local/share", "opencode", stored=("opencode",), resume=("opencode", "--session"),
           resume_id=OPENCODE_ID),
    Format("kilo", "Kilo", "kilo", _IMPORTERS + "kilo.format", "XDG_DATA_HOME", ".local/share",
           "kilo", stored=("kilo",), resume=("kilo", "--session"), resume_id=OPENCODE_ID),
    Format("gemini", "Gemini CLI", "gemini", _IMPORTERS + "gemini.format", "GEMINI_CLI_HOME",
           "", ".gemini/tmp", stored=("gemini",), resume=("gemini", "--resume")),
    Format("copilot", "Copilot CLI", "copilot", _IMPORTERS + "copilot.format", "COPILOT_HOME",
           ".copilot", stored=("copilot",), resume=("copilot", "--resume"),
           more_folders=("snap/copilot-cli/common/.copilot",)),
    # Qwen Code keeps chats in $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen, in
    # projects/*/chats and the older tmp/*/chats
    Format("qwen-code", "Qwen Code", "qwen-code", _IMPORTERS + "qwen_code.format", "QWEN_HOME",
           ".qwen", stored=("qwen-code",), resume=("qwen", "--resume"),
           folder_env="QWEN_RUNTIME_DIR"),
    Format("cursor", "Cursor", "cursor", _IMPORTERS + "cursor_cli.format", "CURSOR_CONFIG_DIR",
           ".cursor", "projects", stored=("cursor",), resume=("cursor-agent", "--resume")),
    Format("droid", "Factory Droid", "droid", _IMPORTERS + "droid.format", "FACTORY_HOME",
           ".factory", "sessions", stored=("droid",), resume=("droid", "--resume")),
    Format("cursor-editor", "Cursor editor", "cursor", _IMPORTERS + "cursor_editor.format",
           "XDG_CONFIG_HOME", ".config", "Cursor/User/globalStorage", stored=("cursor-editor",),
           more_folders=("Library/Application Support/Cursor/User/globalStorage",)),
    Format("zed", "Zed", "zed", _IMPORTERS + "zed.format", "XDG_DATA_HOME", ".local/share",
           "zed/threads", stored=("zed",), more_folders=("Library/Application Support/Zed/threads",)),
    Format("goose", "Goose", "goose", _IMPORTERS + "goose.format", "XDG_DATA_HOME",
           ".local/share", "goose/sessions", stored=("goose",),
           resume=("goose", "session", "--resume", "--session-id"), resume_id=GOOSE_ID,
           root_env=("GOOSE_PATH_ROOT", "data/sessions")),
    Format("crush", "Crush", "crush", _IMPORTERS + "crush.format", "XDG_DATA_HOME",
           ".local/share", "crush", stored=("crush",), resume=("crush", "--session"),
           folder_env="CRUSH_GLOBAL_DATA"),
    Format("cline", "Cline", "cline", _IMPORTERS + "cline.format", "",
           ".config/Code/User/globalStorage/saoudrizwan.claude-dev", "tasks", stored=("cline",),
           more_folders=_vscode_folders("saoudrizwan.claude-dev") + (".cline/data/tasks",)),
    Format("roo-code", "Roo Code", "roo-code", _IMPORTERS + "cline.roo_format", "",
           ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline", "tasks",
           stored=("roo-code",), more_folders=_vscode_folders("rooveterinaryinc.roo-cline")),
    Format("continue", "Continue", "continue", _IMPORTERS + "continue_dev.format",
           "CONTINUE_GLOBAL_DIR", ".continue", "sessions", stored=("continue",)),
    Format("aider", "Aider", "aider", _IMPORTERS + "aider.format", "", "", stored=("aider",),
           detected=False),
]


def known() -> list[Format]:
    """The formats, in the order choices are offered (read at each use: a test may add one)."""
    return list(FORMATS)


def names() -> list[str]:
    return [f.name for f in FORMATS]


def get(name: str | None) -> Format | None:
    """The format named ``name``, or None."""
    return next((f for f in FORMATS if f.name == name), None)


def fallback() -> Format:
    """The format of a session whose stored ``source`` no format claims."""
    return next(f for f in FORMATS if f.unclaimed)


def of_kind(kind: str) -> Format | None:
    """The format of a found file's kind: its transcripts' or its session store's."""
    return next((f for f in FORMATS if kind in (f.name, f.store_kind)), None)


def is_store(kind: str) -> bool:
    """Whether a found file's kind is a format's session store (read whole, not followed)."""
    return any(kind == f.store_kind for f in FORMATS)
