"""Entry bounds (nesting depth, line size, valid Unicode, id length), the cut of an oversized
message, the bounded excerpt scan, and the poison event that must never jam an agent."""

from __future__ import annotations

import io
import json
import sqlite3
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from backscroll.core import bounds, excerpt
from backscroll.core.bounds import MAX_DEPTH, MAX_MESSAGE_CHARS, cut_text, decode_json, read_lines
from backscroll.core.errors import ValidationError
from backscroll.core.history import HistoryRequest, sessions_history
from backscroll.core.query import parse_query
from backscroll.core.reconcile import reconcile_all
from backscroll.core.redact import redact
from backscroll.core.search import SearchRequest, sessions_search
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.core.transcript import decode_line, parse_event
from backscroll.core.verify import verify_state
from backscroll.core.visibility import OPERATOR
from backscroll.tui.cli import main

from .events import lines, msg


def nested(depth: int) -> str:
    """A message event whose content block holds ``depth`` levels of nesting in all."""
    inner = "[" * (depth - 4) + "]" * (depth - 4)  # event, message, content list, block
    return (
        '{"type":"message","id":"deep","message":{"role":"user","content":'
        f'[{{"type":"text","text":"deep one","x":{inner}}}]}}}}'
    )


def test_nesting_depth_is_bounded_at_entry() -> None:
    assert parse_event(nested(MAX_DEPTH))["id"] == "deep"
    for depth in (MAX_DEPTH + 1, 985, 5000, 100_000):
        with pytest.raises(ValidationError, match=f"nested deeper than {MAX_DEPTH} levels"):
            parse_event(nested(depth))


def test_many_brackets_that_do_not_nest_are_fine() -> None:
    wide = json.dumps({"type": "custom", "rows": [[i] for i in range(5000)]})
    assert len(parse_event(wide)["rows"]) == 5000
    text = json.dumps(msg("m", None, "user", "[[[[ {{{{ " * 500))  # brackets inside a string
    assert parse_event(text)["id"] == "m"


