"""Zed's agent threads: one SQLite database, ``threads/threads.db`` under Zed's data folder
(zed-industries/zed ``crates/agent/src/db.rs``), read through the SQLite source kind."""
