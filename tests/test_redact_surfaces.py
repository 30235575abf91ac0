"""Secrets where the text rules do not see them whole: inside a tool call's JSON arguments, and
in a label an importer cuts to one line (SPEC 6: no output shows a secret, nor part of one)."""

from __future__ import annotations

import json
import random

import pytest

from backscroll.core.config import Config, make_caller
from backscroll.core.errors import ValidationError
from backscroll.core.export import export_conversation
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.keys import check_agent_id, normalize_key
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.timeparse import parse_time
from backscroll.core.visibility import OPERATOR

from .events import header, msg
from .redaction_vectors import CONTEXT_FORMS, TOKENS, context, token_secret

KEY = "agent:main:main"


def _vectors(seed: int) -> list[tuple[str, str]]:
    """(text, secret) for every context form and every vendor token, from one seed."""
    rng = random.Random(seed)
    out = []
    for form in sorted(CONTEXT_FORMS):
        text, [secret] = context(form, rng)
        out.append((text, secret))
    for kind, make in sorted(TOKENS.items()):
        token = make(rng)
        out.append((f"export VALUE={token}" if kind == "aws_secret" else f"run it with {token}",
                    token_secret(kind, token)))
    return out


def _shown(secret: str, text: str) -> bool:
    """The secret, or any 12 characters of it, in ``text`` (also as JSON escapes it)."""
    escaped = json.dumps(text, ensure_ascii=False)
    for part in {secret, *(secret[i : i + 12] for i in range(0, max(len(secret) - 11, 1)))}:
        if len(part.strip()) >= 8 and (part in text or json.dumps(part)[1:-1] in escaped):
            return True
    return False


def test_a_secret_inside_tool_call_arguments_never_shows(state: StateDir) -> None:
    vectors = _vectors(5)
    meta = SessionMeta(KEY, session_id="s-tools")
    blocks = [{"type": "toolCall", "id": f"c{i}", "name": "exec",
               "arguments": {"command": text, "env": {"note": [text]}}}
              for i, (text, _secret) in enumerate(vectors)]
    with state.open("main", write=True) as db:
        db.append(meta, json.dumps(header("s-tools")))
        db.append(meta, json.dumps(msg("u1", None, "user", "run the tools")))
        for i in range(0, len(blocks), 8):  # a few calls per turn, as agents make them
            db.append(meta, json.dumps(msg(f"a{i}", f"a{i - 8}" if i else "u1", "assistant",
                                           blocks[i : i + 8])))
    request = HistoryRequest(KEY, include_tools=True, max_bytes=10**7, field_max_chars=10**6)
    shown = json.dumps(sessions_history(state, request, OPERATOR).as_json(), ensure_ascii=False)
    exported = export_conversation(state, KEY, OPERATOR, "markdown")
    assert shown.count('"toolCall"') == len(vectors)
    leaked = [secret for _text, secret in vectors if _shown(secret, shown) or _shown(secret, exported)]
    assert leaked == []
    assert '"command": "mysql -h db -uroot -p*** app"' in exported  # the call still reads


@pytest.mark.parametrize("n", [0, 1])
def test_arguments_over_the_bound_are_cut_not_redacted_by_halves(state: StateDir, n: int) -> None:
    secret = TOKENS["github"](random.Random(n))
    words = "word " * 12_000  # 60,000 characters: the bound is reached inside this string
    meta = SessionMeta(KEY, session_id="s-big")
    call = {"type": "toolCall", "id": "c", "name": "write",
            "arguments": {"content": words, "more": [words, f"token {secret}"]}}
    with state.open("main", write=True) as db:
        db.append(meta, json.dumps(header("s-big")))
        db.append(meta, json.dumps(msg("a1", None, "assistant", [call])))
    request = HistoryRequest(KEY, include_tools=True, max_bytes=10**7, field_max_chars=10**6)
    history = sessions_history(state, request, OPERATOR)
    [message] = history.messages
    arguments = message["content"][0]["arguments"]
    assert secret not in arguments and history.content_truncated
    assert json.loads(arguments)["more"] == ["…", "…"]  # past the bound: left out, marked


