"""Import Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

PATH may be a sessions folder (searched recursively for ``rollout-*.jsonl``, so
``~/.codex/archived_sessions`` works too) or one rollout file. Events are stored without
indexing; reconciliation indexes them later (SPEC 3). Decisions (also in docs/importers.md):

- Agent id ``codex`` unless given; every rollout is ``agent:<id>:codex:<session id>`` (the
  ``session_meta`` id, else the UUID in the file name). A rollout spawned by another thread
  (``source: {"subagent": {"thread_spawn": {"parent_thread_id": …}}}``) keeps that key shape
  and gets ``spawnedBy`` = ``parentSessionKey`` = its parent's key, so the link resolves
  whatever the parent was; a fork records ``forked_from_id`` as the header's ``parentSession``.
- Rollouts have no ids: an entry's id is derived from the session id and the line number
  (``sha1("<session id>:<line>")[:16]``), so importing a file again (or after it grew)
  adds only the new lines. Entries are chained by ``parentId`` in file order.
- ``response_item`` is the conversation: ``message`` user/assistant -> message entries
  (``input_text``/``output_text`` -> ``text`` blocks, ``input_image`` -> image);
  ``reasoning`` -> an assistant message with a thinking block (summary text; the encrypted
  content is dropped); ``function_call``/``custom_tool_call``/``local_shell_call``/
  ``web_search_call`` -> assistant ``toolCall``; their ``*_output`` -> ``toolResult``
  messages. None of those but user/assistant text is indexed.
- Injected context is not user speech: user messages that open with ``# AGENTS.md
  instructions``, ``<environment_context>``, ``<user_instructions>``, ``<INSTRUCTIONS>``,
  ``<permissions instructions>`` or ``<turn_aborted>``, and every ``developer``/``system``
  message, become ``custom_message`` entries (``codex.context``), visible but never indexed.
- A prompt is written as a ``response_item`` user message and as an ``event_msg``
  ``user_message`` (newer releases, e.g. Codex Desktop 0.128: the event only). In a turn, the
  k-th of each kind are one prompt: the first of the two to come is taken, its twin skipped
  (the turn's two counts travel in the follow carry, so a growing file agrees with an import).
  Other ``event_msg`` lines repeat the response items for the UI (agent messages, command
  ends, token counts) and are dropped, so nothing is counted twice. ``turn_context`` becomes
  ``model_change`` / ``thinking_level_change`` entries when the model or effort changes;
  ``compacted`` becomes a ``compaction`` entry. A later ``session_meta`` of another thread
  (a spawned or forked thread replaying its parent's history) and the inherited lines after
  it, up to the next ``turn_context``, are skipped: they belong to the parent's rollout.
- Label: ``<project>: <first real user prompt>``, project = last part of ``cwd``.

Modules, one step each: ``importer`` (finding the rollouts, the entry point), ``reading`` (one
file's lines in one shape, its ``session_meta`` and session id), ``convert`` (lines to
chained entries), ``blocks`` (Codex payloads in OpenClaw form), ``store`` (the session with its
header, parent link and label).
"""

from .importer import DEFAULT_AGENT, import_codex
from .store import SOURCE

__all__ = ["DEFAULT_AGENT", "SOURCE", "import_codex"]
