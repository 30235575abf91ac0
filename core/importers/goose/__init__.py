"""Goose (block/goose): its sessions database ``sessions.db`` and the older ``*.jsonl``."""
