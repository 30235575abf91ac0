"""The writer class of one agent's database (loaded only by processes that write)."""

from __future__ import annotations

from .browsing import BrowseReads
from .claims import Claims
from .connection import Handle
from .imports import Imports
from .source_writes import SourceWrites


class AgentWriter(Handle, Claims, Imports, SourceWrites, BrowseReads):
    """One agent's database, for the write path, imports, syncs and reconciliation."""
