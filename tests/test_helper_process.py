"""The helper process of a big job (core/helper_process.py): none where it cannot run, and
gone when the process that started it is."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from backscroll.core import helper_process


def test_no_helper_on_one_cpu_or_inside_a_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(helper_process, "_usable_cpus", lambda: 1)
    assert helper_process.start_helper() is None
    monkeypatch.setattr(helper_process, "_usable_cpus", lambda: 2)

    class Daemon:
        daemon = True

    monkeypatch.setattr(helper_process.multiprocessing, "current_process", Daemon)
    assert helper_process.start_helper() is None


def test_no_helper_where_a_pool_cannot_be_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(helper_process, "_usable_cpus", lambda: 2)

    def no_semaphores(*args, **kwargs):
        raise NotImplementedError("This Python lacks multiprocessing.synchronize")

    monkeypatch.setattr(helper_process, "ProcessPoolExecutor", no_semaphores)
    assert helper_process.start_helper() is None


PARENT = """
import os, sys, time
from backscroll.core import helper_process
helper_process._usable_cpus = lambda: 2
pool = helper_process.start_helper()
print(pool.submit(os.getpid).result(), flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc")
def test_the_helper_leaves_when_its_parent_is_killed() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        helper = int(parent.stdout.readline())
        assert _alive(helper)
        parent.send_signal(signal.SIGKILL)  # no cleanup of its own: only the helper's watch
        parent.wait()
        deadline = time.monotonic() + 20
        while _alive(helper) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(helper)
    finally:
        parent.kill()
        parent.wait()
