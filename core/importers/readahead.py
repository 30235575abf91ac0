"""Transcript files read in a helper process while this one stores them (a big import).

Reading a transcript (decoding its JSON lines within the entry bounds, validating its events)
is about a third of an import's time, and the importing process is the one that can store:
for a folder of at least ``READ_AHEAD_MIN_BYTES``, where a helper can run
(``helper_process``), the helper reads the files ahead of the storing, in chunks of about
``CHUNK_BYTES``, at most ``CHUNKS_AHEAD`` chunks ahead (docs/reconciliation.md#importing).
What a reader gives back crosses between the processes by pickle, so readers return only
what storing needs (``stored.as_imported``): unpickling whole events cost more than parsing
them. A file of ``READ_HERE_BYTES`` or more is read here when its turn comes: its pickled
copy would double the memory it takes, and reading it costs no more than waiting for it.

Without a helper (a smaller folder, one CPU, no process can start, or the helper dies), the
files are read here, in the same order, with the same result.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from ..helper_process import start_helper

T = TypeVar("T")

READ_AHEAD_MIN_BYTES = 16 << 20  # below this, starting the helper costs what it saves
CHUNK_BYTES = 2 << 20  # files sent to the helper together (one task per file is slower)
CHUNKS_AHEAD = 4  # read but not yet stored
READ_HERE_BYTES = 8 << 20  # a file this big is read here (see above)


def read_ahead(files: list[Path], read: Callable[[Path], T]) -> Iterator[tuple[Path, T]]:
    """``(file, read(file))`` for each file in order. ``read`` must not raise for what a
    file holds (it reports it) and, to run in the helper, must be picklable (a module-level
    function or a ``functools.partial`` of one). Close the iterator when stopping early
    (``contextlib.closing``): that stops the helper (after the chunk it is reading)."""
    sizes = [_size(file) for file in files]
    pool = start_helper() if sum(sizes) >= READ_AHEAD_MIN_BYTES else None
    if pool is None:
        yield from ((file, read(file)) for file in files)
        return
    chunks = iter(_chunks(files, sizes))
    inflight: deque[tuple[list[Path], Future | None]] = deque()
    helper: ProcessPoolExecutor | None = pool
    try:
        while True:
            while len(inflight) < CHUNKS_AHEAD and (next_ := next(chunks, None)) is not None:
                chunk, here = next_
                inflight.append((chunk, None if here else _submit(helper, read, chunk)))
            if not inflight:
                return
            chunk, future = inflight.popleft()
            try:
                results = future.result() if future is not None else read_all(read, chunk)
            except BrokenProcessPool:  # the helper died (killed, out of memory): read here
                results = read_all(read, chunk)
                inflight = deque((c, None) for c, _ in inflight)
                helper = None
            yield from zip(chunk, results)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def read_all(read: Callable[[Path], T], chunk: list[Path]) -> list[T]:
    """One chunk's reads (in the helper, or here)."""
    return [read(file) for file in chunk]


def _submit(helper: ProcessPoolExecutor | None, read: Callable[[Path], T], chunk: list[Path]
            ) -> Future | None:
    """The chunk's reads in the helper, or None: read here (reading here always replaces
    a helper that cannot take work)."""
    if helper is None:
        return None
    try:
        return helper.submit(read_all, read, chunk)
    except Exception:  # the process cannot start (limits, a daemon's child) or has died
        return None


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0  # its reader says why it cannot be read


def _chunks(files: list[Path], sizes: list[int]) -> list[tuple[list[Path], bool]]:
    """``(files, read here)`` in order: about ``CHUNK_BYTES`` of files to a chunk, and a file
    of ``READ_HERE_BYTES`` or more alone, to be read here."""
    chunks: list[tuple[list[Path], bool]] = []
    filling: list[Path] | None = None
    filled = 0
    for file, size in zip(files, sizes):
        if size >= READ_HERE_BYTES:
            chunks.append(([file], True))
            filling = None
            continue
        if filling is None or filled + size > CHUNK_BYTES:
            filling, filled = [], 0
            chunks.append((filling, False))
        filling.append(file)
        filled += size
    return chunks
