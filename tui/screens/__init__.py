"""The browser's screens. Only ``SearchScreen`` talks to the core (in its workers); the others
do no I/O: they show what they are handed and answer with ``dismiss(value)`` or a message, so
each can be tested on a throwaway host app.

- ``search``: the home screen (search bar, results, preview, status bar)
- ``conversation``: the whole conversation, scrolled to the hit
- ``view_as``, ``export``, ``help``: the dialogs
"""

from .conversation import ConversationScreen
from .export import ExportChoice, ExportScreen, default_export_path
from .help import HelpScreen
from .search import Scope, SearchScreen
from .view_as import ViewAsChoice, ViewAsScreen, session_tree

__all__ = [
    "ConversationScreen",
    "ExportChoice",
    "ExportScreen",
    "HelpScreen",
    "Scope",
    "SearchScreen",
    "ViewAsChoice",
    "ViewAsScreen",
    "default_export_path",
    "session_tree",
]
