"""The MCP server: ``backscroll mcp`` answers an agent's tool calls over stdio.

``server`` declares the tools (search, history, list) over the core; ``wire`` screens each
stdin line before the SDK sees it. Loads the MCP SDK, never Textual.
"""

from .server import serve

__all__ = ["serve"]
