"""The browser's widgets, and the pure functions that turn core answers into Rich text.

- ``results``: the results list and its count line
- ``history_pane``: a conversation with the hit marked (preview pane, conversation screen)
- ``status_bar``: reconciliation progress, caller and modes
- ``notes``: the welcome note
- ``empty_state``: the first screen of an empty state dir (sources found, one key to take
  them in)
"""

from .empty_state import EmptyState, empty_state_text
from .history_pane import HistoryPane, block_renderables, message_renderable, messages_renderable
from .notes import welcome_text
from .results import ResultsList, count_line, result_prompt
from .status_bar import IndexingView, StatusBar

__all__ = [
    "EmptyState",
    "HistoryPane",
    "IndexingView",
    "ResultsList",
    "StatusBar",
    "block_renderables",
    "count_line",
    "empty_state_text",
    "message_renderable",
    "messages_renderable",
    "result_prompt",
    "welcome_text",
]
