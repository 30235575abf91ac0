"""Import Qwen Code chats: ``~/.qwen/projects/<encoded cwd>/chats/<session id>.jsonl`` (newer
releases) and ``~/.qwen/tmp/<project hash>/chats/<session id>.jsonl`` (older ones); Qwen Code
keeps them under ``$QWEN_RUNTIME_DIR``, else ``$QWEN_HOME``, else ``~/.qwen``
(QwenLM/qwen-code ``packages/core/src/config/storage.ts``, ``Storage.getRuntimeBaseDir``).

The format is ``ChatRecord`` JSONL (``packages/core/src/services/chatRecordingService.ts``):
one record a line with ``uuid``/``parentUuid``, ``sessionId``, ``timestamp``, ``cwd``,
``type`` user/assistant/tool_result/system and ``message{role: user/model, parts[…]}``.
Decisions (also in docs/importers.md):

- Every record is one entry with its own ``uuid`` as id and ``parentUuid`` as parent, so the
  tree is Qwen Code's: the active branch is the chain from the last record, and a rewind
  (a ``system``/``rewind`` record, then records hanging from an earlier one) is a branch.
- Indexed: ``text`` parts of user and assistant records without ``thought: true``. Not
  indexed: thought parts (thinking blocks), ``functionCall`` parts (tool calls),
  ``tool_result`` records (role ``user`` in the file, but tool output: ``toolResult``
  messages), slash commands (context), and every other ``system`` record (custom entries;
  ``chat_compression`` becomes a compaction entry, ``custom_title`` names the session).
- Label: the ``custom_title`` if the chat was named, else ``<project>: <first prompt>``;
  a ``parent_session`` record links the chat to the session that spawned it.
"""

from .importer import DEFAULT_AGENT, READER, import_qwen_code

__all__ = ["DEFAULT_AGENT", "READER", "import_qwen_code"]
