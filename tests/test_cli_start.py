"""A ``search --json`` loads the search path only (docs/performance.md): scripts and agents
calling the CLI as they type pay for no Rich, Textual, importers, reconciliation or writer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta

from .events import msg

NOT_LOADED = (
    "rich",
    "textual",
    "multiprocessing",
    "orjson",  # loaded by the first line decoded (bounds._fast)
    "dataclasses",  # ~10 ms to import, ~1 ms a class: the search path's records are tuples
    "tomllib",  # read only when there is a config.toml
    "backscroll.core.importers",
    "backscroll.core.reconcile",
    "backscroll.core.transcript",
    "backscroll.core.storage.sqlite.writer",
    "backscroll.core.storage.sqlite.writes",
)


def test_a_json_search_loads_only_the_search_path(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    with state.open("main", write=True) as db:
        db.append(SessionMeta("agent:main:main"), json.dumps(msg("u1", None, "user", "hello")))
    code = (
        "import sys, io, contextlib\n"
        "from backscroll.tui.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    main(['search', 'hello', '--json', '--state-dir', {str(state.path)!r}])\n"
        "print(out.getvalue().strip())\n"
        f"print(','.join(m for m in sys.modules if m.startswith({NOT_LOADED!r})))\n"
    )
    answer, loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert [r["messageId"] for r in json.loads(answer)["results"]] == ["u1"]
    assert loaded == ""
