"""Headless Chromium from Debian's packages, for the tests and scripts that open an HTML export
in a real browser: found on the PATH, else installed with apt-get when this runs as root
where apt-get is (CI runs as root on a machine without it); otherwise ``None``, with why."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

NAMES = ("chromium", "chromium-browser")
# No background traffic (the network is closed: Chromium would try at every start), no GPU,
# no sandbox (root), a profile of its own.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars")
INSTALL_TIMEOUT_S = 1200


def _found() -> str | None:
    return next((path for name in NAMES if (path := shutil.which(name))), None)


def find_or_install() -> tuple[str | None, str]:
    """(the browser's path, "") or (None, why it is not there)."""
    found = _found()
    if found:
        return found, ""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None, ("Chromium is not installed and this is not root with apt-get to install "
                      "it: run `apt-get install chromium` (Debian) to run this test")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    for step in ([], ["apt-get", "update", "-q"]):  # the package lists only when needed
        if step:
            subprocess.run(step, env=env, capture_output=True, timeout=INSTALL_TIMEOUT_S)
        done = subprocess.run(install, env=env, capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT_S)
        if done.returncode == 0 and _found():
            return _found(), ""
    tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
    return None, f"apt-get could not install chromium: {tail[0]}"


def run(browser: str, profile: Path, *args: str, timeout: float = 120) -> str:
    """Chromium's standard output for ``args`` (its own log lines go to standard error)."""
    done = subprocess.run([browser, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "HOME": str(profile)})
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout
