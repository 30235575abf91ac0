"""The fault campaign in CI: each operation (append, import, reconciliation, delete) killed
with SIGKILL at random points; after each kill nothing is half-written, lost or doubled
(``tests/faults.py`` says exactly what is checked). ``scripts/fault_campaign.py`` runs the
same campaign with hundreds of kills."""

from __future__ import annotations

from pathlib import Path

from .faults import OPERATIONS, run_campaign

KILLS_PER_OPERATION = 3


def test_sigkill_at_random_points_of_every_operation_loses_and_doubles_nothing(
    tmp_path: Path,
) -> None:
    tally = run_campaign(tmp_path, KILLS_PER_OPERATION, seed=20261202)
    assert tally.failures == {}
    assert dict(tally.kills) == {name: KILLS_PER_OPERATION for name in OPERATIONS}
