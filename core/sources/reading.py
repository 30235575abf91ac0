"""Reading what is new in one transcript file, given what the last sync took from it.

A file is read on from ``done_bytes`` (just after the last complete line taken in) when it is
the same file grown: not shorter than that, and its first few KB and the bytes just before
that offset hash as they did. Otherwise (a first read, a shorter or rewritten file, a format
that needs the whole file) it is read from the start, and what is stored already is
recognised by id downstream. Only complete lines are returned: a half-written last line waits
for the next read. Every line is read with a bounded buffer (``bounds.MAX_LINE_BYTES``): a
longer one is named once and skipped, never held, and a position inside it is kept (see
``_complete_lines``); one of NUL bytes only (a sparse or zero-filled file) is named as
holding no data. One read holds at most ``bounds.MAX_READ_LINES`` lines (the caller
reads on from where it stopped). ``.zst`` files are read whole each time they change,
decompressed as a stream (the optional ``zstandard``) up to ``bounds.MAX_EXPANDED_BYTES``.
Files are opened with ``bounds.open_regular``: never a FIFO or a device, never through a link.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .. import bounds
from ..bounds import open_regular
from ..errors import BackscrollError
from ..storage import FileState

HEAD_BYTES = 4096
TAIL_BYTES = 1024
SKIP_BLOCK = 1024 * 1024  # a line over the bound is read on in blocks of this, none kept


class ReadProblem(BackscrollError):
    """The file cannot be taken in this time (one sentence naming it); the next sync tries
    again: it shrank while being read, or it is compressed and zstd support is missing."""


@dataclass(frozen=True)
class Chunk:
    """The complete lines read (numbered as in the file), and the file's new marks."""

    lines: list[tuple[int, bytes | int]]  # a line over the bound: its size (the follower says)
    from_start: bool
    stat: os.stat_result
    done_bytes: int
    done_lines: int
    head_hash: str
    tail_hash: str
    problems: list[str] = field(default_factory=list)  # one sentence each, naming the file
    partial: bool = False  # complete lines are left for the next read (it stopped at a bound)


def read_new(path: Path, before: FileState | None, from_start: bool = False,
             resume_long: bool = False, whole: bool = False) -> Chunk:
    """The lines added since ``before`` (all of them when it is None, when the file is not
    the one read then, or with ``from_start``). ``resume_long``: a position kept inside a
    line over the bound is read on from even with ``from_start`` (the caller asks for the
    start only because nothing before it was a transcript's). ``whole``: no bound on the
    lines of one read (a follower that needs the whole file to go on; each line is still
    bounded). OSError when it cannot be read (NotRegular: a FIFO, a device, a link... in the
    place of the transcript found)."""
    with open_regular(path, follow=False) as handle:
        st = os.fstat(handle.fileno())
        if path.name.endswith(".zst"):
            return _read_compressed(handle, path, st)
        continues = before is not None and _continues(handle, st, before)
        inside = continues and resume_long and _inside_line(handle, before)
        start = (from_start and not inside) or not continues
        begin = 0 if start or before is None else before.done_bytes
        first = 1 if start or before is None else before.done_lines + 1
        problems: list[str] = []
        lines, done, count, partial = _complete_lines(handle, path, begin, st.st_size, first,
                                                      whole, problems)
        return Chunk(
            lines=lines,
            from_start=start,
            stat=st,
            done_bytes=done,
            done_lines=first - 1 + count,
            head_hash=_hash(_read_at(handle, 0, min(HEAD_BYTES, done))),
            tail_hash=_hash(_before_offset(handle, done)),
            problems=problems,
            partial=partial,
        )


def _complete_lines(handle: BinaryIO, path: Path, begin: int, size: int, first: int,
                    whole: bool = False, problems: list[str] | None = None,
                    ) -> tuple[list[tuple[int, bytes | int]], int, int, bool]:
    """The complete lines between ``begin`` and ``size`` (blank ones left out), where they
    end, and how many there were. Each line is read with a bounded buffer: a line over
    ``MAX_LINE_BYTES`` is given as its size (the follower names it) and never held. One whose
    end is not written yet is named at once and the position kept inside it: ``begin`` not
    just after a line break means the next read goes on skipping it, silently. One read
    holds at most ``MAX_READ_LINES`` lines and about ``MAX_READ_BYTES``: a file of millions
    of tiny lines is taken in over several syncs (the last value: it stopped there). A line
    over the bound of NUL bytes only (holes) is named in ``problems`` instead (what it is)."""
    limit = bounds.MAX_LINE_BYTES
    lines: list[tuple[int, bytes | int]] = []
    pos, count = begin, 0
    if begin and _read_at(handle, begin - 1, 1) != b"\n":  # inside a line already named
        handle.seek(begin)
        skipped, ended, _data = _skip_line(handle, path, size - begin)
        pos += skipped
        if not ended:
            return lines, pos, count, False
        count += 1
    handle.seek(pos)
    held = 0
    while pos < size:
        if not whole and (len(lines) >= bounds.MAX_READ_LINES or held >= bounds.MAX_READ_BYTES):
            return lines, pos, count, True  # enough for one read: the next sync reads on
        line = handle.readline(min(limit + 1, size - pos))
        if not line:
            raise ReadProblem(f"{path}: changed while being read; read again next sync")
        if line.endswith(b"\n"):
            pos += len(line)
            count += 1
            if line.strip():
                lines.append((first - 1 + count, line[:-1]))
                held += len(line)
            continue
        if len(line) <= limit:
            break  # a last line still being written: the next read takes it whole
        skipped, ended, data = _skip_line(handle, path, size - pos - len(line))
        if data or line.strip(b"\0") or problems is None:
            lines.append((first + count, len(line) + skipped))
        else:
            problems.append(_no_data(path, first + count, pos == 0 and not count, ended,
                                     len(line) + skipped))
        pos += len(line) + skipped
        if not ended:
            break  # named now; the next reads skip the rest of it without naming it again
        count += 1
    return lines, pos, count, False


