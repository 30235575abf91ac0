"""The totals of every session's index rows and characters (SQLite's ``index_totals``,
schema migration 8), which a search as the operator reads instead of summing every session's
index state: kept by triggers in the transaction of every change, filled by the migration,
checked by ``verify``."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing, nullcontext

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.indexer import session_rows
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR

from .events import header, leaf, msg
from .older_schema import downgrade

SUMS = "SELECT coalesce(sum(rows), 0), coalesce(sum(chars), 0) FROM index_state"
KEYS = ("agent:main:main", "agent:main:one", "agent:main:two")


def totals_and_sums(state: StateDir) -> tuple[tuple[int, int], tuple[int, int]]:
    with closing(sqlite3.connect(state.db_path("main"))) as conn:
        kept = conn.execute("SELECT rows, chars FROM index_totals").fetchone()
        return kept, conn.execute(SUMS).fetchone()


class Life:
    """Sessions of one agent living through what the writers do, step by step."""

    def __init__(self, state: StateDir) -> None:
        self.state = state
        self.count = 0
        self.leaves: dict[str, str | None] = {}  # key -> the last message appended

    def message(self, key: str, words: int) -> dict:
        self.count += 1
        event = msg(f"m{self.count}", self.leaves.get(key), ("user", "assistant")[self.count % 2],
                    " ".join(["heron"] * words), ms=self.count * 1000)
        self.leaves[key] = event["id"]
        return event

    def opening(self, key: str) -> list[dict]:
        return [] if key in self.leaves else [header(f"sid-{key.rsplit(':', 1)[-1]}")]

    def step(self, kind: str, key: str, size: int) -> None:
        meta = SessionMeta(key, session_id=f"sid-{key.rsplit(':', 1)[-1]}")
        with self.state.open("main", write=True) as db:
            if kind in ("append", "sync"):  # sync: a file's new lines in one transaction
                events = self.opening(key) + [self.message(key, size) for _ in range(1 + size)]
                with db.atomic() if kind == "sync" else nullcontext():
                    for event in events:
                        db.append(meta, json.dumps(event))
            elif kind == "rewind":
                db.append(meta, json.dumps(leaf(f"l{self.count}", None)))
                self.leaves.setdefault(key, None)
            elif kind == "import":
                events = self.opening(key) + [self.message(key, size) for _ in range(size)]
                db.import_session(meta, [json.dumps(e) for e in events])
            elif kind == "abandon":  # a rebuild that writes rows, then gives its claims back
                for claim in db.claim_sessions("test", 60_000, 500, 10**9):
                    rows = session_rows(claim.key, db.events(claim.session_pk),
                                        claim.created_at)[0]
                    db.write_rows(claim, "test", rows[:size], True, 60_000)
                    db.write_rows(claim, "test", rows[size:], False, 60_000)
                db.release_all("test")
            elif kind == "delete":
                if db.delete_session(key):
                    self.leaves.pop(key, None)
            elif kind == "purge":
                db.purge()
        if kind == "rebuild":
            reconcile_agent(self.state, "main")
        elif kind == "rebuild in batches":  # of 2 events: a longer session takes several
            reconcile_agent(self.state, "main", batch_events=2)


STEP_KINDS = ("append", "append", "sync", "rewind", "import", "import", "rebuild",
              "rebuild in batches", "abandon", "delete", "purge")


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.sampled_from(STEP_KINDS), st.sampled_from(KEYS),
                                st.integers(0, 3)), min_size=1, max_size=14))
@pytest.mark.slow
def test_the_totals_are_the_sums_after_every_write(
    fresh_state, steps: list[tuple[str, str, int]]
) -> None:
    """Appends (one a transaction, or a sync's many in one), rewinds, imports, rebuilds
    (whole, or in batches), rebuilds abandoned halfway, deletes and purges: after each, the
    totals equal the sums of every session's index state."""
    life = Life(fresh_state())
    life.step("append", "agent:main:main", 1)
    for kind, key, size in steps:
        life.step(kind, key, size)
        kept, sums = totals_and_sums(life.state)
        assert kept == sums, (kind, key, size)


def test_the_triggers_follow_every_change_of_index_state(state: StateDir) -> None:
    """Each trigger on its own (the writers insert index states with no rows yet): an
    insert, an update of rows and of chars, a delete, and a delete of a session that takes
    its index state with it (a foreign key)."""
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(header()))
        conn = db.conn
        conn.execute("INSERT INTO sessions (pk, key, session_id, created_at, updated_at) "
                     "VALUES (7, 'agent:main:x', 'sid-x', 0, 0), (8, 'agent:main:y', 'sid-y', 0, 0)")
        conn.execute("INSERT INTO index_state (session_pk, state, rows, chars) "
                     "VALUES (7, 'dirty', 3, 30), (8, 'dirty', 5, 50)")
        assert totals_and_sums(state) == ((8, 80), (8, 80))
        conn.execute("UPDATE index_state SET rows = 4 WHERE session_pk = 7")
        conn.execute("UPDATE index_state SET chars = 41 WHERE session_pk = 7")
        assert totals_and_sums(state) == ((9, 91), (9, 91))
        conn.execute("DELETE FROM index_state WHERE session_pk = 7")
        assert totals_and_sums(state) == ((5, 50), (5, 50))
        conn.execute("DELETE FROM sessions WHERE pk = 8")
        assert totals_and_sums(state) == ((0, 0), (0, 0))


def test_appends_in_one_transaction_stay_one_index_segment(state: StateDir) -> None:
    """The totals' trigger must not make each append of a sync's transaction write its row
    out as an FTS5 segment of its own (``Writes._insert_row``)."""
    life = Life(state)
    for _ in range(3):
        life.step("sync", "agent:main:main", 3)
    with state.open("main") as db:
        segments = db.conn.execute("SELECT count(DISTINCT segid) FROM message_fts_idx").fetchone()
    assert segments == (3,)  # one per transaction
    assert totals_and_sums(state)[0] == (12, 12 * len("heron heron heron"))


def test_the_migration_fills_the_totals_of_a_schema_7_database(state: StateDir) -> None:
    life = Life(state)
    life.step("append", "agent:main:main", 2)  # 3 rows of "heron heron"
    life.step("import", "agent:main:one", 3)
    life.step("rebuild", "agent:main:one", 1)  # 3 rows of "heron heron heron"
    life.step("import", "agent:main:two", 1)  # not indexed: no rows
    downgrade(state.db_path("main"), 7)
    with state.open("main", write=True):
        pass  # a writer migrates
    assert totals_and_sums(state) == ((6, 3 * 11 + 3 * 17), (6, 84))
    life.step("append", "agent:main:main", 1)  # and the triggers keep them from then on
    assert totals_and_sums(state) == ((8, 94), (8, 94))


def test_verify_names_totals_that_are_not_the_sums(state: StateDir) -> None:
    life = Life(state)
    life.step("append", "agent:main:main", 2)  # 3 rows of "heron heron"
    assert verify_state(state).ok
    path = state.db_path("main")
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("UPDATE index_totals SET chars = chars + 1")
    report = verify_state(state)
    assert report.problems == ["main: the index totals say 3 rows of 34 characters, "
                               "the sessions' index states 3 of 33"]
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("DELETE FROM index_totals")
    assert verify_state(state).problems == ["main: the index totals are missing"]
    # a search still ranks (from the sums), and verify said what is wrong
    assert [r.message_id for r in sessions_search(state, SearchRequest("heron"), OPERATOR).results
            ] == ["m3", "m2", "m1"]
