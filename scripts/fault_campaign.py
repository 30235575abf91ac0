"""The long fault campaign (not run in CI): hundreds of SIGKILLs at random points of each
operation, with the checks of ``tests/faults.py`` after each; prints counts.

    .venv/bin/python scripts/fault_campaign.py [--kills 100] [--only append,delete] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package

from tests.faults import OPERATIONS, run_campaign  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=100, help="SIGKILLs per operation")
    parser.add_argument("--only", help=f"comma-separated, of {', '.join(OPERATIONS)}")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    operations = args.only.split(",") if args.only else list(OPERATIONS)

    def progress(name: str, n: int, problems: list[str]) -> None:
        if problems or (n + 1) % 25 == 0:
            print(f"  {name}: {n + 1} kills{'; FAILED: ' + problems[0] if problems else ''}",
                  flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        tally = run_campaign(Path(tmp), args.kills, operations, args.seed, on_round=progress)
    print(f"\n{'operation':<10} {'kills':>6} {'mid-run':>8} {'failed':>7}")
    for name in operations:
        kills, first = tally.kills[name], tally.finished_first[name]
        failed = tally.failed_rounds[name]
        print(f"{name:<10} {kills:>6} {kills - first:>8} {failed:>7}")
    total = sum(tally.kills.values())
    print(f"\n{total} kills in {tally.seconds:.0f} s; 'mid-run': the child had not finished "
          f"when it was killed; failed kills: {sum(tally.failed_rounds.values())}")
    for name, problems in tally.failures.items():
        for problem in problems[:10]:
            print(f"  {name}: {problem}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
