"""The storage layer: every SQL statement of backscroll lives below this package.

Search, history, visibility, reconciliation, importers and the front ends call the methods of
``interface.Storage`` (which agents exist; open one agent's data for reading or writing) and
of the ``AgentReader`` / ``AgentWriter`` it opens (``sessions``, ``events``, ``match``,
``append``, ``import_session``, ``claim_sessions``, ...). They exchange the records of
``storage.model`` and never see a connection. Two backends implement the interface: the
embedded ``storage.sqlite`` (the default) and ``storage.postgres`` (``open_storage`` with a
database URL); the second is imported only when a URL asks for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .interface import AgentReader, AgentWriter, PublishItem, SchemaBehind, Storage
from .model import (
    IDLE,
    AppendResult,
    BranchRow,
    CardFilter,
    Claim,
    CorpusStats,
    EverySessionBut,
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
    StoredTool,
    UsageRow,
    now_ms,
)

__all__ = [
    "IDLE",
    "AgentReader",
    "AgentWriter",
    "AppendResult",
    "BranchRow",
    "CardFilter",
    "Claim",
    "CorpusStats",
    "EverySessionBut",
    "FileState",
    "Imported",
    "MatchFilters",
    "Matches",
    "MatchRow",
    "StoredTool",
    "PartCount",
    "Progress",
    "PublishItem",
    "SchemaBehind",
    "SessionBrief",
    "SessionFilter",
    "SessionMeta",
    "SessionRow",
    "SessionScope",
    "Storage",
    "UsageRow",
    "database_init_sql",
    "init_database",
    "now_ms",
    "open_storage",
]


def open_storage(root: Path, database_url: str | None,
                 host: Callable[[], str] | None = None) -> Storage:
    """The embedded SQLite files under ``root``, or with a URL the PostgreSQL database.
    ``host`` gives this machine's label (``core/hosts.py``) when first needed. Nothing is
    connected or created here."""
    if database_url:
        from .dburl import check_url
        from .postgres import PostgresStorage

        return PostgresStorage(check_url(database_url), host)
    from .sqlite import SqliteStorage

    return SqliteStorage(root, host)


def database_init_sql() -> str:
    """The SQL that creates the server's schema and its two roles (nothing connects)."""
    from .postgres.schema import init_sql

    return init_sql()


def init_database(url: str) -> tuple[int, int]:
    """Create or upgrade the server's schema and (re)grant the two roles; returns the schema
    version found and the version now."""
    from .dburl import check_url
    from .postgres import init_database as init

    return init(check_url(url))
