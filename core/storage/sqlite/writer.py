"""The writer class of one agent's database (loaded only by processes that write)."""

from __future__ import annotations

from .claims import Claims
from .connection import Handle


class AgentWriter(Handle, Claims):
    """One agent's database, for the write path, imports and reconciliation."""
