"""Import Gemini CLI chats: ``~/.gemini/tmp/<project hash or slug>/chats/session-*.json``
(older, the whole conversation rewritten at each change) and ``.jsonl`` (newer, an upsert
log), with subagents' chats under ``chats/<parent session id>/<id>.jsonl``
(google-gemini/gemini-cli ``packages/core/src/services/chatRecordingService.ts``,
``chatRecordingTypes.ts``). Decisions (also in docs/importers.md):

- Key ``agent:<id>:gemini:<sessionId>``; a subagent's chat is spawned by its parent's key.
- Only ``user`` and ``gemini`` text is indexed: a user message is what was typed
  (``displayContent`` when the CLI kept it, e.g. ``/init``; the expanded prompt is stored as
  context); a user record whose display is a tool's answer is context. ``thoughts`` are a
  thinking block, ``toolCalls`` tool calls and tool results; ``info``/``error``/``warning``
  are notes: stored, never indexed.
- Entry ids come from the message ids (``<id>``, ``<id>:thoughts``, ``<id>:call:<call id>``,
  ``<id>:result:<call id>``, ``<id>:usage``), so a message re-written in full is stored once
  and a tool result added later is added then (``convert.py`` for ``$set`` and
  ``$rewindTo``). A message's ``tokens`` are an empty assistant entry ``<id>:usage`` of their
  own, as they usually arrive on a later copy than the text.
"""

from .importer import DEFAULT_AGENT, SOURCE, import_gemini

__all__ = ["DEFAULT_AGENT", "SOURCE", "import_gemini"]
