"""Import Cursor's CLI agent transcripts:
``${CURSOR_CONFIG_DIR:-~/.cursor}/projects/<encoded path>/agent-transcripts/<session id>/
<session id>.jsonl``, with the sub-agents it spawned in ``<session id>/subagents/<id>.jsonl``.

Cursor is closed source: the shape comes from its files (a real sample in
/work/shared/data/agents/cursor) and other readers. Each line is ``{"role": "user" |
"assistant", "message": {"content": [text or tool_use blocks]}}``; no ids, no times.
Cursor's editor chats (``state.vscdb``, SQLite) are not read here. Decisions (also in
docs/importers.md):

- Ids are derived from the session id and the line number (``sha1("<session id>:<line>")``,
  as the Codex importer derives them), entries chained in file order, so a file read again
  (grown, or rewritten with the same lines) stores nothing twice.
- Times: Cursor writes none. The lines a read takes in get the file's modification time at
  that read; a line already stored keeps the time it was stored with (it is recognised by its
  id), so times stay stable across re-reads and a conversation's messages are ordered by
  when backscroll first saw them.
- Indexed: user text inside ``<user_query>`` (the tags stripped) and assistant text; what a
  user line holds outside its query (attached context) is kept as context, not indexed;
  ``tool_use`` blocks are tool calls (not indexed); thinking blocks are kept, not indexed.
- A sub-agent's file is its own session, linked to the session that spawned it
  (``spawnedBy`` = ``parentSessionKey``). The project folder is Cursor's encoded path
  (``home-dev-app``, which cannot be decoded without guessing): used in the label only.
"""

from .importer import DEFAULT_AGENT, READER, import_cursor_cli

__all__ = ["DEFAULT_AGENT", "READER", "import_cursor_cli"]
