"""Qwen Code's doors in the format registry (``core/formats.py``). Its chats sit in
``chats`` folders under the Qwen Code home (``projects/*/chats``, ``tmp/*/chats``): those are
its session folders, so nothing else under the home is walked."""

from __future__ import annotations

from ..appended import follow_door
from ..format import Doors
from .importer import READER, chat_folders, import_qwen_code

DOORS = Doors(
    import_path=import_qwen_code,
    follow=follow_door(READER),
    transcript=lambda name: name.endswith(".jsonl"),
    session_folders=chat_folders,
)
