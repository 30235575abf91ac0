"""Import GitHub Copilot CLI sessions: ``~/.copilot/session-state/<id>/events.jsonl`` (an
append-only event log) and the older ``~/.copilot/history-session-state/<id>.json``. The
CLI is closed source; what is indexed and what is not is in ``convert.py`` and
docs/importers.md. Key ``agent:<id>:copilot:<sessionId>``; label ``<project>: <first
prompt>``; the project folder is ``session.start``'s ``context.cwd``."""

from .importer import DEFAULT_AGENT, SOURCE, import_copilot

__all__ = ["DEFAULT_AGENT", "SOURCE", "import_copilot"]
