"""Factory Droid's doors in the format registry (``core/formats.py``)."""

from __future__ import annotations

from ..appended import follow_door
from ..format import Doors
from .importer import READER, import_droid

DOORS = Doors(
    import_path=import_droid,
    follow=follow_door(READER),
    transcript=lambda name: name.endswith(".jsonl"),
)
