"""Kilo's SQLite database (``kilo.db``): OpenCode's schema (``importers/opencode``)."""
