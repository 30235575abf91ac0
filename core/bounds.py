"""The bounds every event meets when it enters, and the cut a long message gets when shown.

One hostile line must never jam an agent: a line is at most ``MAX_LINE_BYTES``, nested at
most ``MAX_DEPTH`` containers deep, holds valid Unicode only (no lone surrogate such as
``"\\ud800"``, which SQLite cannot store), and its ids are at most ``MAX_ID_CHARS``. A line
over a bound is refused with one sentence (the callers add file and line).

A message longer than ``MAX_MESSAGE_CHARS`` is stored whole but indexed and shown cut, with
``cut_marker``. The checks cost almost nothing on ordinary lines: the nesting depth is only
walked when the line holds more brackets than the bound, surrogates only looked for when the
line has a ``\\ud`` escape.

Every transcript or session store is opened with ``open_regular``: without blocking (a FIFO
put in a file's place has no writer, and a plain ``open`` would wait for one forever), and
read only when the open descriptor is a regular file.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from typing import IO, Any, BinaryIO, Iterator

from .errors import ValidationError

MAX_LINE_BYTES = 32 * 1024 * 1024  # one event, as JSON text (UTF-8)
MAX_STORE_BYTES = 256 * 1024 * 1024  # a whole sessions.json
MAX_DEPTH = 100  # nested objects and arrays, the outermost counting as 1
MAX_ID_CHARS = 512  # an entry's id, parentId, targetId
MAX_EXPANDED_BYTES = 1024 * 1024 * 1024  # a compressed transcript, once decompressed
MAX_EXPANDED_LINES = 500_000  # ... and its lines (a real rollout has tens of thousands)
MAX_READ_LINES = 1_000_000  # lines a sync holds from one file at once (the rest: next sync)
MAX_READ_BYTES = 1024 * 1024 * 1024  # ... and their bytes
MAX_MESSAGE_CHARS = 100_000  # text indexed and shown per message (and per text field)
_CUT_BACKOFF = 2048  # how far a cut moves back to end between two words

_BOM = "\ufeff"
# orjson (a dependency, docs/architecture.md) decodes a line ~3x faster than the standard
# library. It is only asked when it gives the very same value: it turns an integer of more
# than 64 bits into a float (the standard library keeps it whole), so a line with 19 digits
# in a row goes to the standard library, and so does everything orjson refuses (NaN, 1e400,
# a lone surrogate, bad JSON), whose answer or error message is then the standard one.
# (Every digit made a 0, then one substring search: a regular expression for 19 digits costs
# three times orjson's decoding.)
_ZERO_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19
_UNLOADED: Any = object()
# orjson.loads, loaded on first use (a search's start decodes no line); None where orjson is
# not installed (a dependency, but the library works without it)
_fast_loads: Any = _UNLOADED
_REFUSED = object()  # what _fast gives where the standard library must answer
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _size_text(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{size:,} bytes"


def decode_json(raw: str | bytes, max_bytes: int | None = MAX_LINE_BYTES) -> Any:
    """Decode one JSON text within the bounds; a ValidationError gives the reason.

    ``max_bytes=None`` skips the size bound (events stored before it existed are read whole
    and cut when indexed); depth and Unicode are always checked. The checks cost little next
    to ``json.loads`` (``benchmarks/bench_bounds.py``): two byte counts and one short regex
    scan; the structure is only walked when the line holds more brackets than the bound.
    """
    if isinstance(raw, bytes):
        if max_bytes is not None and len(raw) > max_bytes:
            raise ValidationError(too_long(len(raw), max_bytes))
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        value = _fast(raw)
        if value is _REFUSED:
            try:
                value = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as err:
                raise ValidationError(f"not valid UTF-8 (byte {err.start + 1})") from None
            except (RecursionError, ValueError) as err:
                raise _not_json(err) from None
        brackets = raw.count(b"[") + raw.count(b"{")
        escapes = _SURROGATE_ESCAPE_BYTES.search(raw) is not None
    else:
        text = raw[1:] if raw.startswith(_BOM) else raw
        if max_bytes is not None and len(text) * 4 > max_bytes:
            size = len(text.encode("utf-8", "surrogatepass"))
            if size > max_bytes:
                raise ValidationError(too_long(size, max_bytes))
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ValidationError("holds a lone surrogate, which is not valid Unicode") from None
        value = _fast(text)
        if value is _REFUSED:
            try:
                value = json.loads(text)
            except (RecursionError, ValueError) as err:
                raise _not_json(err) from None
        brackets = text.count("[") + text.count("{")
        escapes = _SURROGATE_ESCAPE.search(text) is not None
    if brackets > MAX_DEPTH and depth_over(value, MAX_DEPTH):
        raise ValidationError(f"nested deeper than {MAX_DEPTH} levels")
    if escapes and has_lone_surrogate(value):
        raise ValidationError("holds a lone surrogate (a \\ud800-\\udfff escape), not valid Unicode")
    return value


def _fast(raw: str | bytes) -> Any:
    """``raw`` decoded by orjson, or ``_REFUSED`` where the standard library must answer."""
    global _fast_loads
    if _fast_loads is _UNLOADED:
        try:
            from orjson import loads as _fast_loads
        except ImportError:  # pragma: no cover
            _fast_loads = None
    encoded = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass")
    if _fast_loads is None or _NINETEEN_DIGITS in encoded.translate(_ZERO_DIGITS):
        return _REFUSED
    try:
        return _fast_loads(raw)
    except ValueError:  # orjson.JSONDecodeError
        return _REFUSED


def _not_json(err: Exception) -> ValidationError:
    """The sentence for what ``json.loads`` refused: too deep for the interpreter's stack,
    bad JSON, or a number of more than 4300 digits."""
    if isinstance(err, RecursionError):
        return ValidationError(f"not valid JSON (nested deeper than {MAX_DEPTH} levels)")
    reason = err.msg if isinstance(err, json.JSONDecodeError) else "a number too long"
    return ValidationError(f"not valid JSON ({reason})")


def check_encoded(value: Any, text: str) -> None:
    """The bounds for an event built in memory (``value``) and serialized (``text``): what an
    importer converted must meet them as much as what it read."""
    if len(text) > MAX_LINE_BYTES // 4 and len(text.encode("utf-8")) > MAX_LINE_BYTES:
        raise ValidationError(too_long(len(text.encode("utf-8"))))
    if text.count("[") + text.count("{") > MAX_DEPTH and depth_over(value, MAX_DEPTH):
        raise ValidationError(f"nested deeper than {MAX_DEPTH} levels")


def depth_over(value: Any, limit: int) -> bool:
    """Whether ``value`` nests more than ``limit`` containers deep (iterative: no recursion)."""
    if not isinstance(value, (dict, list)):
        return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def has_lone_surrogate(value: Any) -> bool:
    """Whether any string (key or value) in ``value`` holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings = [item]
        elif isinstance(item, dict):
            strings = list(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for text in strings:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                return True
    return False


def no_nul(text: str) -> str:
    """A name taken from a transcript (a model, a tool, a call id, a path) as both backends
    store it: a NUL, which PostgreSQL's text refuses, as U+FFFD (a label's rule too)."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def check_id(name: str, value: Any) -> None:
    """An entry id (``id``, ``parentId``, ``targetId``) within ``MAX_ID_CHARS``."""
    if isinstance(value, str) and len(value) > MAX_ID_CHARS:
        raise ValidationError(
            f'"{name}" is {len(value):,} characters long; the limit is {MAX_ID_CHARS}'
        )


def cut_marker(left_out: int) -> str:
    return f" [… message cut: {left_out:,} more characters not shown]"


def cut_text(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` if it fits, else its first ``limit`` characters and the marker. The cut moves
    back to the last space or line break within ``_CUT_BACKOFF`` characters (or by that much
    when there is none), so no half-word, and no half of a secret, is left to redaction."""
    if len(text) <= limit:
        return text
    start = max(limit - _CUT_BACKOFF, limit // 2)
    window = text[start:limit]
    space = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
    end = start + space if space >= 0 else start
    return text[:end] + cut_marker(len(text) - end)


def read_lines(handle: IO[bytes], max_bytes: int = MAX_LINE_BYTES) -> Iterator[bytes | int]:
    """The lines of a binary stream, each read with a bounded buffer: a line over
    ``max_bytes`` is skipped without holding it in memory and given as its size (an int)."""
    while True:
        line = handle.readline(max_bytes + 1)
        if not line:
            return
        if len(line) <= max_bytes or line.endswith(b"\n"):
            yield line
            continue
        size = len(line)
        while not line.endswith(b"\n"):
            line = handle.readline(1024 * 1024)
            if not line:
                break
            size += len(line)
        yield size


def too_long(size: int, max_bytes: int = MAX_LINE_BYTES) -> str:
    return f"line is {_size_text(size)}; the limit is {_size_text(max_bytes)}"


class NotRegular(OSError):
    """What was opened is not a regular file (a FIFO, a device, a folder, a socket), or is a
    symbolic link where none is followed; ``strerror`` says which."""


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a folder"))


def describe_mode(mode: int) -> str:
    """What a file that is not a regular one is, from its ``st_mode``: "a FIFO", ..."""
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def open_regular(path: str | os.PathLike[str], follow: bool = True) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file: opened without
    blocking and checked on the open descriptor (``fstat``), so nothing swapped in after a
    scan can make the read wait or read something else. ``follow=False``: a symbolic link is
    refused too (``O_NOFOLLOW``). NotRegular (an OSError) names what it is instead."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if not follow and err.errno in (errno.ELOOP, errno.EMLINK) and os.path.islink(path):
            raise NotRegular(err.errno, "a symbolic link, not followed", str(path)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(errno.EINVAL, f"{describe_mode(mode)}, not a regular file",
                             str(path))
        os.set_blocking(fd, True)  # a regular file: reads never wait anyway
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
