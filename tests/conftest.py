from __future__ import annotations

import os
from pathlib import Path

import pytest

from backscroll.core.state import StateDir

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not DATA.is_dir():  # CI lays shared/ beside the clone
    DATA = Path(os.environ.get("BACKSCROLL_TEST_DATA", "/work/shared/data"))


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the real state dir, config or clock-dependent caches."""
    monkeypatch.setenv("BACKSCROLL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("BACKSCROLL_DEBUG", raising=False)
    # The agents' own folders (the live sources): an empty home, never the real one.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "OPENCLAW_STATE_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def state(tmp_path: Path) -> StateDir:
    return StateDir(tmp_path / "state")


@pytest.fixture
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip("shared test data not found")
    return DATA
