"""The demo's dates: ``backscroll demo`` dates its corpus to the day it is built and builds it
again once it is a week old, so the usage view's "last 30 days" is never empty; the corpus
itself (``build_demo``, ``generate``) stays fixed to ``DEFAULT_NOW_MS`` for tests and
screenshots."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from backscroll.core.demo.corpus import DEFAULT_NOW_MS, generate
from backscroll.core.demo.incident import LABEL
from backscroll.core.demo.state import STALE_DAYS, dated_to, demo_now, ensure_demo
from backscroll.core.usage import usage_report
from backscroll.core.visibility import OPERATOR

DAY = 86_400_000
MESSAGES = 200  # small and quick; the incident and the fixed parts are in every corpus


@given(st.floats(min_value=1.0e9, max_value=4.0e9))
def test_the_demo_is_dated_to_the_latest_noon_utc_not_after_it_is_built(now_s: float) -> None:
    dated = demo_now(now_s)
    assert dated <= now_s * 1000 < dated + DAY
    assert (dated - DEFAULT_NOW_MS) % DAY == 0  # the default corpus, moved by whole days
    assert datetime.fromtimestamp(dated / 1000, tz=UTC).strftime("%H:%M") == "12:00"


def test_the_corpus_moved_by_whole_days_is_the_same_corpus() -> None:
    fixed = list(generate(messages=MESSAGES))
    moved = list(generate(messages=MESSAGES, now_ms=DEFAULT_NOW_MS + 9 * DAY))
    assert [(s.session_id, s.label, s.created_at + 9 * DAY) for s in fixed] == [
        (s.session_id, s.label, s.created_at) for s in moved]
    assert [[e.get("id") for e in s.events] for s in fixed] == [
        [e.get("id") for e in s.events] for s in moved]


def _days_with_usage(state, at_s: float) -> list[str]:
    report = usage_report(state, OPERATOR, now_ms=int(at_s * 1000))  # the default: 30 days
    return [line.key for line in report.lines]


def test_backscroll_demo_always_has_a_last_30_days(tmp_path: Path) -> None:
    built_at = (DEFAULT_NOW_MS + 400 * DAY) / 1000 + 5 * 3600  # long after the fixed date
    state = ensure_demo(tmp_path / "demo", messages=MESSAGES, clock=lambda: built_at)
    assert dated_to(state.path) == demo_now(built_at)
    fresh = _days_with_usage(state, built_at)
    assert len(fresh) >= 5  # a few days a week in a corpus this small
    assert fresh[-1] >= datetime.fromtimestamp(built_at - 7 * 86400, tz=UTC).date().isoformat()
    # the incident is two days old, as it is in the fixed corpus
    incident = [s for s in generate(messages=MESSAGES, now_ms=demo_now(built_at))
                if s.label == LABEL]
    assert len(incident) == 1 and demo_now(built_at) - incident[0].created_at < 3 * DAY

    # a few days later the same demo is reused; a week later it is built again, moved up
    later = built_at + 3 * 86400
    assert ensure_demo(tmp_path / "demo", messages=MESSAGES, clock=lambda: later).path == state.path
    assert dated_to(state.path) == demo_now(built_at)
    week_later = built_at + STALE_DAYS * 86400
    ensure_demo(tmp_path / "demo", messages=MESSAGES, clock=lambda: week_later)
    assert dated_to(state.path) == demo_now(week_later)
    assert _days_with_usage(state, week_later)[-1] > fresh[-1]


def test_a_demo_an_older_version_dated_to_the_fixed_day_is_built_again(tmp_path: Path) -> None:
    older = ensure_demo(tmp_path / "demo", messages=MESSAGES, clock=lambda: DEFAULT_NOW_MS / 1000)
    complete = older.path / ".demo-complete"
    complete.write_text(json.dumps({"seed": 7, "messages": MESSAGES}) + "\n")  # no "now"
    assert dated_to(older.path) is None
    today = (DEFAULT_NOW_MS + 60 * DAY) / 1000
    ensure_demo(tmp_path / "demo", messages=MESSAGES, clock=lambda: today)
    assert dated_to(older.path) == demo_now(today)
    assert _days_with_usage(older, today)
