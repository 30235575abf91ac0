"""backscroll.core: per-agent SQLite transcripts, full-text index, visibility, redaction.

This package must never import Textual or Rich (an agent runtime can embed it).
"""
