"""What `delete` does on a team server, and says it cannot do: the rows are gone from every
answer at commit, a plain VACUUM of the touched tables runs where the role owns them, and
the output names what an operator must do for the bytes (VACUUM FULL, CHECKPOINT, backups)."""

from __future__ import annotations

import json
from pathlib import Path

from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.postgres import schema

from .events import lines, msg
from .test_postgres import login_role, run, sql

SECRET = "hunter2-quetzalcoatlus"


def fill(url: str, tmp_path: Path) -> None:
    state = StateDir(tmp_path / "fill", database_url=url)
    with state.open("main", write=True) as db:
        db.import_session(SessionMeta("agent:main:doomed", session_id="doomed"), lines(
            msg("d1", None, "user", f"the password is {SECRET}"),
            msg("d2", "d1", "assistant", f"noted: {SECRET}")))
        db.import_session(SessionMeta("agent:main:kept", session_id="kept"), lines(
            msg("k1", None, "user", "an ordinary question")))


def stored(url: str) -> int:
    return sql(url, "SELECT count(*) FROM backscroll.events WHERE body LIKE %s",
               (f"%{SECRET}%",))[0][0]


def test_delete_on_postgres_vacuums_what_it_may_and_names_what_the_operator_must_do(
        pg_url: str, tmp_path: Path, capsys, monkeypatch) -> None:
    fill(pg_url, tmp_path)
    assert stored(pg_url) == 2
    code, out, err = run(capsys, monkeypatch, "delete", "agent:main:doomed", "--json",
                         "--state-dir", str(tmp_path / "s"), "--database", pg_url)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["deleted"] == "agent:main:doomed" and answer["purgePending"] is False
    said = " ".join(answer["remains"])
    assert ("ran VACUUM on branch_messages, events, message_index, message_text, session_facts, "
            "sessions, tool_index, usage_days") in said
    for needed in ("VACUUM FULL", "pg_repack", "CHECKPOINT", "WAL", "backups", "replicas",
                   "backscroll.events", "backscroll.message_text", "backscroll.sessions"):
        assert needed in said, needed
    assert stored(pg_url) == 0  # the rows are gone
    assert sql(pg_url, "SELECT key FROM backscroll.sessions") == [("agent:main:kept",)]


def test_a_writer_who_may_not_vacuum_is_told_so(pg_cluster, pg_url: str, tmp_path: Path, capsys,
                                                monkeypatch) -> None:
    fill(pg_url, tmp_path)
    run(capsys, monkeypatch, "db", "init", "--url", pg_url)  # the roles and their grants
    database = pg_url.split("@/")[1].split("?")[0]
    writer_url = pg_cluster.url(database, *login_role(pg_cluster, schema.WRITER_ROLE))
    code, out, err = run(capsys, monkeypatch, "delete", "agent:main:doomed",
                         "--state-dir", str(tmp_path / "s"), "--database", writer_url)
    assert code == 0, err
    text = " ".join(out.split())
    assert "deleted agent:main:doomed" in text
    assert ("does not own branch_messages, events, message_index, message_text, session_facts, "
            "sessions, tool_index, usage_days") in text
    assert "could not VACUUM them" in text and "VACUUM FULL" in text
    assert "WARNING" not in out + err and stored(pg_url) == 0
