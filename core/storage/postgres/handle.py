"""One agent's handle on the server: a pooled connection, transactions, and the query helpers
every other module of the backend uses (each failure one sentence, see ``driver``)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from ..dburl import mask_url
from .driver import pg_errors, pools_for


class Handle:
    """A connection from the pool (writer or read-only) and the agent it serves.

    Statements outside a transaction run in autocommit mode; ``_tx`` opens one (or joins the
    caller's, so a method called inside ``transaction()`` commits with everything else).
    A connection the server dropped is replaced before the next statement outside a
    transaction, and a read that met a dropped connection is run once more on a new one.
    """

    def __init__(self, url: str, agent_id: str, write: bool) -> None:
        self.url = url
        self.agent_id = agent_id
        self.write = write
        self._pools = pools_for(url)
        self.conn = self._pools.getconn(read_only=not write)
        self._depth = 0

    @property
    def location(self) -> str:
        return f"{mask_url(self.url)}#{self.agent_id}"

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    def close(self) -> None:
        if self.conn is not None:
            self._pools.putconn(self.conn, read_only=not self.write)
            self.conn = None

    def __enter__(self):  # noqa: ANN204 - returns the concrete class
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fresh(self) -> None:
        """Swap a dropped connection for a new one (only ever between transactions); a swap
        that failed (the server still down) is tried again at the next statement."""
        if self._depth == 0 and (self.conn is None or self.conn.broken or self.conn.closed):
            self.close()
            self.conn = self._pools.getconn(read_only=not self.write)

    @contextmanager
    def _tx(self, snapshot: bool = False) -> Iterator[Any]:
        """A transaction (READ COMMITTED; with ``snapshot`` REPEATABLE READ, READ ONLY), or
        the caller's if one is open: then everything commits or fails together."""
        if self._depth:
            yield self.conn
            return
        self._fresh()
        with pg_errors(self.url):
            with self.conn.transaction():
                if snapshot:
                    self.conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1

    def snapshot(self):  # noqa: ANN201 - a context manager
        """A read transaction: every read inside sees one consistent state."""
        return self._tx(snapshot=True)

    def _run(self, sql: str, params: Any = None) -> Any:
        """Execute one statement; outside a transaction a dropped connection is replaced
        and the statement run again when it only reads."""
        if self._depth:
            with pg_errors(self.url):
                return self.conn.execute(sql, params)
        self._fresh()
        try:
            with pg_errors(self.url):
                return self.conn.execute(sql, params)
        except Exception:
            reading = sql.lstrip().upper().startswith(("SELECT", "WITH"))
            if not (reading and (self.conn.broken or self.conn.closed)):
                raise
        self._fresh()
        with pg_errors(self.url):
            return self.conn.execute(sql, params)

    def _all(self, sql: str, params: Any = None) -> list[Any]:
        cursor = self._run(sql, params)
        with pg_errors(self.url):
            return cursor.fetchall()

    def _one(self, sql: str, params: Any = None) -> Any:
        cursor = self._run(sql, params)
        with pg_errors(self.url):
            return cursor.fetchone()
