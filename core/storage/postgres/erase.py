"""What a delete can erase on the server from a client, and what it cannot (docs/postgres.md,
"What delete does and does not do there").

A deleted session's rows are gone from every query at commit, but PostgreSQL keeps their bytes:
dead tuples in the table and index files until VACUUM prunes them (and even then the pruned
bytes may stay in a page's free space until the page is rewritten), the WAL until it is
recycled, and every base backup, WAL archive and replica. A client can run a plain ``VACUUM``
on the tables a delete touches when it owns them (it takes no lock that stops readers or
writers); ``VACUUM FULL`` or ``pg_repack`` rewrites the files but locks the tables, so that is
the operator's to schedule, with a ``CHECKPOINT`` so the WAL that holds the text is recycled.
"""

from __future__ import annotations

from typing import Any

from .driver import pg_errors

# Every table a delete removes rows from (events, index rows and their text, the session).
TOUCHED = ("events", "message_index", "message_text", "branch_messages", "tool_index",
           "session_facts", "usage_days", "sessions")

_OWNED = """
    SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'backscroll' AND c.relname = ANY(%s)
      AND pg_has_role(c.relowner, 'USAGE') ORDER BY c.relname
"""


def vacuum_touched(conn: Any, url: str) -> tuple[list[str], list[str]]:
    """Run ``VACUUM`` on the touched tables this role may vacuum (it owns them); returns
    (vacuumed, left). The connection must be outside a transaction (autocommit)."""
    with pg_errors(url):
        owned = [name for (name,) in conn.execute(_OWNED, (list(TOUCHED),)).fetchall()]
        if owned:
            conn.execute("VACUUM " + ", ".join(f"backscroll.{name}" for name in owned))
    return owned, sorted(name for name in TOUCHED if name not in owned)


def limits(vacuumed: list[str], left: list[str]) -> list[str]:
    """The sentences ``delete`` shows on PostgreSQL: what ran, and what an operator must do."""
    tables = ", ".join(f"backscroll.{name}" for name in TOUCHED)
    notes = []
    if vacuumed:
        notes.append("ran VACUUM on " + ", ".join(vacuumed) + ": the deleted rows are pruned, "
                     "but their bytes may stay in the table and index files until the pages "
                     "are rewritten")
    if left:
        notes.append("this database role does not own " + ", ".join(left) + ", so it could "
                     "not VACUUM them: the deleted text stays in their files until the "
                     "schema's owner or autovacuum does")
    notes.append(f"on PostgreSQL the deleted text stays in the server's files until an "
                 f"operator runs VACUUM FULL (or pg_repack) on {tables}, then CHECKPOINT so "
                 "the WAL holding it is recycled; base backups, WAL archives and replicas "
                 "keep it until they expire (docs/postgres.md)")
    return notes


class Erasing:
    """The writer's ``purge`` and ``purge_limits`` (mixed into ``writes.Writes``)."""

    url: str
    conn: Any
    _depth: int
    _erased: tuple[list[str], list[str]] = ([], sorted(TOUCHED))
    _fresh: Any  # Handle's

    def purge(self, only_if_pending: bool = False) -> bool:
        """Deleted rows are gone from every query at commit; what a client can do about their
        bytes is a plain VACUUM of the tables a delete touches, where this role owns them; a
        pass with nothing pending (``only_if_pending``) has nothing to do."""
        if only_if_pending or self._depth:
            return True
        self._fresh()
        self._erased = vacuum_touched(self.conn, self.url)
        return True

    def purge_limits(self) -> list[str]:
        return limits(*self._erased)
