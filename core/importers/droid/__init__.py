"""Import Factory Droid sessions: ``~/.factory/sessions/<workspace slug>/<session id>.jsonl``
beside ``<session id>.settings.json``.

Droid is closed source: the shape comes from its files and other readers (agent_formats.md).
A file opens with a ``session_start`` line (``id``, ``title``, ``cwd``, …), then ``message``
lines in Claude Code's shape: ``{"type": "message", "id", "parentId"?, "timestamp",
"message": {"role": "user" | "assistant", "content": [text, thinking, tool_use, tool_result
blocks]}}``. Decisions (also in docs/importers.md):

- Entries keep the line's ``id`` (derived from the session id and line number when a line has
  none) and its ``parentId`` (else the entry before it).
- Indexed: user and assistant ``text`` blocks. Droid opens a user turn with an injected
  ``<system-reminder>…</system-reminder>`` block: not the user's words, so it is split off
  into a context entry (kept, shown with history, never indexed) and only what follows it is
  the user's message. ``tool_use`` blocks are tool calls, ``tool_result`` blocks tool
  output messages, ``thinking`` blocks reasoning: kept, not indexed. Other line types
  (todo state, …) are kept as custom entries.
- Label: the session's ``title`` when it has one, else ``<project>: <first prompt>``; the
  model comes from the settings file beside it (``model``) when present.
"""

from .importer import DEFAULT_AGENT, READER, import_droid

__all__ = ["DEFAULT_AGENT", "READER", "import_droid"]
