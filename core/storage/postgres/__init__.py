"""The PostgreSQL backend: one database shared by every agent host (SPEC 13).

``PostgresStorage(url)`` implements ``storage.interface.Storage``; ``open(agent)`` gives an
``AgentReader`` on a read-only pooled connection (it never writes, creates or migrates),
``open(agent, write=True)`` an ``AgentWriter`` (it creates the agent, and the schema when the
role may). One module per role, under the same names as in ``storage/sqlite/`` (``reads``, ``sources``,
``browsing``, ``matching``, ``writes``, ``imports``, ``source_writes``, ``claims``,
``writer``, ``schema``), and the server's own: ``driver`` (connections, pools, errors),
``handle``, ``locks``, ``erase``, ``fts`` (tokens as tsvectors, bm25), ``text``. The driver
(psycopg 3) is imported on first use only.
"""

from __future__ import annotations

from typing import Callable

from ...errors import Forbidden, StoreError
from ...keys import check_agent_id
from ..dburl import mask_url
from ..interface import SchemaBehind
from ..migrations import Recorded
from ..model import default_host, now_ms
from .browsing import BrowseReads
from .driver import connect, pg_errors, pools_for
from .facts import FactsStore
from .schema import check, current, migrate, recorded, works
from .sources import SourceReads
from .writer import PgWriter


class PgReader(SourceReads, FactsStore, BrowseReads):
    """One agent's rows, read-only."""


class PostgresStorage:
    """Every agent's transcripts and index in one PostgreSQL database (schema ``backscroll``).

    Holds only the URL: pools live per process (``driver.pools_for``), so a storage pickles
    into a helper process and connects there.
    """

    shared = True  # capability flags: see interface.Storage
    has_files = False

    def __init__(self, url: str, host: Callable[[], str] | None = None) -> None:
        self.url = url
        self.host = host or default_host

    def describe(self) -> str:
        return f"PostgreSQL at {mask_url(self.url)}"

    def child_env(self) -> dict[str, str]:
        return {"BACKSCROLL_DATABASE_URL": self.url}

    def _version(self, write: bool) -> int:
        return self._recorded(write).version

    def _recorded(self, write: bool) -> Recorded:
        with pools_for(self.url).connection(read_only=not write) as conn:
            return recorded(conn)

    def available(self) -> bool:
        return self._version(write=False) > 0

    def require(self) -> None:
        """One sentence when the database holds no schema (or a newer one): an older one is
        readable enough to list agents, and each agent answers ``SchemaBehind`` unless the
        code works with it as it is (``schema.INDEX_ONLY``)."""
        self._checked()

    def _checked(self) -> tuple[int, bool]:
        """The schema's count, and whether the code works with it as it is."""
        pools = pools_for(self.url)
        if pools.schema_checked:
            return 0, True
        state = self._recorded(write=False)
        done = check(state, self.url)
        if state.version == 0:
            raise StoreError(
                f"{mask_url(self.url)} holds no backscroll schema yet: create it with "
                "`backscroll db init --url URL`, or copy a local state in with `backscroll push URL`"
            )
        if state.names is not None and current(done):
            pools.schema_checked = True
        return state.version, works(done)

    def _check_readable(self) -> None:
        version, workable = self._checked()
        if not workable:
            raise SchemaBehind(
                f"{mask_url(self.url)} holds an older backscroll schema (version {version}): "
                "the next write or `backscroll db init --url URL` upgrades it"
            )

    def _migrate(self) -> None:
        pools = pools_for(self.url)
        if pools.schema_checked or pools.upgrade_refused:
            return
        try:
            with pools.connection(read_only=False) as conn:
                migrate(conn, self.url)
        except Forbidden:
            # Not the owner: a schema the code works with as it is (what is missing is
            # indexes) is used as it is, and the owner's `db init` adds them.
            state = self._recorded(write=True)
            if not works(check(state, self.url)):  # the cure is the owner's, not another role
                raise Forbidden(
                    f"{mask_url(self.url)} holds an older backscroll schema (version "
                    f"{state.version}) that this role may not upgrade: run `backscroll db init "
                    "--url URL` as the schema's owner"
                ) from None
            pools.upgrade_refused = True
            return
        pools.schema_checked = True

    def unwritable(self, agent_id: str) -> str | None:
        """Nothing is known against writing before trying: the server answers a write it
        refuses (a read-only role) with one sentence then."""
        return None

    def agents(self) -> list[str]:
        self.require()
        with pools_for(self.url).connection(read_only=True) as conn:
            rows = conn.execute("SELECT agent_id FROM agents ORDER BY agent_id").fetchall()
        return [row[0] for row in rows]

    def open(self, agent_id: str, write: bool = False) -> PgReader | PgWriter:
        agent_id = check_agent_id(agent_id)
        if not write:
            self._check_readable()
            reader = PgReader(self.url, agent_id, write=False)
            reader.host = self.host()
            try:
                if reader._one("SELECT 1 FROM agents WHERE agent_id = %s", (agent_id,)) is None:
                    raise StoreError(f"agent {agent_id!r} has no data in {mask_url(self.url)}")
            except BaseException:
                reader.close()
                raise
            return reader
        self._migrate()
        writer = PgWriter(self.url, agent_id, write=True)
        writer.host = self.host()
        try:
            writer.ensure_agent(now_ms())
        except BaseException:
            writer.close()
            raise
        return writer


def init_database(url: str) -> tuple[int, int]:
    """``backscroll db init``: create or upgrade the schema and grant the two roles, as the
    connecting (owner) role. Returns the version found and the version now."""
    conn = connect(url)
    try:
        with pg_errors(url):
            before = migrate(conn, url, roles=True)
            after = recorded(conn).version
    finally:
        conn.close()
    return before, after
