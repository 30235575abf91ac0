"""Crush (charmbracelet/crush): one ``crush.db`` per project, listed in ``projects.json``."""
