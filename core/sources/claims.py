"""A session is fed by the file that holds it (SECURITY.md 2, docs/sources.md).

Which session a transcript line goes to is written in the file itself (an OpenClaw header's
``id``, a Claude Code record's ``sessionId``, a Codex ``session_meta``), so any file in a
source folder could name a session another file holds and plant turns in it. ``sync`` and
``watch`` therefore remember which file fed each session (the file states' ``sessions``): a
second file whose lines go to a session held by another file that still exists is not taken
in. Nothing it holds is stored, its state records the sentence as its problem (so it is not
read again until it changes), and the session stays as its own file wrote it.

Not a claim: the same file under a new name (a rename, an OpenClaw reset archive), a file
whose holder is gone from disk (the copy that is left feeds it), and a Claude Code sub-agent
session fed both by its ``<session>/subagents/agent-<id>.jsonl`` file and by the main
``<session>.jsonl`` (sidechain records, or the copies of ``agent_progress`` lines).
"""

from __future__ import annotations

import os
from typing import Iterable

from ..formats import is_store
from ..importers.common import same_family
from ..keys import normalize_key
from ..storage import FileState
from .deleted import deleted_keys, split


class Claimed(Exception):
    """A file's lines go to a session another file holds: nothing of it is stored."""


class Holders:
    """Per session key, the file that feeds it, for one agent's database."""

    def __init__(self, known: dict[str, FileState]) -> None:
        self.by_key: dict[str, str] = {}
        for state in known.values():
            if not is_store(state.kind) and state.missing_since is None:
                # a session deleted from it is still its own: its next line opens it again
                gone = deleted_keys(split(state.context)[1])
                for key in (*state.sessions, *gone):
                    self.by_key.setdefault(normalize_key(key), state.path)

    def check(self, path: str, kind: str, keys: Iterable[str], moved_from: str | None) -> None:
        """Raise :class:`Claimed` (one sentence) when ``path`` fed a session another file
        holds."""
        if is_store(kind):
            return
        for key in dict.fromkeys(normalize_key(k) for k in keys):
            holder = self.by_key.get(key)
            if holder is None or holder in (path, moved_from):
                continue
            if same_family(kind, key, path, holder):
                continue
            if not os.path.lexists(holder):
                continue  # the file that fed it is gone: this one (a copy, a move) goes on
            raise Claimed(
                f"{path}: names session {key}, which {holder} holds; not taken in (a session "
                "is fed by the file that holds it: move this file out of the source folder, "
                "or import it into another agent, to keep it)"
            )

    def hold(self, path: str, kind: str, keys: Iterable[str], moved_from: str | None) -> None:
        """``path`` (formerly ``moved_from``) was taken in and feeds ``keys``."""
        if is_store(kind):
            return
        if moved_from is not None:
            for key, holder in self.by_key.items():
                if holder == moved_from:
                    self.by_key[key] = path
        for key in keys:
            self.by_key.setdefault(normalize_key(key), path)

