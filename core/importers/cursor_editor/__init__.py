"""Cursor's editor chats (composers): the ``cursorDiskKV`` table of the editor's global
``state.vscdb``, read through the SQLite source kind. Cursor is closed source: the shapes are
those its files show, as described publicly (docs/importers.md)."""
