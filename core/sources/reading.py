"""Reading what is new in one transcript file, given what the last sync took from it.

A file is read on from ``done_bytes`` (just after the last complete line taken in) when it is
the same file grown: not shorter than that, and its first few KB and the bytes just before
that offset hash as they did. Otherwise (a first read, a shorter or rewritten file, a format
that needs the whole file) it is read from the start, and what is stored already is
recognised by id downstream. Only complete lines are returned: a half-written last line waits
for the next read. ``.zst`` files are read whole, decompressed (the optional ``zstandard``).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import BackscrollError
from ..storage import FileState

HEAD_BYTES = 4096
TAIL_BYTES = 1024


class ReadProblem(BackscrollError):
    """The file cannot be taken in this time (one sentence naming it); the next sync tries
    again: it shrank while being read, or it is compressed and zstd support is missing."""


@dataclass(frozen=True)
class Chunk:
    """The complete lines read (numbered as in the file), and the file's new marks."""

    lines: list[tuple[int, bytes]]
    from_start: bool
    stat: os.stat_result
    done_bytes: int
    done_lines: int
    head_hash: str
    tail_hash: str


def read_new(path: Path, before: FileState | None, from_start: bool = False) -> Chunk:
    """The lines added since ``before`` (all of them when it is None, when the file is not
    the one read then, or with ``from_start``). OSError when it cannot be read."""
    with path.open("rb") as handle:
        st = os.fstat(handle.fileno())
        if path.name.endswith(".zst"):
            return _read_compressed(handle, st)
        start = from_start or before is None or not _continues(handle, st, before)
        begin = 0 if start or before is None else before.done_bytes
        handle.seek(begin)
        wanted = st.st_size - begin
        data = handle.read(wanted)
        if len(data) < wanted:
            raise ReadProblem(f"{path}: changed while being read; read again next sync")
        cut = data.rfind(b"\n") + 1
        lines = data[:cut].split(b"\n")[:-1]
        first = 1 if start or before is None else before.done_lines + 1
        done = begin + cut
        return Chunk(
            lines=list(enumerate(lines, start=first)),
            from_start=start,
            stat=st,
            done_bytes=done,
            done_lines=first - 1 + len(lines),
            head_hash=_hash(_read_at(handle, 0, min(HEAD_BYTES, done))),
            tail_hash=_hash(_before_offset(handle, done)),
        )


def unchanged(before: FileState | None, st: os.stat_result) -> bool:
    """The file is as the last sync left it (same identity, size and time): not read."""
    return (
        before is not None
        and before.missing_since is None
        and (before.device, before.inode, before.size, before.mtime_ns)
        == (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    )


def _continues(handle: BinaryIO, st: os.stat_result, before: FileState) -> bool:
    """The open file holds what ``before`` took from it: read on from its offset."""
    done = before.done_bytes
    if done == 0 or st.st_size < done:
        return False
    head = _read_at(handle, 0, min(HEAD_BYTES, done))
    return (_hash(head) == before.head_hash
            and _hash(_before_offset(handle, done)) == before.tail_hash)


def _before_offset(handle: BinaryIO, done: int) -> bytes:
    size = min(TAIL_BYTES, done)
    return _read_at(handle, done - size, size)


def _read_at(handle: BinaryIO, offset: int, size: int) -> bytes:
    handle.seek(offset)
    return handle.read(size)


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _read_compressed(handle: BinaryIO, st: os.stat_result) -> Chunk:
    try:
        import zstandard
    except ImportError:
        raise ReadProblem(
            f"{handle.name}: a zstd-compressed transcript; install backscroll[zstd] to read it"
        ) from None
    raw = handle.read()
    try:
        data = zstandard.ZstdDecompressor().stream_reader(raw).read()
    except zstandard.ZstdError as err:
        raise ReadProblem(f"{handle.name}: not readable as zstd ({err})") from None
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    return Chunk(list(enumerate(lines, start=1)), True, st, len(raw), len(lines),
                 _hash(raw[:HEAD_BYTES]), _hash(raw[-TAIL_BYTES:]))
