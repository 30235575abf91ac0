"""Lists of conversations: what the storage keeps of each session (title, message count, last
activity, cwd; migration 5), the filters, and the command that resumes a conversation."""

from __future__ import annotations

import json

import pytest

from backscroll.core.catalog import (
    SessionSummary,
    list_sessions,
    project_list,
    resume_of,
    source_kind,
    visible_session_list,
)
from backscroll.core.errors import ValidationError
from backscroll.core.importers.claude_code import import_claude_code
from backscroll.core.importers.codex.importer import import_codex
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.storage.sqlite.schema import TITLE_CHARS
from backscroll.core.visibility import OPERATOR, Caller, Policy

from .events import BASE_MS, header, msg
from .older_schema import downgrade

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

SECRET = "sk-proj-Qx7Lm2Vb9Tn4Rk8Wz3Yp6Hs1Jd5Fg0Ac2Ne7Ut9Ko4Bi6Mq"


def store(state: StateDir, key: str, texts: list[tuple[str, str]], *, cwd: str | None = None,
          source: str = "live", start: int = 0, imported: bool = False) -> None:
    agent = key.split(":")[1]
    sid = f"sid-{key.rsplit(':', 1)[-1]}"
    first = header(sid, ms=BASE_MS + start)
    if cwd is not None:
        first["cwd"] = cwd
    events, parent = [first], None
    for i, (role, content) in enumerate(texts):
        events.append(msg(f"{sid}-{i}", parent, role, content, ms=start + (i + 1) * 1000))
        parent = f"{sid}-{i}"
    meta = SessionMeta(key, session_id=sid, source=source)
    with state.open(agent, write=True) as db:
        if imported:
            db.import_session(meta, [json.dumps(e) for e in events])
        else:
            for event in events:
                db.append(meta, json.dumps(event))


def by_key(state: StateDir, caller: Caller = OPERATOR, **filters: object) -> dict[str, SessionSummary]:
    return {s.key: s for s in visible_session_list(state, caller, **filters)}  # type: ignore[arg-type]


def test_a_live_session_keeps_title_count_and_last_activity(state: StateDir) -> None:
    store(state, "agent:main:main", [
        ("assistant", "Hello, how can I help?"),
        ("user", f"Deploy it with OPENAI_API_KEY={SECRET} please"),
        ("toolResult", "ignored: a tool result is no message of the conversation"),
        ("user", "and then the second question"),
    ], cwd="/srv/app")
    [summary] = visible_session_list(state, OPERATOR)
    assert summary.title is not None and summary.title.startswith("Deploy it with OPENAI_API_KEY=")
    assert SECRET not in summary.title and "sk-pro" in summary.title  # redacted as indexed
    assert summary.messages == 3  # user and assistant messages
    assert summary.last_activity == BASE_MS + 4000
    assert summary.cwd == "/srv/app" and summary.source == "openclaw"
    assert summary.display_title == summary.title


def test_imported_sessions_get_their_summary_when_indexed(state: StateDir) -> None:
    store(state, "agent:main:old", [("user", "an imported question"), ("assistant", "answer")],
          imported=True, source="openclaw", cwd="/home/me/project")
    [pending] = visible_session_list(state, OPERATOR)
    assert (pending.title, pending.messages, pending.cwd) == (None, 0, "/home/me/project")
    reconcile_agent(state, "main")
    [indexed] = visible_session_list(state, OPERATOR)
    assert (indexed.title, indexed.messages) == ("an imported question", 2)
    assert indexed.last_activity == BASE_MS + 2000


def test_a_rewind_recounts_at_the_next_rebuild(state: StateDir) -> None:
    store(state, "agent:main:main", [("user", "first"), ("assistant", "a"), ("user", "b")])
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"),
                  json.dumps({"type": "leaf", "targetId": "sid-main-0"}))
    reconcile_agent(state, "main")
    [summary] = visible_session_list(state, OPERATOR)
    assert (summary.messages, summary.title) == (1, "first")


