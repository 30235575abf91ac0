"""The browser's widgets, and the pure functions that turn core answers into Rich text.

- ``results``: the rows (conversations, conversations found, messages, tool calls) and the
  count line; ``tool_rows``: how a tool call's row is drawn
- ``conversation_view``: a long conversation in windows of messages
- ``history_pane``: a conversation with the hit marked (preview pane, conversation screen)
- ``status_bar``: reconciliation progress, caller and modes
- ``notes``: the welcome note
- ``search_bar``: the search bar (its focus key types nothing into an empty bar)
- ``empty_state``: the first screen of an empty state dir (sources found, one key to take
  them in)
"""

from .conversation_view import ConversationView
from .empty_state import EmptyState, empty_state_text
from .history_pane import HistoryPane, block_renderables, message_renderable, messages_renderable
from .notes import welcome_text
from .preview import Preview
from .results import (
    ResultsList,
    Row,
    conversation_prompt,
    count_line,
    grouped_prompt,
    result_prompt,
    row_agent,
    row_anchor,
    row_identity,
    row_key,
)
from .search_bar import SearchBar
from .status_bar import IndexingView, StatusBar

__all__ = [
    "SearchBar",
    "ConversationView",
    "EmptyState",
    "HistoryPane",
    "IndexingView",
    "Preview",
    "ResultsList",
    "Row",
    "StatusBar",
    "block_renderables",
    "conversation_prompt",
    "count_line",
    "empty_state_text",
    "grouped_prompt",
    "message_renderable",
    "messages_renderable",
    "result_prompt",
    "row_agent",
    "row_anchor",
    "row_identity",
    "row_key",
    "welcome_text",
]
