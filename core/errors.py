"""The errors backscroll shows to people and programs.

Every error carries one sentence meant for a person; the CLI maps the class to an exit code
(2 bad input, 3 forbidden, 1 anything else) and JSON callers get ``as_json()``.
"""

from __future__ import annotations

from .redact import redact  # a sentence may quote a key or an id given as input


class BackscrollError(Exception):
    """Base class: ``str(err)`` is one sentence a user can act on."""

    status = "error"
    exit_code = 1

    def as_json(self) -> dict[str, str]:
        return {"status": self.status, "error": redact(str(self))}


class ValidationError(BackscrollError):
    """The caller asked for something malformed (bad query, limit, key, event)."""

    exit_code = 2


class Forbidden(BackscrollError):
    """The caller may not see this session, or it does not exist (the two look the same)."""

    status = "forbidden"
    exit_code = 3


class StoreError(BackscrollError):
    """The state dir or a database cannot be used (not writable, newer schema, corrupt)."""

    exit_code = 1


class Unreachable(StoreError):
    """The database server cannot be reached (gone, restarting, out of connections): work on
    every other agent or file would wait for it the same way, so the operation stops."""