def _no_data(path: Path, lineno: int, first: bool, ended: bool, size: int) -> str:
    """The sentence naming a line over the bound of NUL bytes only (holes read as zeros)."""
    if first and not ended:
        return (f"{path}: holds no data, only NUL bytes ({_size(size)}: a sparse or "
                "zero-filled file); skipped")
    return f"{path}:{lineno}: {_size(size)} of NUL bytes only, no data; skipped"


def _skip_line(handle: BinaryIO, path: Path, most: int) -> tuple[int, bool, bool]:
    """Read on (bounded blocks, nothing kept) to just after the next line break, at most
    ``most`` bytes: how many were read, whether the line ended, and whether anything but
    NUL bytes (and holes) was read."""
    skipped, data = 0, False
    while skipped < most:
        skipped += _hole(handle, most - skipped)
        if skipped >= most:
            break
        block = handle.readline(min(SKIP_BLOCK, most - skipped))
        if not block:
            raise ReadProblem(f"{path}: changed while being read; read again next sync")
        skipped += len(block)
        data = data or bool(block.rstrip(b"\n").strip(b"\0"))
        if block.endswith(b"\n"):
            return skipped, True, data
    return skipped, False, data


def _hole(handle: BinaryIO, most: int) -> int:
    """Seek over the hole of a sparse file at the position (zeros: no line break), at most
    ``most`` bytes; how far. 0 where the system cannot tell holes (``SEEK_DATA``)."""
    where = handle.tell()
    try:
        data = os.lseek(handle.fileno(), where, os.SEEK_DATA)
    except (AttributeError, OSError) as err:
        if getattr(err, "errno", None) != errno.ENXIO:
            handle.seek(where)
            return 0
        data = where + most  # no data after the position: a hole to the end
    hole = max(0, min(data - where, most))
    handle.seek(where + hole)
    return hole


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


def _inside_line(handle: BinaryIO, before: FileState | None) -> bool:
    """The last read stopped inside a line over the bound (not just after a line break)."""
    done = before.done_bytes if before is not None else 0
    return done > 0 and _read_at(handle, done - 1, 1) != b"\n"


def _before_offset(handle: BinaryIO, done: int) -> bytes:
    size = min(TAIL_BYTES, done)
    return _read_at(handle, done - size, size)


def _read_at(handle: BinaryIO, offset: int, size: int) -> bytes:
    handle.seek(offset)
    return handle.read(size)


def _hash(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _read_compressed(handle: BinaryIO, path: Path, st: os.stat_result) -> Chunk:
    """A ``.zst`` file, decompressed as a stream (lines bounded as in a plain file, at most
    ``MAX_EXPANDED_BYTES`` and ``MAX_EXPANDED_LINES`` in all: a small file that expands
    without end is cut there)."""
    try:
        import zstandard
    except ImportError:
        raise ReadProblem(
            f"{path}: a zstd-compressed transcript; install backscroll[zstd] to read it"
        ) from None
    lines: list[tuple[int, bytes | int]] = []
    count = 0
    try:
        with zstandard.ZstdDecompressor().stream_reader(handle, closefd=False) as stream:
            reader = io.BufferedReader(_Capped(stream, bounds.MAX_EXPANDED_BYTES), SKIP_BLOCK)
            for count, line in enumerate(bounds.read_lines(reader, bounds.MAX_LINE_BYTES), 1):
                if isinstance(line, int) or line.strip():
                    lines.append((count, line.rstrip(b"\n") if isinstance(line, bytes) else line))
                if len(lines) >= bounds.MAX_EXPANDED_LINES:
                    break
            capped = reader.raw.capped or len(lines) >= bounds.MAX_EXPANDED_LINES
    except zstandard.ZstdError as err:
        raise ReadProblem(f"{path}: not readable as zstd ({err})") from None
    problems = [f"{path}: expands to more than {_mib(bounds.MAX_EXPANDED_BYTES)} or "
                f"{bounds.MAX_EXPANDED_LINES:,} lines decompressed; the rest of it is not read"
                ] if capped else []
    if capped:  # that sentence names the file once: a line over the bound in it goes unsaid
        lines = [(n, line) for n, line in lines if not isinstance(line, int)]
    size = st.st_size
    return Chunk(lines, True, st, size, count, _hash(_read_at(handle, 0, min(HEAD_BYTES, size))),
                 _hash(_before_offset(handle, size)), problems)


def _size(size: int) -> str:
    return f"{size / (1 << 30):,.1f} GB" if size >= 1 << 30 else f"{size / (1 << 20):,.1f} MB"


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):,.0f} MB"


class _Capped(io.RawIOBase):
    """The first ``most`` bytes of a stream; ``capped`` once more were there."""

    def __init__(self, stream: Any, most: int) -> None:
        self.stream, self.left, self.capped = stream, most, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.left <= 0:
            self.capped = self.capped or bool(self.stream.read(1))
            return 0
        data = self.stream.read(min(len(buffer), self.left))
        buffer[: len(data)] = data
        self.left -= len(data)
        return len(data)
