"""Transcript files read in a helper process while this one stores them (a big import).

Reading a transcript (decoding its JSON lines within the entry bounds, validating its events)
is about a third of an import's time, and the writer is the one process that can store:
for a folder of at least ``READ_AHEAD_MIN_BYTES`` on a machine with a second core, a helper
process reads the files a few megabytes at a time, a few chunks ahead of the writer, and
the writer only stores (docs/performance.md). What a reader gives back crosses between the
processes by pickle, so readers return only what storing needs (``stored.as_imported``):
unpickling whole events cost more than parsing them.

A smaller folder, one core, a helper that cannot start or one that dies: the files are
read here, in the same order, with the same result.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")

READ_AHEAD_MIN_BYTES = 16 << 20  # below this, starting the helper costs what it saves
CHUNK_BYTES = 2 << 20  # files sent to the helper together (one task per file is slower)
CHUNKS_AHEAD = 4  # read but not yet stored: bounds the memory a fast reader can fill


def read_ahead(files: list[Path], read: Callable[[Path], T]) -> Iterator[tuple[Path, T]]:
    """``(file, read(file))`` for each file in order. ``read`` must not raise for what a
    file holds (it reports it) and, to run in the helper, must be picklable (a module-level
    function or a ``functools.partial`` of one). Close the iterator when stopping early
    (``contextlib.closing``): that stops the helper."""
    sizes = [_size(file) for file in files]
    pool = _helper() if sum(sizes) >= READ_AHEAD_MIN_BYTES else None
    if pool is None:
        for file in files:
            yield file, read(file)
        return
    chunks = iter(_chunks(files, sizes))
    inflight: deque[tuple[list[Path], Future | None]] = deque()
    try:
        while True:
            while len(inflight) < CHUNKS_AHEAD and (chunk := next(chunks, None)) is not None:
                future = None
                if pool is not None:
                    try:
                        future = pool.submit(read_all, read, chunk)
                    except (OSError, RuntimeError):  # the helper cannot start (limits), or died
                        pool = _stop(pool)
                inflight.append((chunk, future))
            if not inflight:
                return
            chunk, future = inflight.popleft()
            try:
                results = future.result() if future is not None else read_all(read, chunk)
            except BrokenProcessPool:  # the helper died (killed, out of memory): read here
                pool = _stop(pool)
                inflight = deque((c, None) for c, _ in inflight)
                results = read_all(read, chunk)
            yield from zip(chunk, results)
    finally:
        _stop(pool)


def read_all(read: Callable[[Path], T], chunk: list[Path]) -> list[T]:
    """One chunk's reads (in the helper, or here once it is gone)."""
    return [read(file) for file in chunk]


def _stop(pool: ProcessPoolExecutor | None) -> None:
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


def _helper() -> ProcessPoolExecutor | None:
    if (os.cpu_count() or 1) < 2:
        return None
    try:
        context = multiprocessing.get_context("spawn")  # never fork a threaded process
        return ProcessPoolExecutor(max_workers=1, mp_context=context)
    except (OSError, ValueError):
        return None  # no helper process here (limits): read in-process


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0  # its reader says why it cannot be read


def _chunks(files: list[Path], sizes: list[int]) -> list[list[Path]]:
    chunks: list[list[Path]] = [[]]
    filled = 0
    for file, size in zip(files, sizes):
        if chunks[-1] and filled + size > CHUNK_BYTES:
            chunks.append([])
            filled = 0
        chunks[-1].append(file)
        filled += size
    return [chunk for chunk in chunks if chunk]
