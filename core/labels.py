"""The labels backscroll makes up for a session that has none of its own (an OpenClaw
transcript with no ``sessions.json`` entry, an archive a reset left behind), and how a list
tells them from the labels people and tools wrote: a made-up label names a file, not the
conversation, so a title prefers the first message to it (``SessionSummary.display_title``).
"""

from __future__ import annotations

import re

_IMPORTED = "imported "
_MADE_UP = re.compile(r"^(?:imported .+\.jsonl|(?:reset|deleted) archive of .+ \(.+\))$", re.S)


def import_label(file_name: str) -> str:
    """A transcript imported without a ``sessions.json`` entry."""
    return f"{_IMPORTED}{file_name}"


def archive_label(kind: str, of: str, when: str) -> str:
    """An archive OpenClaw wrote on a reset or a delete (``<id>.jsonl.reset.<ts>``)."""
    return f"{kind} archive of {of} ({when})"


def made_up(label: str) -> bool:
    """Whether ``label`` is one of the labels above (as stored, or redacted: the shape stays)."""
    return _MADE_UP.match(label) is not None
