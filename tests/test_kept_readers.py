"""Reader connections kept warm per thread between uses (``storage/sqlite/handle.Handle``):
used again only while they still read the same, current file."""

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
    return state


def messages(state: StateDir) -> int:
    with state.open("main") as db:
        return len(db.events(db.session(KEY).pk))


def test_the_next_reader_in_a_thread_reuses_the_connection(kept) -> None:
    with kept.open("main") as first:
        conn = first.conn
    with kept.open("main") as again:
        assert again.conn is conn and not conn.in_transaction


def test_a_kept_reader_sees_new_writes(kept) -> None:
    assert messages(kept) == 1
    add(kept, KEY, "m2", "more words", 2_000)  # a writer commits between two reads
    assert messages(kept) == 2


def test_a_nested_reader_gets_its_own_connection(kept) -> None:
    with kept.open("main") as outer, outer.snapshot():
        with kept.open("main") as inner:
            assert inner.conn is not outer.conn
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


def test_a_reader_closed_mid_transaction_is_not_kept(kept) -> None:
    with pytest.raises(RuntimeError):
        with kept.open("main") as db:
            stale = db.conn
            db.conn.execute("BEGIN")
            db.sessions()
            raise RuntimeError("a failure inside a read")
    add(kept, KEY, "m2", "written after", 2_000)
    with kept.open("main") as again:
        assert again.conn is not stale
    assert messages(kept) == 2  # no stale snapshot was kept


def test_a_pickled_state_holds_no_connection(kept) -> None:
    copy = pickle.loads(pickle.dumps(kept))
    assert messages(copy) == 1
