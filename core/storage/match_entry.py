"""``match`` and ``match_tools`` (storage/interface.py's ``Matching``) for both backends: one
``_match`` each backend writes, over the index each entry point names (the messages' or the
tool calls'), so the two entry points are written once."""

from __future__ import annotations

from typing import Any, ClassVar

from ..query import ParsedQuery
from .model import Matches, MatchFilters, SessionScope


class MatchEntryPoints:
    """Mixed into a backend's matching class, which sets the two indexes and ``_match``."""

    MESSAGES_INDEX: ClassVar[Any]
    TOOLS_INDEX: ClassVar[Any]

    def _match(self, ix: Any, query: ParsedQuery, scope: SessionScope, window: int, limit: int,
               order: str, filters: MatchFilters, within: SessionScope | None,
               texts: bool = True) -> Matches:
        raise NotImplementedError

    def match(self, query: ParsedQuery, scope: SessionScope, window: int, limit: int,
              order: str = "best", filters: MatchFilters = MatchFilters(),
              within: SessionScope | None = None, texts: bool = True) -> Matches:
        """The visible matches to rank, newest first, and the statistics to rank them with
        (the contract: storage/interface.py), over the messages' index; ``texts=False``:
        the rows without their text."""
        return self._match(self.MESSAGES_INDEX, query, scope, window, limit, order, filters,
                           within, texts)

    def match_tools(self, query: ParsedQuery, scope: SessionScope, window: int, limit: int,
                    order: str = "best", filters: MatchFilters = MatchFilters(),
                    within: SessionScope | None = None) -> Matches:
        """As ``match``, over the tool-call index (its rows' role is ``tool``)."""
        return self._match(self.TOOLS_INDEX, query, scope, window, limit, order, filters,
                           within)
