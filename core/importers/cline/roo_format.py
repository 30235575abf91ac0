"""Roo Code's doors in the format registry: Cline's reader, its tasks stored as ``roo-code``."""

from .format import doors

DOORS = doors("roo-code")
