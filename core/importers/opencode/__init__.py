"""OpenCode's SQLite database (``opencode.db``, 1.2+), read through the SQLite source kind
(``importers/sqlite_source.py``); Kilo's ``kilo.db`` shares its schema (``importers/kilo``)."""
