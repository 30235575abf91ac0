"""The format registry (``core/formats.py``): a format added the documented way (one module
exporting ``DOORS``, one entry in ``FORMATS``) is offered by ``--source`` and ``import``,
listed by ``sources`` (found under a home), taken in by ``sync`` (searchable) and offered by
the browser's source filter; and the registry agrees with the packages it names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backscroll.core import formats
from backscroll.core.catalog import SOURCE_NAMES, SOURCES, check_source, source_kind
from backscroll.core.importers.claude_code import DEFAULT_AGENT as CLAUDE_AGENT
from backscroll.core.importers.claude_code import SOURCE as CLAUDE_SOURCE
from backscroll.core.importers.codex import DEFAULT_AGENT as CODEX_AGENT
from backscroll.core.importers.codex import SOURCE as CODEX_SOURCE
from backscroll.core.importers.common import Followed, ImportReport, NumberedLines, store_live
from backscroll.core.importers.format import Doors, FollowedFile
from backscroll.core.importers.pi import SOURCES as PI_SOURCES
from backscroll.core.reconcile import reconcile_all
from backscroll.core.sources import sync_sources
from backscroll.core.sources.listing import sources_status
from backscroll.core.state import StateDir
from backscroll.core.storage import AgentWriter, SessionMeta
from backscroll.tui.cli import build_parser

from .events import header, msg
from .fakehome import hits

# --- a toy format: ``~/.toy/logs/<name>.toy``, one JSON line per message -----------------


def _follow(db: AgentWriter, found: FollowedFile, lines: NumberedLines, carry: str | None,
            report: ImportReport, memo: dict[str, Any]) -> Followed:
    session_id = found.file.stem
    texts, events = [], []
    if carry is None:
        events.append(header(session_id))
    for n, line in lines:
        if isinstance(line, bytes) and line.strip():
            said = json.loads(line)
            events.append(msg(f"{session_id}-{n}", None, said["role"], said["text"]))
    texts = [json.dumps(event) for event in events]
    meta = SessionMeta(f"agent:{found.agent}:toy:{session_id}", session_id, source="toy")
    store_live(db, meta, texts, events, report)
    return Followed("{}")


def _import(state: StateDir, path: Path | str, agent: str | None = None) -> ImportReport:
    raise NotImplementedError  # not asked of it here


DOORS = Doors(import_path=_import, follow=_follow, transcript=lambda name: name.endswith(".toy"))
TOY = formats.Format("toy", "Toy", "toy", __name__, "TOY_HOME", ".toy", "logs", stored=("toy",))


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> formats.Format:
    monkeypatch.delenv("TOY_HOME", raising=False)
    monkeypatch.setattr(formats, "FORMATS", [*formats.FORMATS, TOY])
    return TOY


def test_a_format_added_to_the_registry_is_a_choice_everywhere(toy: formats.Format) -> None:
    args = build_parser().parse_args(["search", "x", "--source", "toy"])
    assert args.source == "toy"
    assert build_parser().parse_args(["import", "toy", "/p"]).kind == "toy"
    assert build_parser().parse_args(["sources", "add", "toy", "/p"]).kind == "toy"
    assert check_source("toy") == "toy" and SOURCES["toy"] == ("toy",)
    assert source_kind("toy") == "toy"
    assert list(SOURCE_NAMES.items())[-1] == ("toy", "Toy")  # the browser's filter options


@pytest.mark.slow
async def test_the_browser_filter_offers_an_added_format(toy: formats.Format) -> None:
    from textual.widgets import Select

    from backscroll.tui.screens import Filters, FiltersScreen

    from .test_tui_browse import Host

    screen = FiltersScreen(Filters(), ["main"], [])
    async with Host(screen).run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        select = screen.query_one("#filter-source", Select)
        select.value = "toy"  # refused unless it is one of the options
        assert select.value == "toy"


def test_an_added_format_is_found_synced_and_searchable(toy: formats.Format,
                                                        state: StateDir) -> None:
    logs = Path.home() / ".toy" / "logs"
    logs.mkdir(parents=True)
    (logs / "first.toy").write_text(json.dumps({"role": "user", "text": "zebra crossing"}) + "\n")
    listed = {s.source.kind: s for s in sources_status(state)}
    assert listed["toy"].source.path == logs and listed["toy"].present
    report = sync_sources(state)
    assert report.problems == [] and report.sessions == {"agent:toy:toy:first"}
    reconcile_all(state)
    assert hits(state, "zebra") == [("agent:toy:toy:first", "first-1")]
    with (logs / "first.toy").open("a") as grown:
        grown.write(json.dumps({"role": "assistant", "text": "zebra stripes"}) + "\n")
    sync_sources(state)
    reconcile_all(state)
    assert sorted(hits(state, "zebra")) == [("agent:toy:toy:first", "first-1"),
                                            ("agent:toy:toy:first", "first-2")]


def test_the_registry_agrees_with_the_packages() -> None:
    by_name = {f.name: f for f in formats.known()}
    assert list(by_name)[:5] == ["claude-code", "codex", "openclaw", "pi", "omp"]
    assert {"opencode", "kilo"} <= set(by_name)
    assert {"gemini", "copilot"} <= set(by_name)
    assert {"qwen-code", "cursor", "droid"} <= set(by_name)
    assert {"cline", "roo-code", "continue", "aider"} <= set(by_name)
    assert by_name["claude-code"].default_agent == CLAUDE_AGENT
    assert by_name["claude-code"].stored == (CLAUDE_SOURCE,)
    assert by_name["codex"].default_agent == CODEX_AGENT
    assert by_name["codex"].stored == (CODEX_SOURCE,)
    for name in PI_SOURCES:  # one package, two tools: each stored under its own source
        assert by_name[name].default_agent == name and by_name[name].stored == (name,)
    for fmt in formats.known():
        assert isinstance(fmt.doors, Doors)