@pytest.mark.parametrize(
    "line, reason",
    [
        (b'{"type":"custom","x":"\\ud800"}', "lone surrogate"),
        (b'{"type":"custom","x":"a\\uDFFFb"}', "lone surrogate"),
        (b'{"type":"custom","\\udc00":1}', "lone surrogate"),
        (b'{"type":"custom","x":"\xff"}', "not valid UTF-8"),
        (b'{"type":"custom","x":' + b"9" * 5000 + b"}", "number too long"),
        ('{"type":"custom","x":"\ud800"}', "lone surrogate"),
        ('{"type":"message","id":"' + "i" * 600 + '","message":{"role":"user"}}', '"id" is 600'),
        ('{"type":"leaf","targetId":"' + "t" * 513 + '"}', '"targetId" is 513'),
        ('{"type":"session","id":{"a":1}}', "session header must be a non-empty string"),
    ],
)
def test_bad_unicode_long_ids_and_odd_headers_are_refused(line: str | bytes, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        parse_event(line)


def test_a_surrogate_pair_and_a_byte_order_mark_are_fine() -> None:
    assert decode_line(b'{"x":"\\ud83d\\ude00"}') == {"x": "\U0001f600"}
    assert decode_line(b'\xef\xbb\xbf{"x":1}') == {"x": 1}
    assert decode_line('\ufeff{"x":1}') == {"x": 1}
    assert decode_line(b'{"x":"\\\\ud800"}') == {"x": "\\ud800"}  # an escaped backslash


def test_line_size_is_bounded_and_a_huge_line_is_never_held(monkeypatch) -> None:
    with pytest.raises(ValidationError, match="the limit is 64 bytes"):
        decode_json(b'{"x":"' + b"a" * 100 + b'"}', max_bytes=64)
    stream = io.BytesIO(b'{"a":1}\n' + b"x" * 10_000 + b"\n" + b'{"b":2}\n' + b"y" * 300)
    read = list(read_lines(stream, max_bytes=100))
    assert read == [b'{"a":1}\n', 10_001, b'{"b":2}\n', 300]
    assert bounds.too_long(10_001, 100) == "line is 10,001 bytes; the limit is 100 bytes"


@given(st.recursive(st.none() | st.text() | st.integers(), lambda c: st.lists(c, max_size=3)
                    | st.dictionaries(st.text(max_size=3), c, max_size=3), max_leaves=40))
@pytest.mark.slow
def test_depth_walk_agrees_with_the_definition(value) -> None:
    def depth(v) -> int:
        if isinstance(v, list):
            return 1 + max((depth(x) for x in v), default=0)
        if isinstance(v, dict):
            return 1 + max((depth(x) for x in v.values()), default=0)
        return 0

    for limit in range(0, 8):
        assert bounds.depth_over(value, limit) == (depth(value) > limit)


def test_append_refuses_poison_lines_and_stores_the_rest(state: StateDir, capsys, monkeypatch) -> None:
    good = lines(msg("u1", None, "user", "first heron"), msg("u2", "u1", "user", "second heron"))
    data = b"\n".join([
        good[0].encode(),
        b'{"type":"message","id":"x","message":{"role":"user","content":"bad \\ud800 x"}}',
        nested(985).encode(),
        b"\xff\xfe broken",
        good[1].encode(),
    ]) + b"\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code = main(["--state-dir", str(state.path), "append", "agent:main:main", "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    report = json.loads(out)
    assert (report["stored"], report["indexed"]) == (2, 2)
    assert [r.split(":")[1] for r in report["refused"]] == ["2", "3", "4"]
    assert "lone surrogate" in report["refused"][0] and "nested deeper" in report["refused"][1]
    assert "Traceback" not in err and "internal error" not in err
    hits = sessions_search(state, SearchRequest("heron"), OPERATOR).results
    assert sorted(r.message_id for r in hits) == ["u1", "u2"]


def _store_raw_event(state: StateDir, key: str, seq: int, body: str) -> None:
    """What an older backscroll may have stored: an event no bound checked."""
    conn = sqlite3.connect(state.db_path("main"))
    pk = conn.execute("SELECT pk FROM sessions WHERE key = ?", (key,)).fetchone()[0]
    conn.execute("INSERT INTO events (session_pk, seq, entry_id, kind, body) VALUES (?, ?, ?, ?, ?)",
                 (pk, seq, None, "message", body))
    conn.execute("UPDATE sessions SET last_seq = ? WHERE pk = ?", (seq, pk))
    conn.execute("UPDATE index_state SET state = 'dirty' WHERE session_pk = ?", (pk,))
    conn.commit()
    conn.close()


def test_a_stored_poison_event_is_skipped_and_reported_and_never_jams(state: StateDir) -> None:
    with state.open("main", write=True) as db:
        for n, key in enumerate(["agent:main:main", "agent:main:other"]):
            db.import_session(SessionMeta(key, session_id=f"s{n}"), lines(
                msg(f"a{n}", None, "user", "otter before"), msg(f"b{n}", f"a{n}", "user", "otter after")
            ))
    _store_raw_event(state, "agent:main:main", 3, nested(5000))
    _store_raw_event(state, "agent:main:main", 4, nested(900))  # parses, but over the bound
    _store_raw_event(state, "agent:main:main", 5, '"a string, not an object"')
    [stats] = reconcile_all(state)
    assert stats.sessions == 2
    assert any("event 3: not valid JSON (nested deeper" in p for p in stats.problems)
    assert any("event 4: nested deeper" in p for p in stats.problems)
    assert any("event 5: not a JSON object" in p for p in stats.problems)
    response = sessions_search(state, SearchRequest("otter", limit=10), OPERATOR)
    assert not response.indexing and len(response.results) == 4
    assert verify_state(state).ok
    history = sessions_history(state, HistoryRequest("agent:main:main", include_tools=True), OPERATOR)
    assert [m["id"] for m in history.messages] == ["a0", "b0"]


def test_an_oversized_message_is_stored_whole_but_indexed_and_shown_cut(state: StateDir) -> None:
    head = "walrus " + "plain words here " * ((MAX_MESSAGE_CHARS - 10_000) // 17)
    text = head + "narwhal " + "filler " * 20_000 + "pangolin"  # past the cut
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("big", None, "user", text)))
        (stored,) = [e for _s, e in db.events(db.session("agent:main:main").pk)]
    assert stored["message"]["content"] == text  # stored whole
    for word, found in (("walrus", ["big"]), ("narwhal", ["big"]), ("pangolin", [])):
        results = sessions_search(state, SearchRequest(word), OPERATOR).results
        assert [r.message_id for r in results] == found
    history = sessions_history(
        state,
        HistoryRequest("agent:main:main", max_bytes=10**7, field_max_chars=10 * MAX_MESSAGE_CHARS),
        OPERATOR,
    )
    shown = history.messages[0]["content"][0]["text"]
    assert history.content_truncated
    assert shown.endswith(" more characters not shown]") and "[… message cut:" in shown
    assert len(shown) < MAX_MESSAGE_CHARS + 100 and "pangolin" not in shown


