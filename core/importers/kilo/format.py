"""Kilo's doors in the format registry (``core/formats.py``): OpenCode's reader on
``kilo.db``, its sessions stored with source ``kilo``."""

from __future__ import annotations

from ..opencode.format import doors

DOORS = doors("kilo.db", "kilo", "Kilo", "kilo")
