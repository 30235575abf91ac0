"""The tools' current contract, as OpenClaw's own tools answer today (issue 24, item 6):
``snippet`` beside ``excerpt``, ``sessions_history`` paging by ``offset``, ``sessions_list``'s
filters and kinds, and the policy's fallback and per-agent sandbox override.

OpenClaw's side is read from its source: ``src/agents/tools/sessions-history-tool.ts``
(``offset``, ``nextOffset``, ``hasMore``, ``totalMessages``), ``sessions-list-tool.ts`` and
``sessions-helpers.ts`` (``kinds``, ``classifySessionKind``), ``sessions-access.ts`` and
``plugin-sdk/session-visibility`` (``resolveSessionToolsVisibility`` falls back to tree,
``resolveSandboxSessionToolsVisibilityForAgent`` reads ``agents.list[].sandbox``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backscroll.core.catalog import visible_session_list
from backscroll.core.config import Config, load_config, make_caller, report_warnings
from backscroll.core.errors import ValidationError
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.kinds import SESSION_KINDS, check_kinds, session_kind
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.visibility import OPERATOR, SessionLink, visible_keys
from backscroll.tui.cli import main

from .events import BASE_MS, leaf, msg
from .test_mcp import call, server_for

pytestmark = pytest.mark.backends  # storage behaviour: on both backends

KEY = "agent:main:main"


def _event(n: int, kind: str, parent: str | None) -> dict:
    """Message ``m<n>``: a user or assistant text, a tool result, or a turn that only calls
    a tool (shown only with tools)."""
    if kind == "tool":
        event = msg(f"m{n}", parent, "toolResult", [{"type": "text", "text": f"output {n}"}],
                    ms=n * 1000)
        event["message"]["toolName"] = "bash"
        return event
    if kind == "call":
        return msg(f"m{n}", parent, "assistant",
                   [{"type": "toolCall", "name": "bash", "arguments": {"n": n}}], ms=n * 1000)
    return msg(f"m{n}", parent, kind, f"message number {n} " + "x" * (n % 7) * 300, ms=n * 1000)


def _write(state: StateDir, kinds: list[str], dirty: bool = False, key: str = KEY) -> None:
    with state.open(key.split(":")[1], write=True) as db:
        meta = SessionMeta(key)
        parent = None
        for n, kind in enumerate(kinds):
            db.append(meta, json.dumps(_event(n, kind, parent)))
            parent = f"m{n}"
        if dirty:  # a leaf control: the stored branch lags until reconciled (the fold path)
            db.append(meta, json.dumps(leaf("leaf-1", parent, parent)))


def _all_shown(state: StateDir, include_tools: bool) -> list[str]:
    whole = sessions_history(state, HistoryRequest(KEY, include_tools=include_tools,
                                                   max_bytes=10**8), OPERATOR)
    assert not whole.has_more
    return [m["id"] for m in whole.messages]


def _walk(state: StateDir, limit: int | None, include_tools: bool, max_bytes: int
          ) -> tuple[list[str], int, list[dict]]:
    pages, offset, answers = [], None, []
    for _ in range(200):
        answer = sessions_history(state, HistoryRequest(
            KEY, limit=limit, offset=offset, include_tools=include_tools, max_bytes=max_bytes),
            OPERATOR).as_json()
        answers.append(answer)
        pages.append([m["id"] for m in answer["messages"]])
        if not answer["hasMore"]:
            assert answer["nextOffset"] is None
            break
        assert answer["nextOffset"] > (offset or 0)  # every page moves back
        offset = answer["nextOffset"]
    walked = [i for page in reversed(pages) for i in page]
    return walked, answers[0]["totalMessages"], answers


# ------------------------------------------------------------------ sessions_history: offset


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    kinds=st.lists(st.sampled_from(["user", "assistant", "tool", "call"]), min_size=1,
                   max_size=40),
    limit=st.one_of(st.none(), st.integers(1, 7)),
    include_tools=st.booleans(),
    dirty=st.booleans(),
    small=st.booleans(),
)
def test_paging_by_offset_walks_the_whole_conversation_without_gaps_or_repeats(
        fresh_state, kinds, limit, include_tools, dirty, small) -> None:
    state = fresh_state()
    _write(state, kinds, dirty)
    expected = _all_shown(state, include_tools)
    # a small byte cap makes pages end by size, not by limit
    walked, total, answers = _walk(state, limit, include_tools, 4096 if small else 80 * 1024)
    assert walked == expected  # oldest first, every shown message once
    assert len(set(walked)) == len(walked)
    # OpenClaw counts transcript messages, tool results too, whatever the tool shows
    assert total == len(kinds)
    assert answers[0]["offset"] == 0
    for answer in answers[1:]:
        assert answer["offset"] >= 0 and answer["totalMessages"] == total


def test_offset_pages_and_answers_openclaws_fields(state) -> None:
    _write(state, ["user", "assistant"] * 5)  # m0 .. m9
    first = sessions_history(state, HistoryRequest(KEY, limit=4), OPERATOR).as_json()
    assert [m["id"] for m in first["messages"]] == ["m6", "m7", "m8", "m9"]
    assert (first["offset"], first["nextOffset"], first["hasMore"], first["totalMessages"]) == (
        0, 4, True, 10)
    second = sessions_history(state, HistoryRequest(KEY, limit=4, offset=4), OPERATOR).as_json()
    assert [m["id"] for m in second["messages"]] == ["m2", "m3", "m4", "m5"]
    assert (second["offset"], second["nextOffset"], second["hasMore"]) == (4, 8, True)
    last = sessions_history(state, HistoryRequest(KEY, limit=4, offset=8), OPERATOR).as_json()
    assert [m["id"] for m in last["messages"]] == ["m0", "m1"]
    assert (last["nextOffset"], last["hasMore"], last["truncated"]) == (None, False, True)
    past = sessions_history(state, HistoryRequest(KEY, offset=50), OPERATOR).as_json()
    assert (past["messages"], past["hasMore"], past["offset"]) == ([], False, 50)
    # an anchored window says where it sits, so paging can go on from it
    anchored = sessions_history(state, HistoryRequest(KEY, message_id="m5", limit=3),
                                OPERATOR).as_json()
    assert [m["id"] for m in anchored["messages"]] == ["m4", "m5", "m6"]
    assert (anchored["offset"], anchored["nextOffset"]) == (3, 6)


def test_offset_with_message_id_or_out_of_range_is_one_sentence(state) -> None:
    _write(state, ["user", "assistant"])
    with pytest.raises(ValidationError, match="give messageId or offset, not both"):
        sessions_history(state, HistoryRequest(KEY, message_id="m1", offset=0), OPERATOR)
    for bad in (-1, "x", True, 1.5):
        with pytest.raises(ValidationError, match="offset must be a whole number from 0"):
            sessions_history(state, HistoryRequest(KEY, offset=bad), OPERATOR)


async def test_the_mcp_history_tool_pages_by_offset(state) -> None:
    _write(state, ["user", "assistant"] * 3)
    server = server_for(state)
    first = (await call(server, "sessions_history", {"sessionKey": KEY, "limit": 4}))
    assert first.structured_content["nextOffset"] == 4
    second = await call(server, "sessions_history", {"sessionKey": KEY, "limit": 4, "offset": 4})
    assert second.structured_content == sessions_history(
        state, HistoryRequest(KEY, limit=4, offset=4), OPERATOR).as_json()
    assert [m["id"] for m in second.structured_content["messages"]] == ["m0", "m1"]
    both = await call(server, "sessions_history", {"sessionKey": KEY, "messageId": "m1",
                                                   "offset": 2})
    assert both.is_error and "not both" in both.content[0].text


def test_the_cli_history_pages_by_offset(state, capsys) -> None:
    _write(state, ["user", "assistant"] * 3)
    assert main(["history", KEY, "--limit", "4", "--offset", "4", "--json",
                 "--state-dir", str(state.path)]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [m["id"] for m in answer["messages"]] == ["m0", "m1"] and answer["offset"] == 4


async def test_search_results_carry_snippet_as_well_as_excerpt(state) -> None:
    _write(state, ["user", "assistant"])
    [hit] = sessions_search(state, SearchRequest("number 1"), OPERATOR).as_json()["results"]
    assert hit["snippet"] == hit["excerpt"] and "number" in hit["snippet"]
    answer = await call(server_for(state), "sessions_search", {"query": "number 1"})
    assert answer.structured_content["results"][0]["snippet"] == hit["excerpt"]


# ------------------------------------------------------------------ kinds


@pytest.mark.parametrize("key, kind", [
    ("agent:main:main", "main"),
    ("agent:ops:MAIN", "main"),
    ("agent:main:cron:nightly", "cron"),
    ("agent:main:cron:nightly:run:abc", "cron"),
    ("agent:main:hook:gmail:42", "hook"),
    ("agent:main:node-7", "node"),
    ("agent:main:node:pi", "node"),
    ("agent:main:telegram:group:-1001", "group"),
    ("agent:main:discord:channel:42", "group"),
    ("agent:main:whatsapp:dm:+1555", "other"),
    ("agent:main:subagent:abc", "other"),
    ("agent:main:claude-code:0f3c", "other"),
    ("agent:main:main:thread:1", "other"),  # only the main session itself is main
    ("cron:nightly", "cron"),  # OpenClaw's own display form, without agent:<id>:
])
def test_kinds_are_derived_from_keys_as_openclaw_does(key, kind) -> None:
    assert session_kind(key) == kind


def test_kinds_are_checked() -> None:
    assert check_kinds(None) is None and check_kinds([]) is None
    assert check_kinds([" Main", "cron"]) == {"main", "cron"}
    with pytest.raises(ValidationError, match="kinds must be among main, group, cron"):
        check_kinds(["direct"])
    assert set(SESSION_KINDS) == {"main", "group", "cron", "hook", "node", "other"}


# ------------------------------------------------------------------ sessions_list's filters

LISTED = {
    # key: (label, first message, minutes ago)
    "agent:main:main": (None, "planning the garden", 60 * 24 * 30),
    "agent:main:cron:nightly": ("Nightly Backup", "run the backup", 5),
    "agent:main:telegram:group:-100": ("family chat", "dinner at eight", 60 * 24),
    "agent:main:hook:gmail:1": (None, "new mail about the Garden party", 60 * 24 * 2),
    "agent:main:node:pi": ("pi node", "temperature 21", 60 * 24 * 3),
    "agent:main:subagent:x": ("research", "look up backup tools", 60 * 24 * 4),
}


@pytest.fixture
def listed(state: StateDir) -> StateDir:
    now_ms = int(time.time() * 1000)  # at the test, not at collection: the filters count from now
    with state.open("main", write=True) as db:
        for key, (label, text, minutes) in LISTED.items():
            ms = now_ms - minutes * 60_000 - BASE_MS
            db.append(SessionMeta(key, label=label), json.dumps(msg(f"{key}-1", None, "user",
                                                                    text, ms=ms)))
    return state


def _keys(sessions) -> list[str]:
    return [s.key for s in sessions]


def test_list_filters_by_kind_search_label_activity_and_archive(listed) -> None:
    def keys(**filters) -> set[str]:
        return set(_keys(visible_session_list(listed, OPERATOR, **filters)))

    assert keys(kinds=["cron", "hook"]) == {"agent:main:cron:nightly", "agent:main:hook:gmail:1"}
    assert keys(kinds=["main"]) == {"agent:main:main"}
    assert keys(kinds=["other"]) == {"agent:main:subagent:x"}
    assert keys(kinds=["group", "node"]) == {"agent:main:telegram:group:-100", "agent:main:node:pi"}
    # search: labels and titles, any case
    assert keys(search="BACKUP") == {"agent:main:cron:nightly", "agent:main:subagent:x"}
    assert keys(search="garden") == {"agent:main:main", "agent:main:hook:gmail:1"}
    assert keys(label="family chat") == {"agent:main:telegram:group:-100"}
    assert keys(label="family") == set()  # a label is matched whole
    assert keys(active_minutes=60) == {"agent:main:cron:nightly"}
    assert keys(active_minutes=60 * 24 + 30) == {"agent:main:cron:nightly",
                                                 "agent:main:telegram:group:-100"}
    # no session is in a cold archive yet (another part of issue 24 adds them)
    assert keys(archived=False) == set(LISTED)
    assert keys(archived=True) == set()
    assert keys(kinds=["cron", "other"], search="backup", active_minutes=10) == {
        "agent:main:cron:nightly"}
    [summary] = visible_session_list(listed, OPERATOR, kinds=["group"])
    assert (summary.as_json()["kind"], summary.as_json()["archived"]) == ("group", False)


@pytest.mark.parametrize("filters, sentence", [
    ({"kinds": ["direct"]}, "kinds must be among"),
    ({"active_minutes": 0}, "activeMinutes must be a whole number of minutes from 1"),
    ({"search": "  "}, "search must be text that is not blank"),
    ({"label": ""}, "label must be text that is not blank"),
    ({"archived": "yes"}, "archived must be true or false"),
    ({"offset": -2}, "offset must be a whole number from 0"),
])
def test_bad_list_filters_are_one_sentence(listed, filters, sentence) -> None:
    with pytest.raises(ValidationError, match=sentence):
        visible_session_list(listed, OPERATOR, **filters)


@pytest.mark.parametrize("filters", [{}, {"search": "e"}, {"kinds": ["other", "group", "main"]}])
def test_list_pages_by_offset_without_gaps_or_repeats(listed, filters) -> None:
    whole = _keys(visible_session_list(listed, OPERATOR, **filters))
    for size in (1, 2, 4):
        walked = []
        for offset in range(0, len(whole) + size, size):
            walked += _keys(visible_session_list(listed, OPERATOR, limit=size, offset=offset,
                                                 **filters))
        assert walked == whole


async def test_the_mcp_list_tool_takes_openclaws_filters(listed) -> None:
    server = server_for(listed)
    answer = (await call(server, "sessions_list", {"kinds": ["cron", "group"], "limit": 1}))
    out = answer.structured_content
    assert (out["count"], out["offset"], out["hasMore"], out["nextOffset"]) == (1, 0, True, 1)
    assert out["sessions"][0]["sessionKey"] == "agent:main:cron:nightly"
    nxt = (await call(server, "sessions_list", {"kinds": ["cron", "group"], "limit": 1,
                                                "offset": 1})).structured_content
    assert [s["sessionKey"] for s in nxt["sessions"]] == ["agent:main:telegram:group:-100"]
    assert nxt["hasMore"] is False and "nextOffset" not in nxt
    found = (await call(server, "sessions_list", {"search": "garden", "activeMinutes": 60 * 24 * 3,
                                                  "archived": False, "label": None}))
    assert [s["sessionKey"] for s in found.structured_content["sessions"]] == [
        "agent:main:hook:gmail:1"]
    labelled = await call(server, "sessions_list", {"label": "pi node"})
    assert [s["kind"] for s in labelled.structured_content["sessions"]] == ["node"]
    wrong = await call(server, "sessions_list", {"kinds": ["direct"]})
    assert wrong.is_error and "kinds" in wrong.content[0].text


# ------------------------------------------------------------------ the policy


def _config(tmp_path: Path, text: str) -> Config:
    (tmp_path / "config.toml").write_text(text)
    return load_config(tmp_path)


def test_an_unknown_visibility_falls_back_to_tree_with_one_warning(tmp_path) -> None:
    config = _config(tmp_path, '[tools.sessions]\nvisibility = "everyone-fallback-test"\n')
    assert config.policy.visibility == "tree"
    [warning] = config.warnings
    assert "'everyone-fallback-test'" in warning and 'using "tree"' in warning
    written: list[str] = []
    report_warnings(config, written.append)
    report_warnings(load_config(tmp_path), written.append)  # loaded again: said once
    assert written == [f"backscroll: warning: {warning}"]
    # trimmed and lower-cased first, as OpenClaw does: no warning
    spaced = _config(tmp_path, '[tools.sessions]\nvisibility = " Agent "\n')
    assert (spaced.policy.visibility, spaced.warnings) == ("agent", ())
    assert _config(tmp_path, "[tools.sessions]\nvisibility = 3\n").policy.visibility == "tree"
    # a per-call override stays strict (the CLI's --visibility choices)
    with pytest.raises(ValidationError, match="self, tree, agent, all"):
        make_caller(config, KEY, visibility="everyone")


def test_the_cli_says_the_fallback_once_and_answers_as_tree(state, backend, capsys) -> None:
    _write(state, ["user", "assistant"])
    state.path.mkdir(parents=True, exist_ok=True)  # with PostgreSQL it holds only the file
    # a value of its own: a warning is said once per process, whichever test said it
    (state.path / "config.toml").write_text(
        f'[tools.sessions]\nvisibility = "cli-fallback-{backend}"\n')
    for _ in range(2):
        assert main(["search", "number", "--as", KEY, "--json", "--state-dir",
                     str(state.path)]) == 0
    err = capsys.readouterr().err
    assert err.count(f"tools.sessions.visibility 'cli-fallback-{backend}'") == 1
    assert main(["search", "number", "--as", KEY, "--visibility", "everyone",
                 "--state-dir", str(state.path)]) == 2  # the flag's choices stay strict


def test_a_per_agent_sandbox_override_beside_the_default(tmp_path) -> None:
    config = _config(tmp_path, (
        '[tools.sessions]\nvisibility = "agent"\n'
        '[agents.defaults.sandbox]\nmode = "all"\nsessionToolsVisibility = "spawned"\n'
        '[[agents.list]]\nid = "Research"\nsandbox = { sessionToolsVisibility = "all" }\n'
        '[[agents.list]]\nid = "main"\n'  # an agent without its own: the default
    ))
    research = make_caller(config, "agent:research:subagent:a")
    main_ = make_caller(config, "agent:main:subagent:a")
    assert research.policy.sandboxed and research.policy.sandbox_visibility == "all"
    assert main_.policy.sandboxed and main_.policy.sandbox_visibility == "spawned"
    assert not research.policy.clamped and main_.policy.clamped

    def sessions(agent: str) -> list[SessionLink]:
        return [SessionLink(f"agent:{agent}:main"), SessionLink(f"agent:{agent}:subagent:a"),
                SessionLink(f"agent:{agent}:subagent:b")]

    # sandboxed with its agent's "all": visibility "agent" applies, the whole agent
    assert visible_keys(research, "research", sessions("research")) == {
        "agent:research:main", "agent:research:subagent:a", "agent:research:subagent:b"}
    # the default "spawned" clamps the other agent's caller to its own tree
    assert visible_keys(main_, "main", sessions("main")) == {"agent:main:subagent:a"}
    assert config.sandbox_visibility_for("RESEARCH") == "all"
    assert config.sandbox_visibility_for("ops") == "spawned"
