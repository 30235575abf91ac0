"""Reader connections kept open between calls (``StateDir(keep_readers=True)``)."""

from __future__ import annotations

import pickle
import shutil
import threading

import pytest

from backscroll.core.errors import StoreError
from backscroll.core.state import StateDir
from backscroll.core.storage.sqlite.schema import SCHEMA_VERSION

from .test_search import add

KEY = "agent:main:main"


@pytest.fixture
def kept(state: StateDir) -> StateDir:
    add(state, KEY, "m1", "first words", 1_000)
    return StateDir(state.path, keep_readers=True)


def messages(state: StateDir) -> int:
    with state.open("main") as db:
        return len(db.events(db.session(KEY).pk))


def test_the_next_reader_in_a_thread_reuses_the_connection_and_sees_new_writes(kept) -> None:
    with kept.open("main") as first:
        conn = first.conn
    assert messages(kept) == 1
    add(kept, KEY, "m2", "more words", 2_000)  # a writer commits between two reads
    with kept.open("main") as again:
        assert again.conn is conn and not conn.in_transaction
    assert messages(kept) == 2
    with StateDir(kept.path).open("main") as plain, StateDir(kept.path).open("main") as other:
        assert plain.conn is not other.conn  # without keep_readers nothing is kept


def test_a_nested_reader_gets_its_own_connection(kept) -> None:
    with kept.open("main") as outer, outer.snapshot():
        with kept.open("main") as inner:
            assert inner.conn is not outer.conn
            nested = inner.conn
        with pytest.raises(Exception, match="closed"):
            nested.execute("SELECT 1")  # not kept: closed when given back
        assert outer.sessions()  # the outer one still reads


def test_threads_never_share_a_connection(kept) -> None:
    seen = []

    def read() -> None:
        with kept.open("main") as db:
            seen.append(db.conn)
            db.sessions()  # sqlite3 refuses a connection made in another thread

    workers = [threading.Thread(target=read) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    with kept.open("main") as mine:
        assert len({id(c) for c in [*seen, mine.conn]}) == 4


def test_a_replaced_database_is_opened_again(kept) -> None:
    assert messages(kept) == 1
    shutil.rmtree(kept.path / "agents" / "main")
    add(kept, KEY, "n1", "a new file", 1_000)
    add(kept, KEY, "n2", "with two messages", 2_000)
    assert messages(kept) == 2  # the kept connection still held the deleted file


def test_a_schema_moved_under_a_kept_reader_is_checked_again(kept) -> None:
    assert messages(kept) == 1
    with kept.open("main", write=True) as db:
        db.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(StoreError, match="newer backscroll"):
        kept.open("main")


def test_a_reader_left_mid_transaction_is_rolled_back(kept) -> None:
    with pytest.raises(RuntimeError):
        with kept.open("main") as db:
            db.conn.execute("BEGIN")
            db.sessions()
            raise RuntimeError("a failure inside a read")
    add(kept, KEY, "m2", "written after", 2_000)
    assert messages(kept) == 2  # no stale snapshot was kept


def test_a_pickled_state_keeps_readers_but_no_connection(kept) -> None:
    with kept.open("main"):
        pass
    copy = pickle.loads(pickle.dumps(kept))
    with copy.open("main") as first:
        conn = first.conn
    with copy.open("main") as second:
        assert second.conn is conn
    assert messages(copy) == 1
