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


def declared(protocol: type) -> dict[str, object]:
    """The members of a protocol and of the role protocols it composes."""
    found: dict[str, object] = {}
    for role in reversed(protocol.__mro__):
        if role.__module__ == interface.__name__:
            found.update(vars(role))
    return found


def members(protocol: type) -> list[str]:
    found = declared(protocol)
    return sorted(
        name for name, value in found.items()
        if not name.startswith("_") and name not in ("agent_id",)
        and (callable(value) or isinstance(value, property))
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
            wanted, found = declared(protocol)[name], getattr(cls, name)
            if isinstance(wanted, property):
                assert isinstance(inspect.getattr_static(cls, name), property), (cls, name)
                continue
            assert parameters(found) == parameters(wanted), (cls.__qualname__, name)


def test_capability_flags_are_declared_by_every_storage() -> None:
    """What only one backend has is a flag of the ``Storage`` protocol, set by each."""
    flags = [name for name, kind in interface.Storage.__annotations__.items() if kind == "bool"]
    assert flags == ["shared", "has_files"]
    for cls in (SqliteStorage, PostgresStorage):
        assert all(isinstance(getattr(cls, flag), bool) for flag in flags), cls
    assert (SqliteStorage.shared, PostgresStorage.shared) == (False, True)
    assert (SqliteStorage.has_files, PostgresStorage.has_files) == (True, False)


def test_nothing_above_the_storage_imports_a_backend() -> None:
    pattern = re.compile(r"storage\.(sqlite|postgres)|from \.(sqlite|postgres)\b")
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("core", "tui")
        for path in (ROOT / folder).rglob("*.py")
        if "storage" not in path.relative_to(ROOT).parts and pattern.search(path.read_text())
    ]
    assert offenders == []
