"""The one helper process a big job may use on a second core (a backfill's row builder, a
big import's reader): one worker, spawned (never forked: the caller may run threads), and
gone when the process that started it is (killed, say, by the OOM killer or a supervisor
that signals only its main process; otherwise it would wait forever on a pipe).

No helper where it cannot run: one CPU for this process, inside a daemonic process (which
may not have children), or where the platform lacks what a pool needs (named semaphores).
The caller then does the work itself; every caller must be able to.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PARENT_CHECK_S = 0.5


def start_helper() -> ProcessPoolExecutor | None:
    """A one-worker pool (its process starts with the first task), or None."""
    if _usable_cpus() < 2 or multiprocessing.current_process().daemon:
        return None
    try:
        return ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_leave_with, initargs=(os.getpid(),),
        )
    except (OSError, ValueError, NotImplementedError):
        return None  # limits, a captured stderr, no semaphores: work in-process


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what a container or taskset leaves this process
    except (AttributeError, OSError):  # (not on every platform)
        return os.cpu_count() or 1


def _leave_with(parent: int) -> None:
    """In the helper: exit as soon as the process that started it is gone."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
