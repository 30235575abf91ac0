"""Secret redaction (SPEC 6): every text that is indexed, shown or exported passes ``redact``.

This module is the door: the version of the rules, and the two calls. The engine
(``engine.py``, with the rules in the other modules of this package) compiles large patterns, so it loads
on the first call: a process that never shows or indexes text (a search that matches nothing)
does not pay for it. docs/redaction.md explains the rules.
"""

from __future__ import annotations

from typing import Any

# Bump whenever a rule changes: it is part of the indexer version, so every session is
# re-indexed with the new rules (SPEC 3, 8).
REDACTION_VERSION = 5


_engine: Any = None


def _load() -> Any:
    global _engine
    from . import engine

    _engine = engine
    return _engine


def redact(text: str) -> str:
    """``text`` with every secret masked. Idempotent: ``redact(redact(x)) == redact(x)``."""
    return (_engine or _load()).redact(text)


def contains_secret(text: str) -> bool:
    """Whether ``redact`` would change ``text``."""
    return (_engine or _load()).contains_secret(text)


def quoted(value: object, limit: int = 80) -> str:
    """A value quoted for an error sentence: redacted (before the cut, which could leave part
    of a token no rule knows), escapes visible, at most ``limit`` characters."""
    text = redact(str(value))
    shown = repr(text) if text.isprintable() and text.isascii() else ascii(text).replace("\\u2026", "…")
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
