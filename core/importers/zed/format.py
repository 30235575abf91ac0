"""Zed's doors in the format registry (``core/formats.py``): its agent threads are one
SQLite database, ``threads.db``, read from a watermark (the SQLite source kind)."""

from __future__ import annotations

from ..sqlite_source import database_doors
from .reading import read_new

DOORS = database_doors("threads.db", read_new, "Zed", "zed")
