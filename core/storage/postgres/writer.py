"""The writer class of one agent's rows (as ``storage/sqlite/writer.py``)."""

from __future__ import annotations

from .browsing import BrowseReads
from .claims import Claims
from .source_writes import SourceWrites


class PgWriter(Claims, SourceWrites, BrowseReads):
    """One agent's rows, for the write path, imports and reconciliation."""