def test_a_cut_never_leaves_half_a_secret() -> None:
    secret = "ghp_" + "A1b2C3d4E5" * 4
    text = "word " * 19_995 + secret + " tail" * 1000  # the secret crosses the bound
    cut = cut_text(text)
    assert cut.startswith("word ") and "ghp_" not in cut and "message cut" in cut
    assert cut_text("short") == "short"
    no_spaces = "z" * (MAX_MESSAGE_CHARS * 2)
    assert len(cut_text(no_spaces)) < MAX_MESSAGE_CHARS + 60
    assert redact(cut) == cut


def test_excerpts_look_at_a_bounded_window(monkeypatch) -> None:
    seen: list[int] = []
    real = excerpt.tokens
    monkeypatch.setattr(excerpt, "tokens", lambda text: seen.append(len(text)) or real(text))
    body = "lorem ipsum " * 8000 + "the capybara sat here " + "dolor sit " * 8000
    result = excerpt.make_excerpt(body, parse_query("capybara"))
    assert "capybara" in result.text and result.text.startswith("…") and result.text.endswith("…")
    assert len(result.text) <= 301 and result.highlights
    assert max(seen) <= excerpt.SCAN_CHARS
    late = excerpt.make_excerpt("x " * 50_000 + "Café", parse_query("cafe"))  # folding only
    assert late.text.startswith("x x") and len(late.text) <= 301


def test_bounds_in_the_docs_match_the_code() -> None:
    docs = (Path(__file__).resolve().parents[1] / "SECURITY.md").read_text()
    for text in (f"{MAX_DEPTH} levels", "32 MB", f"{MAX_MESSAGE_CHARS:,} characters",
                 f"{excerpt.SCAN_CHARS:,} characters", f"{bounds.MAX_ID_CHARS} characters"):
        assert text in docs


# What a JSON line may hold that the two decoders could read differently: integers past 64
# bits (orjson would make them floats), NaN and infinities, lone and paired surrogates, raw
# control characters, a BOM, trailing data, deep nesting.
_TRICKY = st.sampled_from([
    "123456789012345678901234567890", "-9223372036854775809", "18446744073709551616",
    "9223372036854775807", "NaN", "-Infinity", "1e400", "-0", "-0.0", "5e-324", '"\\ud800"',
    '"\\ud83d\\ude00"', '"\\udc00x"', '"a\tb"', '"\\u0000"', "\ufeff", "[" * 120 + "]" * 120,
    "1.0", "1E2", "01", '"\\x"', "}", " ",
])
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


def _spliced(text: str, tricky: list[str], at: list[int]) -> str:
    for piece, where in zip(tricky, at):
        where %= len(text) + 1
        text = text[:where] + piece + text[where:]
    return text


def _outcome(raw: str | bytes) -> tuple[str, str]:
    try:
        return "value", repr(decode_json(raw))
    except ValidationError as err:
        return "refused", str(err)


@given(
    _JSON_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)),
    st.lists(_TRICKY, max_size=3), st.lists(st.integers(0, 10_000), min_size=3, max_size=3),
    st.booleans(),
)
def test_the_fast_decoder_answers_what_the_standard_library_answers(text, tricky, at, as_bytes):
    """orjson decodes lines when it is installed; whatever the line, the value or the reason
    a line is refused is the standard library's (a mutation that lets orjson keep a 20-digit
    integer, or skips the fallback on its errors, fails here)."""
    raw = _spliced(text, tricky, at)
    line: str | bytes = raw.encode("utf-8", "surrogatepass") if as_bytes else raw
    fast = _outcome(line)
    saved, bounds._fast_loads = bounds._fast_loads, None
    try:
        assert bounds._fast_loads is None and _outcome(line) == fast
    finally:
        bounds._fast_loads = saved


def test_the_fast_decoder_is_used_when_installed():
    pytest.importorskip("orjson")
    assert bounds._fast(b'{"a":[1,2]}') == {"a": [1, 2]}
    assert bounds._fast(b"[123456789012345678901]") is bounds._REFUSED
    assert bounds._fast(b"[NaN]") is bounds._REFUSED
