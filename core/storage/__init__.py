"""The storage layer: every SQL statement of backscroll lives below this package.

Search, history, visibility, reconciliation, importers and the front ends call methods of a
*storage* (which agents exist; open one agent's database for reading or writing) and of the
agent database it opens (``sessions``, ``events``, ``match``, ``append``, ``import_session``,
``claim_sessions``, ...). They exchange the dataclasses of ``storage.model`` and never see a
connection. The embedded backend is ``storage.sqlite``.
"""

from __future__ import annotations

from .model import (
    IDLE,
    AppendResult,
    CardFilter,
    Claim,
    CorpusStats,
    FileState,
    Imported,
    Matches,
    MatchFilters,
    MatchRow,
    PartCount,
    Progress,
    SessionBrief,
    SessionFilter,
    SessionMeta,
    SessionRow,
    SessionScope,
    now_ms,
)

__all__ = [
    "IDLE",
    "AppendResult",
    "CardFilter",
    "Claim",
    "CorpusStats",
    "FileState",
    "Imported",
    "MatchFilters",
    "Matches",
    "MatchRow",
    "PartCount",
    "Progress",
    "SessionBrief",
    "SessionFilter",
    "SessionMeta",
    "SessionRow",
    "SessionScope",
    "now_ms",
]
