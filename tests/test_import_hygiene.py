import json
import subprocess
import sys
from pathlib import Path


def test_core_loads_neither_textual_nor_rich() -> None:
    code = (
        "import sys, backscroll.core, backscroll.core.state, backscroll.core.verify\n"
        "import backscroll.core.importers.openclaw\n"
        "import pkgutil, importlib\n"
        "for m in pkgutil.walk_packages(backscroll.core.__path__, 'backscroll.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_nothing_installs_top_level_core_or_tui() -> None:
    code = (
        "import importlib.util\n"
        "print(importlib.util.find_spec('core'), importlib.util.find_spec('tui'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    assert out.stdout.strip() == "None None"


def loaded_ui(code: str) -> list[str]:
    """The Textual modules loaded by ``code`` run in a fresh interpreter."""
    code += (
        "\nimport sys\n"
        "print('textual:' + ','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'textual')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.strip().splitlines()[-1].removeprefix("textual:")
    return [m for m in loaded.split(",") if m]


def test_the_mcp_server_never_loads_textual() -> None:
    code = (
        "import backscroll.tui.mcp, backscroll.tui.mcp.server, backscroll.tui.mcp.wire\n"
        "from backscroll.core.state import StateDir\n"
        "from backscroll.core.visibility import OPERATOR\n"
        "import tempfile\n"
        "backscroll.tui.mcp.server.build_server(StateDir(tempfile.mkdtemp()), OPERATOR)\n"
    )
    assert loaded_ui(code) == []


def test_the_command_line_loads_textual_only_for_the_browser(tmp_path: Path) -> None:
    """``search --json``, ``status`` and ``history`` run whole (a state with a conversation)
    without Textual; the import of the CLI itself neither."""
    from backscroll.core.state import StateDir
    from backscroll.core.storage import SessionMeta

    from .events import header, msg

    state = StateDir(tmp_path / "state", database_url="")
    meta = SessionMeta("agent:main:main", session_id="sid-main")
    with state.open("main", write=True) as db:
        for event in (header("sid-main"), msg("m0", None, "user", "the heron migration")):
            db.append(meta, json.dumps(event))
    for argv in (["search", "heron", "--json"], ["status"], ["status", "--json"],
                 ["history", "agent:main:main", "--json"], ["history", "agent:main:main"]):
        code = (
            "import contextlib, io\n"
            "from backscroll.tui.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main({['--state-dir', str(state.path), *argv]!r})\n"
            "assert rc == 0, rc\n"
        )
        assert loaded_ui(code) == [], argv
    assert loaded_ui("import backscroll.tui.cli") == []