def test_a_long_cjk_title_is_cut_without_the_segmentation_marks(state: StateDir) -> None:
    store(state, "agent:main:main", [("user", "数据库连接池" * 200)])
    [summary] = visible_session_list(state, OPERATOR)
    # the index holds each CJK character apart (a U+200B between two): half fit in the cut
    assert summary.title == ("数据库连接池" * 200)[: TITLE_CHARS // 2]


def test_newest_activity_first_and_the_limit_is_inside_the_query(state: StateDir) -> None:
    for n in range(5):
        store(state, f"agent:main:s{n}", [("user", f"question {n}")], start=n * 60_000)
    store(state, "agent:ops:main", [("user", "ops question")], start=150_000)
    listed = visible_session_list(state, OPERATOR, limit=3)
    assert [s.key for s in listed] == ["agent:main:s4", "agent:main:s3", "agent:ops:main"]
    assert [s.key for s in list_sessions(state)][:2] == ["agent:main:s4", "agent:main:s3"]


def test_filters_source_project_and_time(state: StateDir) -> None:
    store(state, "agent:main:claude-code:c1", [("user", "in the shop")], source="claude-code",
          cwd="/work/shop", start=0)
    store(state, "agent:main:claude-code:c2", [("user", "in the shop's api")],
          source="claude-code", cwd="/work/shop/api", start=60_000)
    store(state, "agent:main:codex:x1", [("user", "elsewhere")], source="codex",
          cwd="/work/shopping", start=120_000)
    store(state, "agent:main:main", [("user", "runtime")], start=180_000)
    assert set(by_key(state, source="claude-code")) == {"agent:main:claude-code:c1",
                                                       "agent:main:claude-code:c2"}
    assert set(by_key(state, source="openclaw")) == {"agent:main:main"}
    assert set(by_key(state, project="/work/shop")) == {"agent:main:claude-code:c1",
                                                       "agent:main:claude-code:c2"}
    assert set(by_key(state, project="/work/shop/")) == set(by_key(state, project="/work/shop"))
    assert set(by_key(state, since_ms=BASE_MS + 100_000)) == {"agent:main:codex:x1",
                                                             "agent:main:main"}
    assert set(by_key(state, until_ms=BASE_MS + 100_000)) == {"agent:main:claude-code:c1",
                                                             "agent:main:claude-code:c2"}
    assert project_list(state, OPERATOR) == [("/work/shop", 1), ("/work/shop/api", 1),
                                             ("/work/shopping", 1)]
    with pytest.raises(ValidationError, match="source must be one of"):
        visible_session_list(state, OPERATOR, source="windsurf")


def test_a_restricted_caller_lists_only_what_it_may_see(state: StateDir) -> None:
    store(state, "agent:main:main", [("user", "main")])
    store(state, "agent:main:other", [("user", "other")], cwd="/secret/place")
    store(state, "agent:main:dashboard:incognito-ab12", [("user", "incognito")])
    caller = Caller("agent:main:other", Policy(visibility="self"))
    assert set(by_key(state, caller)) == {"agent:main:other"}
    assert "agent:main:dashboard:incognito-ab12" not in by_key(state)
    only_self = Caller("agent:main:main", Policy(visibility="self"))
    assert project_list(state, only_self) == []


@pytest.mark.sqlite_only  # SQLite's migration 5; PostgreSQL's schema 2 backfills in test_postgres.py
def test_the_backfill_fills_an_older_database(state: StateDir) -> None:
    store(state, "agent:main:main", [("user", "before the upgrade"), ("assistant", "yes")],
          cwd="/srv/old")
    downgrade(state.db_path("main"), 4)
    with state.open("main", write=True):
        pass  # a writer migrates
    [summary] = visible_session_list(state, OPERATOR)
    assert (summary.title, summary.messages, summary.cwd) == ("before the upgrade", 2, "/srv/old")
    assert summary.last_activity == BASE_MS + 2000


def test_a_header_cwd_that_is_not_text_is_no_cwd(state: StateDir) -> None:
    agent_events = [{**header("s1"), "cwd": {"not": "a path"}}, msg("m", None, "user", "hi")]
    with state.open("main", write=True) as db:
        for event in agent_events:
            db.append(SessionMeta("agent:main:main"), json.dumps(event))
    [summary] = visible_session_list(state, OPERATOR)
    assert summary.cwd is None


def test_imported_claude_code_and_codex_sessions_can_be_resumed(state: StateDir, data_dir) -> None:
    import_claude_code(state, data_dir / "claude-code")
    import_codex(state, data_dir / "codex")
    summaries = list_sessions(state)
    claude = [s for s in summaries if s.key.startswith("agent:claude-code:claude-code:")]
    codex = [s for s in summaries if s.source == "codex"]
    assert claude and codex
    for summary in claude + codex:
        resume = resume_of(summary)
        if summary.cwd is None:
            assert resume.kind == "none" and resume.command is None
            continue
        assert resume.kind == "command"
        tool = "claude --resume" if summary.source == "claude-code" else "codex resume --"
        assert resume.text.startswith("cd ") and f"&& {tool} {summary.session_id}" in resume.text
    sidechains = [s for s in summaries if ":subagent:" in s.key]
    assert sidechains and all(resume_of(s).command is None for s in sidechains)


def test_resume_commands_quote_the_folder_and_need_a_cwd() -> None:
    uuid = "55604662-cf2a-4331-851a-ec234028f8ca"
    base = SessionSummary(f"agent:cc:claude-code:{uuid}", "cc", uuid, None, None, 0, 0, 1, True,
                          False, source="claude-code", cwd="/home/me/my project; rm -rf ~")
    resume = resume_of(base)
    assert resume.text == f"cd '/home/me/my project; rm -rf ~' && claude --resume {uuid}"
    assert resume_of(base._replace(cwd=None)).command is None
    codex = base._replace(key=f"agent:cx:codex:{uuid}", source="codex", cwd="/w")
    assert resume_of(codex).text == f"cd /w && codex resume -- {uuid}"
    openclaw = base._replace(key="agent:main:telegram:group:42", source="openclaw", cwd=None)
    assert resume_of(openclaw) == resume_of(openclaw) and resume_of(openclaw).kind == "key"
    assert resume_of(openclaw).text == "agent:main:telegram:group:42"


def test_source_kinds() -> None:
    assert [source_kind(s) for s in ("live", "openclaw", "demo", "claude-code", "codex")] == [
        "openclaw", "openclaw", "openclaw", "claude-code", "codex"]
