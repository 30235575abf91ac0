"""Codex prompts written only as ``event_msg`` ``user_message`` (newer releases, e.g. Codex
Desktop 0.128) are the user's side of the conversation; where a turn has both that event and
a ``response_item`` user message (older releases), the prompt is stored once, in whichever
order the two lines come and however the file is cut between syncs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backscroll.core.importers.codex import import_codex
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import sync_sources
from backscroll.core.sources.detect import Source
from backscroll.core.state import StateDir

from .fakehome import CODEX_KEY, ROLLOUT, append, hits
from .test_import_claude_codex import branch_texts

pytestmark = pytest.mark.backends

PROMPTS = ["show tools", "let's update the defailt context compart to 90 in env var"]


def rollout_lines(data_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (data_dir / "codex" / ROLLOUT).read_text().splitlines()]


def is_prompt_item(record: dict[str, Any]) -> bool:
    payload = record["payload"]
    return (record["type"] == "response_item" and payload.get("type") == "message"
            and payload.get("role") == "user"
            and payload["content"][0]["text"] in PROMPTS)


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def event_prompt(text: str, images: list[str] | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"type": "user_message", "message": text}
    if images is not None:
        payload["images"] = images
    return {"timestamp": "2026-06-01T10:00:00.000Z", "type": "event_msg", "payload": payload}


def item_prompt(text: str) -> dict[str, Any]:
    return {"timestamp": "2026-06-01T10:00:00.000Z", "type": "response_item",
            "payload": {"type": "message", "role": "user",
                        "content": [{"type": "input_text", "text": text}]}}


def turn_start(turn: str) -> list[dict[str, Any]]:
    return [{"timestamp": "2026-06-01T10:00:00.000Z", "type": "event_msg",
             "payload": {"type": "task_started", "turn_id": turn}},
            {"timestamp": "2026-06-01T10:00:00.000Z", "type": "turn_context",
             "payload": {"turn_id": turn, "model": "gpt-5.5"}}]


def user_rows(state: StateDir) -> list[str]:
    with state.open("codex") as db:
        return [text for role, text in branch_texts(db, CODEX_KEY) if role == "user"]


def test_prompts_only_in_user_message_events_are_searchable_and_title(
    state: StateDir, data_dir: Path, tmp_path: Path
) -> None:
    records = [r for r in rollout_lines(data_dir) if not is_prompt_item(r)]
    report = import_codex(state, write(tmp_path / ROLLOUT, records))
    assert report.skipped == [] and report.keys == [CODEX_KEY]
    reconcile_all(state)
    assert user_rows(state) == PROMPTS
    with state.open("codex") as db:
        assert db.session(CODEX_KEY).label == "codemie-code: show tools"
    assert [k for k, _ in hits(state, "defailt")] == [CODEX_KEY]


@pytest.mark.parametrize("event_first", [False, True])
def test_a_prompt_written_both_ways_is_stored_once(
    state: StateDir, data_dir: Path, tmp_path: Path, event_first: bool
) -> None:
    records = rollout_lines(data_dir)
    if event_first:  # the event before its response item: still one prompt per turn
        for i in [i for i, record in enumerate(records) if is_prompt_item(record)]:
            assert records[i + 1]["payload"]["type"] == "user_message"
            records[i], records[i + 1] = records[i + 1], records[i]
    import_codex(state, write(tmp_path / ROLLOUT, records))
    reconcile_all(state)
    assert user_rows(state) == PROMPTS


def test_an_event_with_images_keeps_them(state: StateDir, data_dir: Path,
                                         tmp_path: Path) -> None:
    records = [r for r in rollout_lines(data_dir) if not is_prompt_item(r)]
    records += [*turn_start("t3"), event_prompt("what is in this okapidiagram",
                                                ["data:image/png;base64,iVBORw0KGgo="])]
    import_codex(state, write(tmp_path / ROLLOUT, records))
    with state.open("codex") as db:
        session = db.session(CODEX_KEY)
        last = db.events(session.pk)[-1][1]
    assert last["message"]["role"] == "user"
    assert last["message"]["content"] == [
        {"type": "text", "text": "what is in this okapidiagram"},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ]


def test_sync_takes_new_prompts_of_a_growing_rollout_once(
    state: StateDir, data_dir: Path, tmp_path: Path
) -> None:
    """``watch`` and ``sync`` read a rollout as it grows: a prompt written only as an event is
    taken, and one written both ways is taken once whichever line a read ends between."""
    folder = tmp_path / "sessions"
    rollout = write(folder / "2026" / "06" / "01" / ROLLOUT,
                    [r for r in rollout_lines(data_dir) if not is_prompt_item(r)])
    source = Source("codex", folder)

    def sync() -> None:
        assert sync_sources(state, [source]).problems == []

    sync()
    reconcile_all(state)
    append(rollout, *turn_start("t3"), event_prompt("where is the pelicanregister"))
    sync()  # not reconciled: a line that grows the live transcript is searchable at once
    assert [k for k, _ in hits(state, "pelicanregister")] == [CODEX_KEY]
    append(rollout, *turn_start("t4"), event_prompt("the capybaraledger first"))
    sync()
    append(rollout, item_prompt("the capybaraledger first"))
    sync()
    append(rollout, *turn_start("t5"), item_prompt("then the ibisdrawer"))
    sync()
    append(rollout, event_prompt("then the ibisdrawer"))
    sync()
    append(rollout, *turn_start("t6"), item_prompt("a tapirsignal"),
           event_prompt("a tapirsignal"))
    sync()
    assert user_rows(state) == [*PROMPTS, "where is the pelicanregister",
                                "the capybaraledger first", "then the ibisdrawer",
                                "a tapirsignal"]
    for word in ("capybaraledger", "ibisdrawer", "tapirsignal"):
        assert len(hits(state, word)) == 1
