"""The built-in demo: a seeded generator (``corpus``), its invented text (``text``), and the
writer and cache of the demo state dir (``state``)."""

from .state import DEMO_MESSAGES, DEMO_SEED, build_demo, default_demo_dir, ensure_demo

__all__ = ["DEMO_MESSAGES", "DEMO_SEED", "build_demo", "default_demo_dir", "ensure_demo"]
