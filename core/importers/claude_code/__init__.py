"""Import Claude Code transcripts: ``~/.claude/projects/<encoded-cwd>/*.jsonl``.

PATH may be the projects folder, one project folder, or a single ``.jsonl`` file. Each
Claude Code record becomes OpenClaw entries; events are stored without indexing and
reconciliation indexes them later (SPEC 3). Decisions (also in docs/importers.md):

- Agent id ``claude-code`` unless given. A session is ``agent:<id>:claude-code:<sessionId>``;
  a sidechain (``isSidechain`` records, ``subagents/agent-<agentId>.jsonl`` and the older flat
  ``agent-<agentId>.jsonl``) is its own session ``agent:<id>:subagent:<agentId>`` spawned by
  its parent (``spawnedBy`` = ``parentSessionKey`` = the parent's key). Its sessionId is a
  UUID derived from (parent sessionId, agentId), since Claude Code gives sub-agent records
  the parent's sessionId. A sub-agent known only from the parent's ``agent_progress`` lines
  (no transcript file next to it) is rebuilt from those lines as a linear session.
- ``uuid`` becomes ``id`` and ``parentUuid`` becomes ``parentId``, so branches (rewinds,
  retries) survive and the last conversation record in the file is the active leaf, the same
  rule Claude Code's own viewer uses. Records that are not kept (``progress`` and other
  bookkeeping) are passed through: an entry whose parent was such a record hangs from that
  record's nearest kept ancestor. A parent that is not in the file (a lost line) continues
  from the entry before; a second parentless record (an edited first prompt) starts a new
  tree, through a ``leaf`` control that clears the active leaf before it.
- ``user`` text -> user message; a ``tool_result`` block -> its own ``toolResult`` message
  (never indexed); ``assistant`` blocks: text, thinking (and redacted thinking), ``tool_use``
  -> ``toolCall``, images -> image. Signatures are dropped (opaque).
- Not user speech, kept visible but never indexed (``custom_message``
  ``claude-code.meta``): ``isMeta`` records, ``<local-command-stdout>`` /
  ``<local-command-caveat>`` / ``<bash-stdout>`` wrappers, ``[Request interrupted …]``
  markers. A slash command keeps what the user typed (``/compact and continue``).
- ``system`` ``compact_boundary`` -> a ``compaction`` entry carrying the summary of the
  ``isCompactSummary`` record that follows it (that record is folded in, not indexed). The
  compaction hangs from ``logicalParentUuid``, so the conversation before it stays on the
  active branch and searchable. Other ``system`` records -> ``custom`` entries
  ``claude-code.<subtype>`` (not indexed).
- ``summary`` records are trusted only when their ``leafUuid`` is in the same file (Claude
  Code writes other sessions' summaries too); a trusted one becomes a side ``session_info``
  entry and the session's title. ``progress``, ``file-history-snapshot`` and
  ``queue-operation`` records are dropped.
- Label: ``<project>: <title or first prompt>``, project = last part of ``cwd``.

Modules, one step each: ``importer`` (finding the files, the entry point), ``reading`` (one
file's records and what they say about each other), ``convert`` (records grouped into
sessions and linked into trees), ``entries`` (one record's entries), ``blocks`` (Claude
content in OpenClaw form), ``store`` (groups stored as labelled sessions).
"""

from .importer import DEFAULT_AGENT, import_claude_code
from .store import SOURCE

__all__ = ["DEFAULT_AGENT", "SOURCE", "import_claude_code"]
