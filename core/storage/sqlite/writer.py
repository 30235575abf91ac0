"""The writer class of one agent's database (loaded only by processes that write)."""

from __future__ import annotations

from .browsing import BrowseReads
from .claims import Claims
from .source_writes import SourceWrites


class AgentWriter(Claims, SourceWrites, BrowseReads):
    """One agent's database, for the write path, imports, syncs and reconciliation."""
