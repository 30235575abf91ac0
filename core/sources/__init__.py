"""Live sources (SPEC 14): the folders where agent tools write their transcripts, found on
their own or named in ``config.toml``; ``sync`` takes in what is new in them, ``watch`` keeps
doing so as they are written.

Modules, one job each: ``settings`` (the ``[[sources]]`` entries, read and edited),
``detect`` (which folders are sources), ``scan`` (their transcript files, stat'ed),
``reading`` (a file's new complete lines), ``sync`` (taking them in, each file in one
transaction with its state), ``deleted`` (what ``delete`` leaves in a file's state, so a
deleted session is not taken in again), ``claims`` (a session is fed by the file that
holds it), ``watch`` (following changes), ``listing`` (what ``backscroll
sources`` shows).
"""

from .detect import Source, all_sources, default_folders, remove_source
from .settings import add_source, configured_sources
from .sync import SyncReport, sync_sources

__all__ = [
    "Source",
    "SyncReport",
    "add_source",
    "all_sources",
    "configured_sources",
    "default_folders",
    "remove_source",
    "sync_sources",
]
