from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator

import pytest

from backscroll.core import formats
from backscroll.core.state import StateDir

pytest_plugins = ("pytester",)  # test_dev_loop.py runs pytest on a toy suite

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
if not DATA.is_dir():  # CI lays shared/ beside the clone
    DATA = Path(os.environ.get("BACKSCROLL_TEST_DATA", "/work/shared/data"))

# Modules marked ``backends`` run each test that uses ``state`` (or ``backend`` /
# ``fresh_state``) once per storage backend; ``sqlite_only`` tests (raw file checks, the
# SQLite connection, WAL) run on the embedded backend alone.
BACKENDS = ("sqlite", "postgres")
PG_FIXTURES = {"pg_cluster", "pg_url"}  # what a test asks for when it needs the server


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend", choices=(*BACKENDS, "all"), default="all",
        help="run the storage tests on one backend only: 'sqlite' also leaves out every test "
             "that needs the PostgreSQL server; 'postgres' leaves out the SQLite run of the "
             "tests that take both (default: all, as CI does)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--backend``: deselect (not skip) the tests of the other backend, so the summary
    counts them as left out on purpose."""
    chosen = config.getoption("--backend")
    if chosen == "all":
        return
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        param = callspec.params.get("backend") if callspec else None
        if param is not None:
            other = param != chosen
        else:  # not parametrized: only a test that needs the server belongs to one backend
            other = chosen == "sqlite" and bool(PG_FIXTURES & set(getattr(item, "fixturenames", ())))
        (dropped if other else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" not in metafunc.fixturenames:
        return
    node = metafunc.definition
    if node.get_closest_marker("backends") and not node.get_closest_marker("sqlite_only"):
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the real state dir, config, database or clock-dependent caches."""
    monkeypatch.setenv("BACKSCROLL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("BACKSCROLL_DEBUG", raising=False)
    monkeypatch.delenv("BACKSCROLL_DATABASE_URL", raising=False)
    # The agents' own folders (the live sources): an empty home, never the real one.
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for fmt in formats.known():
        for name in (fmt.home_env, fmt.folder_env):
            if name:
                monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator:
    """A throwaway PostgreSQL cluster for the session, and a template database holding the
    current schema (each test copies it: ``pg_url``)."""
    from backscroll.core.storage.postgres import PostgresStorage, driver

    from .pgcluster import Cluster, missing_binaries

    reason = missing_binaries()
    if reason:
        pytest.skip(reason)
    cluster = Cluster.create()
    try:
        cluster.template = cluster.new_database()
        template_url = cluster.url(cluster.template)
        PostgresStorage(template_url)._migrate()
        driver.close_pools(template_url)
        yield cluster
    finally:
        driver.close_all()
        cluster.destroy()


@pytest.fixture
def pg_url(pg_cluster) -> Iterator[str]:
    """A fresh database with the current schema, dropped after the test."""
    from backscroll.core.storage.postgres import driver

    name = pg_cluster.new_database(template=pg_cluster.template)
    url = pg_cluster.url(name)
    yield url
    driver.close_pools(url)
    pg_cluster.drop_database(name)


@pytest.fixture
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The storage backend of this test run; with PostgreSQL every ``StateDir`` the test (or
    a process it starts) makes uses a fresh database, through $BACKSCROLL_DATABASE_URL."""
    name = getattr(request, "param", "sqlite")
    if name == "postgres":
        monkeypatch.setenv("BACKSCROLL_DATABASE_URL", request.getfixturevalue("pg_url"))
    return name


@pytest.fixture
def state(tmp_path: Path, backend: str) -> StateDir:
    return StateDir(tmp_path / "state")


@pytest.fixture
def fresh_state(backend: str, tmp_path_factory: pytest.TempPathFactory,
                request: pytest.FixtureRequest) -> Iterator[Callable[[], StateDir]]:
    """Makes empty states on the test's backend (with PostgreSQL, the test's database emptied:
    much faster than a new database per hypothesis example)."""

    def make() -> StateDir:
        path = tmp_path_factory.mktemp("state")
        if backend != "postgres":
            return StateDir(path, database_url="")
        import psycopg

        url = request.getfixturevalue("pg_url")
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DELETE FROM backscroll.agents")  # everything else cascades
        return StateDir(path, database_url=url)

    yield make


@pytest.fixture
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip("shared test data not found")
    return DATA
