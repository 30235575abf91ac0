"""The shape the code keeps as it grows (docs/architecture.md): modules small enough to read
whole, and a browser app that stays wiring."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE_MAX_LINES = 450
APP_MAX_LINES = 300
DATA_MODULES = {"core/demo/text.py"}  # the demo's written conversations: text, not logic


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_longer_than_one_can_read_whole() -> None:
    long = {
        str(path.relative_to(ROOT)): lines(path)
        for folder in ("core", "tui")
        for path in (ROOT / folder).rglob("*.py")
        if str(path.relative_to(ROOT)) not in DATA_MODULES
    }
    assert len(long) > 50  # the walk found the packages
    assert {name: n for name, n in long.items() if n > MODULE_MAX_LINES} == {}


def test_the_browser_app_is_wiring() -> None:
    assert lines(ROOT / "tui" / "app.py") < APP_MAX_LINES
