"""The browser's colours follow Textual's theme (the command palette's "Change theme", or
``App.theme``). The CSS uses theme variables already; transcript text is Rich text, whose
colours are taken here from the current theme's variables, and everything that shows it is
drawn again when the theme changes (``BackscrollApp`` listens to ``theme_changed_signal``)."""

from __future__ import annotations

from textual.app import App

from .text import DEFAULT_PALETTE, Palette


def palette_of(app: App[object]) -> Palette:
    """Keys, roles and matched words in the colours of the app's current theme."""
    try:
        colours = app.theme_variables
    except Exception:  # not running (a throwaway render): the command line's colours
        return DEFAULT_PALETTE
    if not colours:
        return DEFAULT_PALETTE
    return Palette(
        key=f"bold {colours.get('text-primary', 'cyan')}",
        user=f"bold {colours.get('text-success', 'green')}",
        assistant=f"bold {colours.get('text-accent', 'magenta')}",
        match=f"bold {colours.get('background', 'black')} on {colours.get('warning', 'yellow')}",
        hit=f"bold {colours.get('text-warning', 'yellow')}",
        error=f"bold {colours.get('text-error', 'red')}",
    )
