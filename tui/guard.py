"""Handlers of a worker's message, guarded. A worker posts when it is done, and by then the
browser may have switched screens or be quitting: Textual takes a screen's widgets down before
the screen itself, so a handler that queries a widget (``#status``, ``#results``) can find it
gone. Each id such a handler queries exists from the screen's ``compose`` until it is taken
down, so a missing one means exactly that: there is nothing left to update, and the message
is dropped instead of ending the browser with a traceback.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from textual.css.query import NoMatches

F = TypeVar("F", bound=Callable[..., Any])


def while_shown(handler: F) -> F:
    """``handler`` (sync or async) does nothing once the widgets it would change are gone."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def guarded_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await handler(*args, **kwargs)
            except NoMatches:
                return None

        return guarded_async  # type: ignore[return-value]

    @functools.wraps(handler)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        except NoMatches:
            return None

    return guarded  # type: ignore[return-value]
