import subprocess
import sys


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
