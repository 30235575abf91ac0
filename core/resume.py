"""The command that resumes a conversation in the agent tool that wrote it, or why none is
offered: the one rule the browser's ``r``, the grouped search, history and ``sessions_list``
answers use (``catalog.resume_of`` applies it to a listed session).

A transcript is written by whoever can write the home it was read from (in a team: any
writer host), and the command is pasted into a shell, so every part of it is checked, never
trusted (SECURITY.md, "Commands to paste"):

- the session id must have the shape the tool itself writes (a UUID, for Claude Code and
  Codex alike), so it can never be read as an option (``--settings=…``,
  ``--dangerously-skip-permissions``); Codex also gets ``--`` before it (``codex resume``'s
  ``SESSION_ID`` is its first clap positional, codex-rs/cli/src/main.rs ``ResumeCommand``,
  and clap reads every word after ``--`` as a positional). Claude Code gets none: its
  ``--resume`` takes an optional value, and ``--`` would end it, so there the shape check
  alone holds;
- the cwd must be an absolute path of at most 4096 bytes holding no control character (C0,
  C1, DEL: a pasted ``ESC [201~`` ends a bracketed paste, a carriage return presses Enter),
  no format character (Unicode Cf: bidi controls, zero-width characters), no line or
  paragraph separator and no lone surrogate;
- each word is written so that bash, zsh, dash and fish all read it as that one word:
  plain paths as they are, anything else in single quotes holding neither ``'`` nor ``\\``
  (fish reads both as escapes inside single quotes), each ``'`` and ``\\`` written outside
  the quotes as ``\\'`` and ``\\\\``, which the four shells read alike.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from . import formats

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
PATH_MAX_BYTES = 4096
# Characters every one of the four shells reads as themselves outside quotes, in a word that
# starts with "/" (no glob, brace, tilde, history, variable or process expansion).
_PLAIN = re.compile(r"/[A-Za-z0-9_./+,:@-]*")
# Unicode categories a pasted command never holds: controls, format characters (bidi
# controls among them), line and paragraph separators, lone surrogates.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
NONE_PREFIX = "no resume command: "


class Resume(NamedTuple):
    """How to go back into a conversation: a shell command (``command``) for Claude Code and
    Codex, the session key (``key``) for OpenClaw, whose runtime opens sessions by key, or
    none (``none``), ``text`` then saying why in one sentence."""

    kind: str  # command | key | none
    text: str

    @property
    def command(self) -> str | None:
        """The command to paste, or None (what the JSON answers give as ``resume``)."""
        return self.text if self.kind == "command" else None


def _none(why: str) -> Resume:
    return Resume("none", NONE_PREFIX + why)


def shell_word(text: str) -> str:
    """``text`` as one word for bash, zsh, dash and fish alike (see the module's notes); the
    caller has refused control and format characters already."""
    if _PLAIN.fullmatch(text):
        return text
    out = []
    for run in re.split(r"([\\'])", text):
        if run in ("\\", "'"):
            out.append("\\" + run)
        elif run:
            out.append(f"'{run}'")
    return "".join(out) or "''"


def unsafe_character(text: str) -> str | None:
    """The first character of ``text`` a pasted command must not hold, else None."""
    return next((c for c in text if unicodedata.category(c) in _REFUSED_CATEGORIES), None)


def _resumed() -> str:
    """The tools whose sessions a command resumes: ``Claude Code and Codex``."""
    labels = [f.label for f in formats.known() if f.resume is not None]
    return " and ".join([", ".join(labels[:-1]), labels[-1]] if len(labels) > 1 else labels)


def resume_command(source: str, own_id: bool, session_id: str, cwd: str | None) -> Resume:
    """The command that resumes a ``source`` session (a format with ``resume`` words:
    ``claude-code``, ``codex``) run in ``cwd``, or why there is none. ``own_id``: the session
    is the tool's own conversation (not a sub-agent's sidechain, whose id backscroll derived
    and the tool does not know)."""
    fmt = formats.get(source)
    tool = fmt.resume if fmt is not None else None  # the tool's words (Format.resume)
    if tool is None:
        return _none(f"only {_resumed()} sessions are resumed by a command")
    if not own_id or not session_id:
        return _none("it has no session id of its own (a sub-agent's conversation)")
    shape = re.compile(fmt.resume_id) if fmt is not None and fmt.resume_id else UUID
    if not shape.fullmatch(session_id):
        what = "of the tool's own shape" if shape is not UUID else "a UUID"
        return _none(f"its session id is not {what}, as the tool's own ids are")
    if not cwd:
        return _none("the folder it ran in is not known")
    if unsafe_character(cwd) is not None:
        return _none("its folder's name holds control or invisible characters")
    if not cwd.startswith("/"):
        return _none("its folder is not an absolute path")
    if len(cwd.encode("utf-8")) > PATH_MAX_BYTES:
        return _none(f"its folder's name is longer than {PATH_MAX_BYTES} bytes")
    return Resume("command", f"cd {shell_word(cwd)} && {' '.join(tool)} {session_id}")
