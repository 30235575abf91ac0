"""Private by default: the state dir and every folder below it are 0700, databases (and the
WAL and SHM files SQLite gives the same mode), exports and caches 0600, whatever the umask.

The event log holds unredacted text, so a loose mode would expose secrets. Folders and files
backscroll makes are created private and set so explicitly (a umask can only take bits away,
and ``umask 0777`` would leave them unusable). Folders and files it finds looser than that:

- ``agents/``, ``agents/<id>/`` and the databases are backscroll's own: a writer tightens them
  and says so once; a reader, which never changes a file, only says so once;
- the state dir itself may be a folder the user chose (``--state-dir ~/notes``): it is never
  changed, a warning says once how to make it private.

A warning goes to ``warning_sink`` (stderr by default; the browser shows a notification).
"""

from __future__ import annotations

import os
import stat
import sys
import threading
from pathlib import Path
from typing import Callable

from .errors import ValidationError

FOLDER_MODE = 0o700
FILE_MODE = 0o600
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def _print_warning(message: str) -> None:
    print(f"backscroll: warning: {message}", file=sys.stderr)


warning_sink: Callable[[str], None] = _print_warning
_checked: set[tuple[str, bool]] = set()  # (path, tighten) already looked at by this process
_lock = threading.Lock()


def set_warning_sink(sink: Callable[[str], None] | None) -> None:
    """Where warnings go (None: back to stderr)."""
    global warning_sink
    warning_sink = sink or _print_warning


def _first_time(path: Path, tighten: bool) -> bool:
    """Whether ``path`` is looked at for the first time (a writer still looks at what a
    reader has seen: it may tighten it)."""
    with _lock:
        if (str(path), tighten) in _checked:
            return False
        _checked.add((str(path), tighten))
        return True


def _loose(path: Path, wanted: int) -> int | None:
    """The mode of ``path`` when others (group or world) may use it more than ``wanted``
    allows, else None (also when it does not exist)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    return mode if mode & ~wanted & 0o077 else None


def require_state_folder(path: Path) -> None:
    """One sentence (bad input) when the state dir given is a file, not a folder."""
    if path.exists() and not path.is_dir():
        raise ValidationError(
            f"{path} is a file, not a folder: choose a state dir with --state-dir or "
            "BACKSCROLL_STATE_DIR"
        )


def make_dir(path: Path, tighten: bool) -> None:
    """Create ``path`` 0700 (its parents, not backscroll's, as the umask says) or check an
    existing one: a looser one is tightened when ``tighten`` (backscroll's own folders), else
    warned about once."""
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=FOLDER_MODE, exist_ok=True)
        os.chmod(path, FOLDER_MODE)
        return
    check(path, FOLDER_MODE, tighten)


def make_file(path: Path) -> None:
    """Create an empty ``path`` 0600 if missing; tighten an existing looser one."""
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, FILE_MODE))
        os.chmod(path, FILE_MODE)
        return
    check(path, FILE_MODE, tighten=True)


def write_file(path: Path, text: str) -> None:
    """Write a small file backscroll owns (a marker, a cache note) with mode 0600."""
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), FILE_MODE)
        handle.write(text)


def check(path: Path, wanted: int, tighten: bool) -> None:
    """Say once when ``path`` is looser than ``wanted``; tighten it when allowed to."""
    if not _first_time(path, tighten):
        return
    mode = _loose(path, wanted)
    if mode is None:
        return
    kind = "folder" if path.is_dir() else "file"
    if tighten:
        try:
            os.chmod(path, wanted)
        except OSError as err:
            warning_sink(
                f"{path} is readable by others (mode {mode:04o}) and could not be made "
                f"{wanted:04o}: {err.strerror or err}"
            )
            return
        warning_sink(f"{path} was readable by others (mode {mode:04o}); it is {wanted:04o} now")
    elif kind == "folder":
        warning_sink(
            f"{path} is readable by others (mode {mode:04o}) and holds private conversations; "
            f"make it private with: chmod 700 {path}"
        )
    else:
        warning_sink(f"{path} is readable by others (mode {mode:04o}); run: chmod 600 {path}")


def check_database(path: Path, tighten: bool) -> None:
    """A database and its SQLite side files (WAL, SHM, journal)."""
    for file in (path, *(path.with_name(path.name + s) for s in SQLITE_SIDE_FILES)):
        if file.exists():
            check(file, FILE_MODE, tighten)
