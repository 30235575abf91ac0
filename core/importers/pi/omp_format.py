"""Oh My Pi's doors in the format registry: Pi's reader, its sessions stored as ``omp``."""

from .format import doors

DOORS = doors("omp")
