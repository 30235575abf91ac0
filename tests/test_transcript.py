from __future__ import annotations

import pytest

from backscroll.core.errors import ValidationError
from backscroll.core.transcript import active_branch, indexable, parse_event

from .events import header, leaf, msg


def ids(events: list[dict]) -> list[str]:
    branch = active_branch(list(enumerate(events, start=1)))
    return [e.get("id") for _seq, e in branch.path]


def test_linear_tree_is_whole_path() -> None:
    events = [header(), msg("a", None, "user", "hi"), msg("b", "a", "assistant", "yo")]
    assert ids(events) == ["a", "b"]


def test_last_entry_wins_without_leaf_controls() -> None:
    # b and c are siblings; c was written last so the active branch is a -> c
    events = [
        msg("a", None, "user", "q"),
        msg("b", "a", "assistant", "x"),
        msg("c", "a", "assistant", "y"),
    ]
    assert ids(events) == ["a", "c"]


def test_leaf_control_rewinds_to_earlier_branch() -> None:
    events = [
        msg("root", None, "user", "root"),
        msg("branch-A", "root", "assistant", "A"),
        msg("branch-B", "root", "assistant", "B"),
        leaf("l1", "branch-A", parent="branch-B"),
    ]
    assert ids(events) == ["root", "branch-A"]


def test_appends_after_rewind_continue_from_target() -> None:
    events = [
        msg("r", None, "user", "r"),
        msg("a", "r", "assistant", "a"),
        msg("b", "a", "user", "b"),
        leaf("l", "a"),
        msg("c", "a", "user", "c"),
    ]
    assert ids(events) == ["r", "a", "c"]


def test_leaf_control_null_hides_everything_and_unknown_target_is_ignored() -> None:
    base = [msg("r", None, "user", "r"), msg("a", "r", "assistant", "a")]
    assert ids(base + [leaf("l", None)]) == []
    branch = active_branch(list(enumerate(base + [leaf("l", "nope")], start=1)))
    assert [e["id"] for _s, e in branch.path] == ["r", "a"]
    assert any("unknown" in p for p in branch.problems)


def test_side_appends_do_not_move_the_leaf() -> None:
    events = [
        msg("r", None, "user", "r"),
        msg("a", "r", "assistant", "a"),
        msg("s", "a", "assistant", "side delivery", appendMode="side"),
        {"type": "metadata", "id": "m", "parentId": "a"},
    ]
    assert ids(events) == ["r", "a"]


def test_flat_legacy_file_reads_as_a_list() -> None:
    events = [
        {"type": "message", "id": "1", "message": {"role": "user", "content": "one"}},
        {"type": "message", "id": "2", "message": {"role": "assistant", "content": "two"}},
        {"type": "model_change", "id": "3"},
        {"type": "message", "id": "4", "message": {"role": "user", "content": "four"}},
    ]
    assert ids(events) == ["1", "2", "3", "4"]


def test_broken_trees_are_read_as_far_as_sound() -> None:
    dup = [
        msg("a", None, "user", "a"),
        msg("b", "a", "assistant", "b"),
        msg("b", "a", "user", "dupe"),
    ]
    branch = active_branch(list(enumerate(dup, start=1)))
    assert [e["message"]["content"] for _s, e in branch.path] == ["a", "b"]
    assert any("duplicate" in p for p in branch.problems)

    missing = [msg("a", None, "user", "a"), msg("c", "ghost", "assistant", "c")]
    branch = active_branch(list(enumerate(missing, start=1)))
    assert [e["id"] for _s, e in branch.path] == ["c"]
    assert any("missing" in p for p in branch.problems)

    cycle = [msg("x", "y", "user", "x"), msg("y", "x", "assistant", "y")]
    branch = active_branch(list(enumerate(cycle, start=1)))
    assert [e["id"] for _s, e in branch.path] == ["x", "y"]
    assert any("cycle" in p for p in branch.problems)


def test_only_user_and_assistant_text_is_indexable() -> None:
    assistant = msg(
        "a",
        None,
        "assistant",
        [
            {"type": "thinking", "thinking": "private reasoning"},
            {"type": "text", "text": "visible answer"},
            {"type": "toolCall", "id": "c1", "name": "exec", "arguments": {"command": "ls"}},
            {"type": "output_text", "text": "second part"},
        ],
    )
    assert indexable(assistant).text == "visible answer\nsecond part"
    user = msg(
        "u",
        None,
        "user",
        [
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "input_text", "text": "look at this"},
        ],
    )
    assert indexable(user).text == "look at this"
    tool = msg("t", None, "toolResult", [{"type": "text", "text": "tool output"}])
    assert indexable(tool) is None
    image_only = msg(
        "i", None, "user", [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]
    )
    assert indexable(image_only) is None
    no_id = {"type": "message", "message": {"role": "user", "content": "no id"}}
    assert indexable(no_id) is None


@pytest.mark.parametrize(
    "line, reason",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"id": "x"}', '"type"'),
        ('{"type": "message", "id": "x"}', "message"),
        ('{"type": "message", "id": 5, "message": {"role": "user"}}', '"id"'),
        ('{"type": "leaf", "targetId": 3}', "targetId"),
        ('{"type": "message", "id": "x", "parentId": 7, "message": {"role": "user"}}', "parentId"),
    ],
)
def test_malformed_events_are_refused_with_a_reason(line: str, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        parse_event(line)
