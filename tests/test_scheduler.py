"""The browser's search scheduling, without Textual: a fake clock and fake timers."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

from backscroll.tui.scheduler import TYPING_PAUSE_S, SearchScheduler

DEBOUNCE = 0.025


class Clock:
    """A monotonic clock and timers that fire only when the test advances time."""

    def __init__(self) -> None:
        self.now = 100.0
        self.timers: list[list] = []  # [due, callback, live]

    def __call__(self) -> float:
        return self.now

    def set_timer(self, delay: float, callback: Callable[[], None]) -> Callable[[], None]:
        timer = [self.now + delay, callback, True]
        self.timers.append(timer)

        def cancel() -> None:
            timer[2] = False

        return cancel

    @property
    def armed(self) -> int:
        return sum(1 for t in self.timers if t[2])

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for timer in list(self.timers):
            if timer[2] and timer[0] <= self.now:
                timer[2] = False
                timer[1]()


class Searches:
    """The injected ``start``: records each generation started (and whether for the full
    page); ``empty`` = nothing to search."""

    def __init__(self) -> None:
        self.started: list[int] = []
        self.full: list[bool] = []
        self.empty = False

    def __call__(self, generation: int, full: bool) -> bool:
        if self.empty:
            return False
        self.started.append(generation)
        self.full.append(full)
        return True


def scheduler() -> tuple[SearchScheduler, Clock, Searches]:
    clock, searches = Clock(), Searches()
    return SearchScheduler(searches, clock.set_timer, clock, DEBOUNCE), clock, searches


def test_leading_edge_searches_at_once() -> None:
    s, clock, searches = scheduler()
    s.text_changed()
    assert searches.started == [s.generation] and s.running and clock.armed == 0
    s.finished()
    clock.advance(1.0)  # a pause: the next key searches at once too
    s.text_changed()
    assert len(searches.started) == 2 and clock.armed == 0


def test_a_burst_is_coalesced_into_one_search_of_its_last_text() -> None:
    s, clock, searches = scheduler()
    s.text_changed()  # leading edge
    s.finished()
    for _ in range(5):  # five keys 10 ms apart: each restarts the timer
        clock.advance(0.010)
        s.text_changed()
        assert clock.armed == 1 and s.waiting and s.busy
    assert len(searches.started) == 1
    clock.advance(DEBOUNCE - 0.001)
    assert len(searches.started) == 1  # not yet: the timer restarted with the last key
    clock.advance(0.002)
    assert searches.started[1:] == [s.generation]  # one search, for the newest text
    assert not s.waiting


def test_single_flight_and_the_pending_search_after_finish() -> None:
    s, clock, searches = scheduler()
    s.text_changed()
    first = searches.started[0]
    for _ in range(3):  # keys after pauses while the first search still runs
        clock.advance(1.0)
        s.text_changed()
    assert searches.started == [first] and s.pending  # never two at once
    s.finished()  # the first ends: the newest text is searched once
    assert searches.started == [first, s.generation] and s.running and not s.pending
    s.finished()
    assert len(searches.started) == 2 and not s.running  # nothing pending: nothing more


def test_a_timer_firing_while_a_search_runs_waits_for_it() -> None:
    s, clock, searches = scheduler()
    s.text_changed()
    clock.advance(0.010)
    s.text_changed()  # a burst: timer
    clock.advance(DEBOUNCE)
    assert len(searches.started) == 1 and s.pending
    s.finished()
    assert len(searches.started) == 2


def test_stale_generations_are_dropped() -> None:
    s, clock, searches = scheduler()
    s.text_changed()
    answer_for = searches.started[0]
    assert s.is_current(answer_for)
    clock.advance(1.0)
    s.text_changed()  # newer text while the answer is in flight
    assert not s.is_current(answer_for)
    s.finished()
    assert s.is_current(searches.started[-1])
    s.search_now()  # a mode change searches again: the old answer is stale too
    assert not s.is_current(answer_for) and not s.is_current(searches.started[1])


def test_nothing_to_search_is_not_running_and_idle_drops_everything() -> None:
    s, clock, searches = scheduler()
    searches.empty = True
    s.text_changed()
    assert searches.started == [] and not s.running
    searches.empty = False
    s.text_changed()
    clock.advance(0.010)
    s.text_changed()  # a pending re-search and an armed timer...
    s.search_now()
    generation = s.generation
    s.idle()  # ...are both dropped when the text is cleared
    assert not s.pending and not s.waiting and not s.is_current(generation)
    s.finished()
    clock.advance(1.0)
    assert len(searches.started) == 1


def test_the_scheduler_imports_no_textual() -> None:
    code = ("import sys, backscroll.tui.scheduler\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('textual', 'rich'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_idle_for_says_how_long_the_text_has_not_changed() -> None:
    """The preview and the status poll wait for a pause in typing (docs/browser.md, Speed)."""
    s, clock, _searches = scheduler()
    assert s.idle_for() == float("inf")  # nothing typed yet
    s.text_changed()
    clock.advance(0.2)
    assert abs(s.idle_for() - 0.2) < 1e-9
    s.text_changed()
    assert s.idle_for() == 0.0


def test_keystrokes_ask_for_a_first_page_everything_else_for_the_full_page() -> None:
    s, clock, searches = scheduler()
    s.text_changed()  # leading edge
    s.finished()
    clock.advance(0.010)
    s.text_changed()  # a burst: the timer's search
    clock.advance(DEBOUNCE)
    s.finished()
    s.search_now()  # a mode, a filter, enter, new contents
    assert searches.full == [False, False, True]
    clock.advance(1.0)
    s.text_changed()  # a key while that search runs: the pending search is a first page
    assert s.pending
    s.finished()
    assert searches.full[-1] is False
    s.search_now()  # and a full search asked while one runs stays full
    s.finished()
    assert searches.full[-1] is True


def test_the_full_page_follows_a_first_page_once_typing_pauses() -> None:
    s, clock, searches = scheduler()
    s.text_changed()
    clock.advance(0.080)  # the first page is shown 80 ms after the key
    s.finished()
    s.answered(full=False, more=True)
    assert s.full_page_due and s.busy  # the preview waits for the full page
    clock.advance(TYPING_PAUSE_S - 0.001)
    assert len(searches.started) == 1  # not shown long enough yet
    clock.advance(0.002)  # shown TYPING_PAUSE_S with no key typed
    assert searches.full == [False, True] and s.is_current(searches.started[-1])
    assert not s.full_page_due
    s.finished()
    s.answered(full=True, more=True)
    clock.advance(10.0)
    assert len(searches.started) == 2 and not s.busy  # a full page is the end of it


def test_no_full_page_after_a_key_or_when_the_first_page_holds_everything() -> None:
    s, clock, searches = scheduler()
    s.text_changed()
    s.finished()
    s.answered(full=False, more=True)
    clock.advance(0.150)
    s.text_changed()  # the next key: its own first page, the earlier text's rest not due
    assert not s.full_page_due
    s.finished()
    s.answered(full=False, more=False)  # everything matched is on the first page
    clock.advance(10.0)
    assert searches.full == [False, False] and not s.busy
    s.text_changed()
    s.finished()
    s.answered(full=False, more=True)
    s.idle()  # the bar cleared: nothing is due
    clock.advance(10.0)
    assert searches.full == [False, False, False]


def test_a_first_page_fills_the_list_and_never_exceeds_the_full_page() -> None:
    from backscroll.core.search import LIMIT_MAX
    from backscroll.tui.screens.search import ROW_LINES_MIN, first_page

    assert first_page(29) == 10  # 120x35: a list 29 lines high shows at most 10 rows
    for height in range(1, 200):
        rows = first_page(height)
        assert rows == LIMIT_MAX or rows * ROW_LINES_MIN > height  # fills the list
        assert 1 <= rows <= LIMIT_MAX
    assert first_page(0) == LIMIT_MAX  # not laid out yet: no guess


def test_a_slow_first_page_does_not_start_the_full_page_at_once() -> None:
    """The wait counts from the answer: the key a person types on seeing a slow first page
    must not wait behind a full page started the moment it was shown."""
    s, clock, searches = scheduler()
    s.text_changed()
    clock.advance(TYPING_PAUSE_S + 0.2)  # a slow search: the text has rested meanwhile
    s.finished()
    s.answered(full=False, more=True)
    assert clock.armed == 1 and not s.running
    clock.advance(0.1)
    s.text_changed()  # the next key: searched at once, no full page in its way
    assert searches.full == [False, False] and not s.full_page_due
