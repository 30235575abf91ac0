"""The browser's screens. Only ``SearchScreen``, ``ConversationScreen`` (through a
``ConversationSource`` it is handed) and ``UsageScreen`` (through the reader it is handed)
talk to the core, in their workers; the others do no
I/O: they show what they are handed and answer with ``dismiss(value)`` or a message, so each
can be tested on a throwaway host app.

- ``search``: the home screen (search bar, rows, preview, status bar), with ``browse`` (what
  it does with the highlighted row, and the dialogs it opens)
- ``conversation``: a whole conversation in windows, its hits, a search within it, the
  session's facts (a line above it; ``i`` opens them all)
- ``usage``: the last 30 days of tokens as a chart, totals by agent and model
- ``filters``, ``view_as``, ``export``, ``help``: the dialogs
- ``calls``: what an agent (or a session) did, its tool calls newest first, through the
  ``CallsSource`` it is handed
"""

from .browse import Scope
from .calls import CallsScreen, CallsSource, CallsWhat, CoreCalls
from .conversation import ConversationScreen, ConversationSource, CoreSource
from .export import ExportChoice, ExportScreen, default_export_path
from .filters import Filters, FiltersScreen
from .help import HelpScreen
from .search import SearchScreen
from .usage import UsageScreen
from .view_as import ViewAsChoice, ViewAsScreen, session_tree

__all__ = [
    "CallsScreen",
    "CallsSource",
    "CallsWhat",
    "CoreCalls",
    "ConversationScreen",
    "ConversationSource",
    "CoreSource",
    "ExportChoice",
    "ExportScreen",
    "Filters",
    "FiltersScreen",
    "HelpScreen",
    "Scope",
    "SearchScreen",
    "UsageScreen",
    "ViewAsChoice",
    "ViewAsScreen",
    "default_export_path",
    "session_tree",
]