def _claude_code_files(root, vectors: list[tuple[str, str]]) -> None:
    """A project of main sessions whose first prompt is each text, each with a subagent whose
    first prompt is the same (labelled "subagent: <prompt>")."""
    project = root / "-srv-app"
    for i, (text, _secret) in enumerate(vectors):
        sid = f"00000000-0000-4000-8000-{i:012d}"
        line = {"type": "user", "uuid": f"u{i}", "parentUuid": None, "sessionId": sid,
                "cwd": "/srv/app", "timestamp": "2026-05-01T10:00:00.000Z",
                "message": {"role": "user", "content": text}}
        (project / sid / "subagents").mkdir(parents=True)
        (project / f"{sid}.jsonl").write_text(json.dumps(line) + "\n")
        sub = {**line, "uuid": f"s{i}", "isSidechain": True, "agentId": f"a{i:06x}"}
        (project / sid / "subagents" / f"agent-a{i:06x}.jsonl").write_text(json.dumps(sub) + "\n")


def _codex_files(root, vectors: list[tuple[str, str]]) -> None:
    day = root / "2026" / "05" / "01"
    day.mkdir(parents=True)
    for i, (text, _secret) in enumerate(vectors):
        tid = f"019e1625-789d-76c0-80ab-{i:012x}"
        lines = [{"timestamp": "2026-05-01T10:00:00.000Z", "type": "session_meta",
                  "payload": {"id": tid, "timestamp": "2026-05-01T10:00:00.000Z", "cwd": "/srv/app"}},
                 {"timestamp": "2026-05-01T10:00:01.000Z", "type": "response_item",
                  "payload": {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": text}]}}]
        (day / f"rollout-2026-05-01T10-00-00-{tid}.jsonl").write_text(
            "\n".join(json.dumps(x) for x in lines) + "\n")


def test_a_label_cut_from_a_first_prompt_shows_no_part_of_a_secret(tmp_path) -> None:
    from backscroll.core.catalog import list_sessions
    from backscroll.core.importers.claude_code import import_claude_code
    from backscroll.core.importers.codex import import_codex

    # the secret far enough in that the label's cut (80 characters) falls inside it
    vectors = [(f"deploy it {'now ' * (i % 9)}\n{text}", secret)
               for i, (text, secret) in enumerate(_vectors(9))]
    state = StateDir(tmp_path / "state")
    _claude_code_files(tmp_path / "projects", vectors)
    _codex_files(tmp_path / "sessions", vectors)
    import_claude_code(state, tmp_path / "projects")
    import_codex(state, tmp_path / "sessions")
    labels = [s.label for s in list_sessions(state)]
    assert len(labels) == 3 * len(vectors)
    assert sum(label.startswith("app: subagent: deploy it") for label in labels) == len(vectors)
    leaked = [(secret, label) for text, secret in vectors for label in labels
              if _shown(secret, label)]
    assert leaked == []


def test_the_session_list_for_programs_redacts_keys_and_spawners(state: StateDir) -> None:
    """MCP's ``sessions_list`` answers ``SessionSummary.as_json``: its keys are masked as
    search and history mask them."""
    from backscroll.core.catalog import list_sessions

    token_key = "agent:main:xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx"
    with state.open("main", write=True) as db:
        db.append(SessionMeta(token_key, session_id="s1"), json.dumps(header("s1")))
        db.append(SessionMeta("agent:main:subagent:x", session_id="s2", spawned_by=token_key),
                  json.dumps(header("s2")))
    listed = {s.session_id: s.as_json() for s in list_sessions(state)}
    assert listed["s1"]["sessionKey"] == listed["s2"]["spawnedBy"] == "agent:main:xoxb-1…uvwx"
    assert listed["s2"]["sessionKey"] == "agent:main:subagent:x"
    assert "abcdefghijklmnopqrstuvwx" not in json.dumps(listed)


ANTHROPIC = TOKENS["anthropic"](random.Random(2))  # 108 characters: longer than any cut


@pytest.mark.parametrize("call", [
    lambda: check_agent_id(ANTHROPIC * 2),
    lambda: normalize_key(f"agent:ma in:{ANTHROPIC}"),
    lambda: parse_time(f"2026-01-01 {ANTHROPIC}"),
    lambda: parse_time(f"é {ANTHROPIC} " * 3),
])
def test_an_error_sentence_quoting_a_long_value_shows_no_part_of_a_token(call) -> None:
    with pytest.raises(ValidationError) as raised:
        call()
    sentence = str(raised.value)
    assert not _shown(ANTHROPIC, sentence) and "sk-ant…" in sentence, sentence


@pytest.mark.parametrize("key", [f"agent:main:{ANTHROPIC}", f"agent:main:cron-{ANTHROPIC}-2"])
def test_the_mcp_server_names_a_caller_holding_a_token_masked(state: StateDir, key: str) -> None:
    pytest.importorskip("mcp")
    from backscroll.tui.mcp.server import build_server, startup_line

    caller = make_caller(Config(), key)  # the second: glued to the key's words (issue 22)
    line = startup_line(state, caller)
    told = build_server(state, caller, on_pending=lambda agent: None).instructions or ""
    assert "sk-ant…" in line and "sk-ant…" in told
    assert not _shown(ANTHROPIC.lower(), line) and not _shown(ANTHROPIC.lower(), told)


def test_sources_show_a_folder_holding_a_token_masked(tmp_path, capsys) -> None:
    from backscroll.tui.cli import main

    token = TOKENS["github"](random.Random(4))
    folder = tmp_path / f"rollouts {token}"
    folder.mkdir()
    base = ["--state-dir", str(tmp_path / "state")]
    assert main(base + ["sources", "add", "codex", str(folder)]) == 0
    for argv in (["sources"], ["sources", "--json"], ["sync", "--json"],
                 ["sources", "remove", str(folder), "--json"]):
        assert main(base + argv) == 0, argv
        out, err = capsys.readouterr()
        assert token not in out + err, (argv, out)
        assert argv[0] == "sync" or f"{token[:6]}…{token[-4:]}" in out, (argv, out)


# Issue 22: keys are compared lower-cased, and their words are joined by - _ : so a token in a
# key has lost its case and touches other words; each is masked wherever the key is shown.
KEY_TOKEN_KINDS = ["github", "anthropic", "aws_key_id", "slack", "gitlab", "npm", "stripe", "pypi"]


def _token_keys() -> list[tuple[str, str]]:
    rng = random.Random(22)
    keys = []
    for n, kind in enumerate(KEY_TOKEN_KINDS):
        token = TOKENS[kind](rng).lower()
        keys.append((f"agent:main:{token}", token))
        keys.append((f"agent:main:cron-{token}-{n}", token))
    return keys


def test_a_token_inside_a_session_key_is_masked_in_every_answer(state: StateDir) -> None:
    from backscroll.core.catalog import list_sessions
    from backscroll.core.grouped import conversations_search
    from backscroll.core.search import SearchRequest, sessions_search

    keys = _token_keys()
    with state.open("main", write=True) as db:
        for n, (key, _token) in enumerate(keys):
            meta = SessionMeta(normalize_key(key), session_id=f"s{n}", spawned_by=key)
            db.append(meta, json.dumps(header(f"s{n}")))
            db.append(meta, json.dumps(msg(f"u{n}", None, "user", "where is the heron report")))
    def dump(answer) -> str:
        return json.dumps(answer.as_json() if hasattr(answer, "as_json") else answer, ensure_ascii=False)

    request = SearchRequest("heron", limit=25)
    answers = [dump(sessions_search(state, request, OPERATOR)),
               dump(conversations_search(state, request, OPERATOR)),
               dump([s.as_json() for s in list_sessions(state)])]  # MCP's sessions_list
    for key, _token in keys:
        answers.append(dump(sessions_history(state, HistoryRequest(key), OPERATOR)))
        answers += [export_conversation(state, key, OPERATOR, fmt) for fmt in ("markdown", "json")]
    for key, token in keys:
        shown = [answer for answer in answers if _shown(token, answer)]
        assert shown == [], key
    masked = [f"{token[:6]}…" in answers[0] for _key, token in keys]
    assert all(masked), masked


@pytest.mark.parametrize("kind", ["anthropic", "github", "atlassian", "slack_config"])
def test_a_token_in_the_project_folder_is_redacted_before_the_label_is_cut(tmp_path, kind) -> None:
    """Issue 22: a Claude Code label is ``<cwd folder>: <prompt>`` cut to 80 characters; the
    folder is redacted first, or the cut leaves a part of a token no rule knows."""
    from backscroll.core.catalog import list_sessions
    from backscroll.core.importers.claude_code import import_claude_code

    token = TOKENS[kind](random.Random(kind))
    sid = "00000000-0000-4000-8000-000000000001"
    line = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": sid,
            "cwd": f"/srv/{token}", "timestamp": "2026-05-01T10:00:00.000Z",
            "message": {"role": "user", "content": "deploy it"}}
    project = tmp_path / "projects" / "-srv-app"
    project.mkdir(parents=True)
    (project / f"{sid}.jsonl").write_text(json.dumps(line) + "\n")
    state = StateDir(tmp_path / "state")
    import_claude_code(state, tmp_path / "projects")
    [label] = [s.label for s in list_sessions(state)]
    assert not _shown(token, label), label
    assert label.startswith(token[:6] + "…") and label.endswith(": deploy it"), label
