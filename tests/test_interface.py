"""Both backends implement ``storage/interface.py`` method by method, with the parameters it
names, and nothing above ``core/storage/`` reaches a backend module."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from backscroll.core.storage import interface
from backscroll.core.storage.postgres import PgReader, PgWriter, PostgresStorage
from backscroll.core.storage.sqlite import AgentReader, SqliteStorage
from backscroll.core.storage.sqlite.writer import AgentWriter

ROOT = Path(__file__).resolve().parents[1]


def members(protocol: type) -> list[str]:
    return sorted(
        name for name in vars(protocol)
        if not name.startswith("_") and name not in ("agent_id",)
        and (callable(vars(protocol)[name]) or isinstance(vars(protocol)[name], property))
    )


def parameters(function: object) -> list[str]:
    return list(inspect.signature(function).parameters)


PAIRS = [
    (interface.Storage, [SqliteStorage, PostgresStorage]),
    (interface.AgentReader, [AgentReader, PgReader, AgentWriter, PgWriter]),
    (interface.AgentWriter, [AgentWriter, PgWriter]),
]


@pytest.mark.parametrize("protocol, classes", PAIRS, ids=lambda v: getattr(v, "__name__", ""))
def test_every_method_exists_with_the_interface_parameters(protocol: type, classes: list) -> None:
    names = members(protocol)
    assert len(names) > 5
    for cls in classes:
        for name in names:
            assert hasattr(cls, name), f"{cls.__qualname__} lacks {name}"
            wanted, found = vars(protocol)[name], getattr(cls, name)
            if isinstance(wanted, property):
                assert isinstance(inspect.getattr_static(cls, name), property), (cls, name)
                continue
            assert parameters(found) == parameters(wanted), (cls.__qualname__, name)


def test_nothing_above_the_storage_imports_a_backend() -> None:
    pattern = re.compile(r"storage\.(sqlite|postgres)|from \.(sqlite|postgres)\b")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("core", "tui")
        for path in (ROOT / folder).rglob("*.py")
        if "storage" not in path.relative_to(ROOT).parts and pattern.search(path.read_text())
    ]
    assert offenders == []
