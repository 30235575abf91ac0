"""The command line: ``backscroll <verb>``.

``main`` parses and dispatches; ``commands`` holds one function per verb, each importing the
core and Rich only when it runs (``search --json`` never loads Rich, no verb but ``tui`` loads
Textual, only ``mcp`` loads the MCP SDK); ``render`` prints for people, ``sources`` runs the
``sources``/``sync``/``watch`` verbs.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
