"""Importers of other runtimes' transcripts (OpenClaw, Claude Code, Codex). Each stores
events without indexing them; reconciliation indexes them later (SPEC 3)."""

from .common import ImportReport

__all__ = ["ImportReport"]
