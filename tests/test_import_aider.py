"""Aider chat histories (``core/importers/aider``): ``.aider.chat.history.md`` as
Aider-AI/aider ``aider/io.py`` appends it (``InputOutput.__init__`` writes ``# aider chat
started at``, ``user_input`` the ``#### `` lines, ``tool_output`` the ``> `` lines with a
Markdown line break, ``ai_output`` the reply). Opt-in: only folders a person adds are searched;
the home is not walked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backscroll.core import formats
from backscroll.core.importers.aider import import_aider, read_runs
from backscroll.core.importers.common import ImportReport
from backscroll.core.sources import add_source, sync_sources
from backscroll.core.sources.detect import default_folders
from backscroll.core.sources.listing import sources_status
from backscroll.core.state import StateDir

from .wholefiles import events_of, history_json, search

pytestmark = pytest.mark.backends

SAMPLE = Path("/work/shared/data/agents/aider/home/code/Simple-Calulator/.aider.chat.history.md")

RUN_1 = """
# aider chat started at 2026-01-05 09:30:00

> Aider v0.86.1
> Main model: anthropic/claude-sonnet-4 with diff edit format
> Git repo: .git with 3 files

#### make the heron sorter stable
#### and keep it fast

I'll make the heron sorter stable.

# Plan
Use a merge step.

sorter.py
```python
def sort(xs): return sorted(xs)
```

> Applied edit to sorter.py
> Commit 1a2b3c4 feat: stable quokka sort

#### /add tests/test_sorter.py
> Added tests/test_sorter.py to the chat

#### /ask est-ce que ça trie les clés ünïcode? 日本

#### est-ce que ça trie les clés ünïcode? 日本

Yes, the sorter handles those keys.
"""

RUN_2 = """
# aider chat started at 2026-01-06 14:00:00

> Main model: gpt-5

#### add a dingo flag

Added the dingo flag.
"""


def as_aider(text: str) -> str:
    """Aider ends its ``#### `` and ``> `` lines with a Markdown line break (two spaces)."""
    return "".join(line + "  \n" if line.startswith(("#### ", "> ")) else line + "\n"
                   for line in text.split("\n")[:-1])


def project(root: Path, text: str = RUN_1) -> Path:
    file = root / "birds" / ".aider.chat.history.md"
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(as_aider(text))
    return file


def keys_of(state: StateDir) -> list[str]:
    with state.open("aider") as db:
        return sorted(s.key for s in db.sessions())


def test_the_home_is_not_walked_without_a_configured_root(state: StateDir) -> None:
    project(Path.home() / "code")
    assert [s for s in default_folders() if s.kind == "aider"] == []
    report = sync_sources(state)
    assert report.files == 0 and state.agents() == []
    (status,) = [s for s in sources_status(state) if s.source.kind == "aider"]
    assert status.source.origin == "opt-in" and "home is not searched" in status.notes[0]
    assert "sources add aider" in status.notes[0]


def test_configured_root_first_import_runs_and_what_is_indexed(state: StateDir) -> None:
    file = project(Path.home() / "code")
    add_source(state.path, "aider", Path.home() / "code", None)
    report = sync_sources(state)
    assert report.problems == [] and len(report.sessions) == 1
    (key,) = keys_of(state)
    events = events_of(state, "aider", key)
    assert events[0]["cwd"] == str(file.parent) and events[0]["timestamp"].startswith("2026-01-0")
    users = [e["message"]["content"][0]["text"] for e in events
             if e.get("message", {}).get("role") == "user"]
    assert users == ["make the heron sorter stable\nand keep it fast",
                     "est-ce que ça trie les clés ünïcode? 日本"]
    answer = next(e["message"] for e in events if e.get("message", {}).get("role") == "assistant")
    assert "# Plan" in answer["content"][0]["text"]  # a heading in the reply is not a marker
    assert answer["model"] == "anthropic/claude-sonnet-4"
    assert search(state, "heron") == [key] and search(state, "ünïcode") == [key]
    assert search(state, "日本") == [key]
    for hidden in ("quokka", "test_sorter", "ask"):  # aider's output, commands
        assert search(state, hidden) == [], hidden
    assert "quokka" in history_json(state, key, tools=True)
    with state.open("aider") as db:
        assert db.session(key).label.startswith("birds: make the heron sorter stable")


def test_appended_messages_and_a_new_run(state: StateDir) -> None:
    file = project(Path.home() / "code")
    add_source(state.path, "aider", Path.home() / "code", None)
    sync_sources(state)
    (first,) = keys_of(state)
    before = events_of(state, "aider", first)
    with file.open("a") as handle:
        handle.write(as_aider("\n#### now the emu case\n\nThe emu case is covered.\n"))
    report = sync_sources(state)
    assert (report.messages, report.sessions) == (2, {first})
    assert search(state, "emu") == [first]
    with file.open("a") as handle:
        handle.write(as_aider(RUN_2))
    grown = events_of(state, "aider", first)
    report = sync_sources(state)
    assert report.messages == 3  # aider's output, the user, the reply: in the new run
    (second,) = set(keys_of(state)) - {first}
    assert events_of(state, "aider", first) == grown and grown[:len(before)] == before
    assert search(state, "dingo") == [second]
    assert sync_sources(state).events == 0
    file.unlink()
    assert sync_sources(state).gone == 1
    assert search(state, "heron") == [first]  # a vanished file: its runs stay


def test_real_sample_and_a_binary_file(state: StateDir, tmp_path: Path) -> None:
    shutil.copy(SAMPLE, project(tmp_path / "code"))
    (tmp_path / "code/other").mkdir()
    (tmp_path / "code/other/.aider.chat.history.md").write_bytes(b"\0\1\2" * 10)
    report = import_aider(state, tmp_path / "code")
    assert len(report.keys) == 1
    assert any("other/.aider.chat.history.md" in s and "binary" in s for s in report.skipped)
    (key,) = report.keys
    assert search(state, "dark/light mode switch") == [key]
    assert search(state, "Repo-map") == []  # aider's own output
    assert import_aider(state, tmp_path / "code").events == 0


def test_runs_started_the_same_second_and_lines_before_any_run(tmp_path: Path) -> None:
    file = project(tmp_path, "#### orphan words\n" + RUN_1 + RUN_1)
    runs = read_runs(file, ImportReport())
    assert len(runs) == 3 and len({r.session_id for r in runs}) == 3
    assert runs[0].stamp is None and runs[1].stamp == runs[2].stamp
    assert formats.get("aider").resume is None
