"""Connections to a PostgreSQL server: the driver (imported here only, and only when a URL
asks for it), one pool of writer and one of reader connections per URL and process, and every
driver failure turned into one sentence with the password masked.

Pools reconnect by themselves: a connection the server dropped is checked and replaced when
it is next taken, so after a server restart the next operation works again. What was lost
with the old connection is a transaction that never committed; nothing is retried behind a
caller's back except reads and the conflicts PostgreSQL itself asks to retry (deadlock,
serialization), which roll back whole.
"""

from __future__ import annotations

import atexit
import functools
import logging
import random
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

from ...errors import BackscrollError, Forbidden, StoreError, Unreachable, ValidationError
from ..dburl import mask_secrets, mask_url

CONNECT_TIMEOUT_S = 10
GETCONN_TIMEOUT_S = 15.0
FIRST_WAIT_S = 1.0  # then a server that no connection can be made to is said at once
POOL_MAX = 8
RETRIES = 4
INSTALL_HINT = "pip install 'backscroll[postgres]'"


class Conflict(StoreError):
    """PostgreSQL rolled a transaction back to break a deadlock or a serialization
    conflict: running it again is safe."""


def driver() -> tuple[Any, Any]:
    """``(psycopg, psycopg_pool)``, or one sentence saying how to install them."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise StoreError(
            f"a database URL needs the PostgreSQL driver, which is not installed: {INSTALL_HINT}"
        ) from None
    return psycopg, psycopg_pool


def one_line(text: str) -> str:
    text = " ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return text.removeprefix("connection failed: ").rstrip(".")


def translate(err: BaseException, url: str) -> BackscrollError:
    """A driver exception as the one sentence a person reads (password masked)."""
    psycopg, psycopg_pool = driver()
    errors = psycopg.errors
    where = mask_url(url)
    reason = one_line(str(err))
    if isinstance(err, (errors.DeadlockDetected, errors.SerializationFailure)):
        found: BackscrollError = Conflict(f"{where}: {reason}")
    elif isinstance(err, errors.InsufficientPrivilege):
        found = Forbidden(
            f"the database role may not do this on {where} ({reason}); agent hosts need the "
            "writer role, support staff the read-only role (see docs/postgres.md)"
        )
    elif isinstance(err, errors.ReadOnlySqlTransaction):
        found = Forbidden(f"{where} is read-only for this connection ({reason})")
    elif isinstance(err, (errors.UndefinedTable, errors.InvalidSchemaName, errors.UndefinedColumn)):
        found = StoreError(
            f"{where} holds no usable backscroll schema ({reason}): create or upgrade it with "
            "`backscroll db init --url URL`"
        )
    elif isinstance(err, psycopg_pool.PoolTimeout):
        found = Unreachable(
            f"no connection to {where} within {GETCONN_TIMEOUT_S:.0f} s: the server is "
            "unreachable or every connection is busy; try again"
        )
    elif isinstance(err, psycopg.DataError):
        found = ValidationError(f"the database refused a value ({reason})")
    elif isinstance(err, psycopg.OperationalError):
        found = StoreError(
            f"lost the connection to {where} ({reason}); the unfinished transaction was rolled "
            "back, so nothing is half written: try again"
        )
    else:
        found = StoreError(f"{where}: {reason}")
    return type(found)(mask_secrets(str(found), url))


@contextmanager
def pg_errors(url: str) -> Iterator[None]:
    """Run database work; any driver failure leaves as one sentence."""
    psycopg, psycopg_pool = driver()
    try:
        yield
    except (psycopg.Error, psycopg_pool.PoolTimeout) as err:
        raise translate(err, url) from None
    except UnicodeEncodeError:
        raise ValidationError("text with a lone surrogate cannot be stored") from None


def connect(url: str, read_only: bool = False) -> Any:
    """A fresh autocommit connection (not pooled), or one sentence saying why not."""
    psycopg, _pool = driver()
    try:
        conn = psycopg.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S, application_name="backscroll"
        )
    except psycopg.Error as err:
        message = f"cannot connect to {mask_url(url)}: {one_line(str(err))}"
        raise Unreachable(mask_secrets(message, url)) from None
    except Exception as err:  # e.g. a malformed URL the driver cannot parse
        message = f"cannot use the database URL {mask_url(url)}: {one_line(str(err))}"
        raise ValidationError(mask_secrets(message, url)) from None
    _configure(conn, read_only)
    return conn


def _configure(conn: Any, read_only: bool) -> None:
    conn.execute("SET search_path TO backscroll, pg_catalog")
    # A plan for the words actually searched: a rare word wants the GIN index, a word in most
    # rows the newest-first walk; a generic prepared plan would pick one for both.
    conn.execute("SET plan_cache_mode TO force_custom_plan")
    # ranking sorts a rank window of rows with their tsvectors: keep it in memory
    conn.execute("SET work_mem TO '32MB'")
    if read_only:
        conn.execute("SET default_transaction_read_only TO on")


def quiet_pool_log() -> None:
    """The pool logs a warning for each connection it discards and each reconnect that fails;
    with no logging set up, Python would print every one on stderr around the one sentence
    backscroll says. A handler of their own keeps them off the terminal; an application that
    sets up logging still gets them."""
    log = logging.getLogger("psycopg.pool")
    if not log.handlers:
        log.addHandler(logging.NullHandler())


class Pools:
    """The writer and reader pools of one URL in this process, made on first use."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.lock = threading.Lock()
        self.pools: dict[bool, Any] = {}
        self.schema_checked = False  # the schema was found current (or migrated) once
        self.upgrade_refused = False  # a migration this role may not run (not the owner)

    def get(self, read_only: bool) -> Any:
        pool = self.pools.get(read_only)
        if pool is not None:
            return pool
        with self.lock:
            pool = self.pools.get(read_only)
            if pool is None:
                _psycopg, psycopg_pool = driver()
                quiet_pool_log()
                connect(self.url, read_only).close()  # a clear sentence if it cannot connect
                pool = psycopg_pool.ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=POOL_MAX,
                    kwargs={
                        "autocommit": True,
                        "connect_timeout": CONNECT_TIMEOUT_S,
                        "application_name": "backscroll",
                    },
                    configure=lambda conn: _configure(conn, read_only),
                    check=psycopg_pool.ConnectionPool.check_connection,
                    timeout=GETCONN_TIMEOUT_S,
                    name=f"backscroll-{'read' if read_only else 'write'}",
                    open=True,
                )
                self.pools[read_only] = pool
        return pool

    def getconn(self, read_only: bool) -> Any:
        pool = self.get(read_only)
        _psycopg, psycopg_pool = driver()
        with pg_errors(self.url):
            try:
                return pool.getconn(timeout=min(FIRST_WAIT_S, GETCONN_TIMEOUT_S))
            except psycopg_pool.PoolTimeout:
                pass
            # None at hand: ask the server itself, so a stopped one is said at once (the
            # pool would retry for the whole wait); one that answers has every connection
            # busy, and the wait goes on.
            connect(self.url, read_only).close()
            return pool.getconn(timeout=max(GETCONN_TIMEOUT_S - FIRST_WAIT_S, 0.1))

    @contextmanager
    def connection(self, read_only: bool) -> Iterator[Any]:
        """A pooled connection for a few statements, given back after."""
        conn = self.getconn(read_only)
        try:
            with pg_errors(self.url):
                yield conn
        finally:
            self.putconn(conn, read_only)

    def putconn(self, conn: Any, read_only: bool) -> None:
        pool = self.pools.get(read_only)
        try:
            if pool is not None:
                pool.putconn(conn)
            else:
                conn.close()
        except Exception:  # a dead connection: the pool drops it
            pass

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close(timeout=1)
        self.pools.clear()


_registry: dict[str, Pools] = {}
_registry_lock = threading.Lock()


def pools_for(url: str) -> Pools:
    with _registry_lock:
        found = _registry.get(url)
        if found is None:
            found = _registry[url] = Pools(url)
        return found


def close_pools(url: str) -> None:
    """Close this process's connections to ``url`` (before the database goes away)."""
    with _registry_lock:
        pools = _registry.pop(url, None)
    if pools is not None:
        pools.close()


@atexit.register
def close_all() -> None:
    with _registry_lock:
        for pools in _registry.values():
            pools.close()
        _registry.clear()


F = TypeVar("F", bound=Callable[..., Any])


def retried(method: F) -> F:
    """Run a self-contained write again when PostgreSQL rolled it back to break a deadlock or
    a serialization conflict (never inside a caller's transaction: that one fails whole)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        for attempt in range(RETRIES):
            try:
                return method(self, *args, **kwargs)
            except Conflict:
                if self.in_transaction or attempt == RETRIES - 1:
                    raise
                time.sleep(random.uniform(0.005, 0.05) * (attempt + 1))
        raise AssertionError("unreachable")

    return wrapper  # type: ignore[return-value]
