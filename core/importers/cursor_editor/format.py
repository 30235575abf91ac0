"""Cursor's editor chats in the format registry (``core/formats.py``): the editor's global
``state.vscdb``, read from a watermark (the SQLite source kind)."""

from __future__ import annotations

from ..sqlite_source import database_doors
from .reading import read_new

DOORS = database_doors("state.vscdb", read_new, "Cursor editor", "cursor")
