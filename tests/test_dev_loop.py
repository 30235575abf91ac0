"""The developers' fast loop (docs/development.md): ``--backend`` leaves out the other
backend's tests as deselected, never as skipped, and by default everything runs."""

from __future__ import annotations

import pytest

# Inner runs load no cache, no asyncio and not the snapshot plugin (whose end-of-session report would
# remove this session's temporary folder).
QUIET = ("-p", "no:cacheprovider", "-p", "no:textual-snapshot", "-p", "no:asyncio")

TOY_CONFTEST = """
from tests.conftest import backend, pytest_addoption, pytest_collection_modifyitems
from tests.conftest import pytest_generate_tests
import pytest

@pytest.fixture
def pg_url():
    raise AssertionError("a test needing the server ran")
"""

TOY_TESTS = """
import pytest

pytestmark = pytest.mark.backends

def test_on_each_backend(backend):
    assert backend in ("sqlite", "postgres")

@pytest.mark.sqlite_only
def test_the_embedded_file(backend):
    assert backend == "sqlite"

def test_needs_the_server(pg_url):
    pass

def test_no_storage():
    pass
"""


@pytest.fixture
def toy(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(TOY_CONFTEST)
    pytester.makepyfile(test_toy=TOY_TESTS)
    pytester.makeini("[pytest]\nmarkers =\n    backends: x\n    sqlite_only: x\n")
    return pytester


def test_sqlite_deselects_the_postgres_run_and_the_server_tests(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--backend", "sqlite", *QUIET)
    result.assert_outcomes(passed=3, deselected=2)


def test_postgres_deselects_only_the_sqlite_run_of_a_shared_test(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--backend", "postgres", "--co", "-q", *QUIET)
    kept = {line.split("::")[1] for line in result.outlines if "::" in line}
    assert kept == {"test_on_each_backend[postgres]", "test_the_embedded_file",
                    "test_needs_the_server", "test_no_storage"}
    assert "1 deselected" in result.stdout.str()


def test_by_default_every_backend_is_collected(toy: pytest.Pytester) -> None:
    result = toy.runpytest("--co", "-q", *QUIET)
    assert "5 tests collected" in result.stdout.str()
    assert "deselected" not in result.stdout.str()
