"""When the browser searches: debounce with a leading edge, single flight, generations.

No Textual here: the screen injects how to start a search, how to set a timer (and cancel
it) and a monotonic clock, so ``tests/test_scheduler.py`` drives it with a fake clock.

- **Leading edge**: a change after a pause (longer than the debounce) searches at once.
- **Debounce**: changes faster than that (a burst, key repeat) restart a timer; only the
  burst's last text is searched, when the timer fires.
- **Single flight**: at most one search runs. Asking while one runs only marks the text as
  changed (``pending``); the newest text is searched as soon as the running one finishes.
- **Generations**: every change and every search bumps ``generation``; an answer is shown
  only if it carries the current one (``is_current``), so answers for older text are dropped.
- **First page while typing**: a keystroke's search asks only for the rows that fill the
  screen (``start(generation, full=False)``); when its answer said more matched
  (``answered(full=False, more=True)``) and no key follows for ``settle`` seconds after it was
  shown, the same text is searched again for the full page (``full=True``). Every other
  search (a mode, a filter, enter, new contents) asks for the full page at once.

Measured on 262k messages (docs/browser.md): a plain resetting timer added its whole delay
to every keystroke, and overlapping searches on a slow index slowed each other down.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

Cancel = Callable[[], object]  # stops a timer
SetTimer = Callable[[float, Callable[[], None]], Cancel]  # (delay s, callback) -> cancel
# (generation, full page) -> a search started; False: nothing to search
StartSearch = Callable[[int, bool], bool]
# Typing has paused once the text rests this long: the full page is asked for then, and the
# preview is drawn (widgets/preview.py). A person types a key every ~150-250 ms.
TYPING_PAUSE_S = 0.3


class SearchScheduler:
    def __init__(
        self,
        start: StartSearch,
        set_timer: SetTimer,
        clock: Callable[[], float] = time.monotonic,
        debounce: float = 0.025,
        settle: float = TYPING_PAUSE_S,
    ) -> None:
        self._start = start
        self._set_timer = set_timer
        self._clock = clock
        self.debounce = debounce
        self.settle = settle
        self.generation = 0
        self.running = False  # a search started and has not finished
        self.pending = False  # asked again while it ran: search once more when it finishes
        self._pending_full = True  # the page the pending search asks for
        self.full_page_due = False  # a first page is shown and more matched: the rest is due
        self._cancel_timer: Cancel | None = None
        self._cancel_settle: Cancel | None = None
        self._last_change = -math.inf

    @property
    def waiting(self) -> bool:
        """A timer is set: the burst's text is searched when it fires."""
        return self._cancel_timer is not None

    @property
    def busy(self) -> bool:
        """A search runs or is about to (the full page included): a preview would be for a
        highlight about to move."""
        return self.waiting or self.running or self.full_page_due

    def idle_for(self) -> float:
        """Seconds since the text last changed."""
        return self._clock() - self._last_change

    def is_current(self, generation: int) -> bool:
        return generation == self.generation

    def text_changed(self) -> None:
        """A keystroke: search at once after a pause, else (re)start the debounce timer;
        either way for a first page."""
        self.generation += 1  # an answer in flight is for older text now
        now = self._clock()
        burst = now - self._last_change < self.debounce
        self._last_change = now
        self._stop_timer()
        if burst:
            self._cancel_timer = self._set_timer(self.debounce, self._timer_fired)
        else:
            self.search_now(full=False)

    def search_now(self, full: bool = True) -> None:
        """Search the current text now, or as soon as the running search finishes; ``full``:
        the full page (else the first page, for a keystroke)."""
        self._stop_timer()
        self.generation += 1
        if self.running:
            self.pending = True
            self._pending_full = full
            return
        self.pending = False
        self.running = bool(self._start(self.generation, full))

    def answered(self, full: bool, more: bool) -> None:
        """The current search's answer is shown: ``full``, the full page; ``more``, more
        matched than it holds. A first page with more behind it gets the full page once it
        has been shown ``settle`` seconds with no key typed."""
        self._stop_settle()
        if full or not more:
            return
        self.full_page_due = True
        # counted from the answer, not from the key: a slow answer must not start the full
        # page at once, or the next key (typed on seeing the first page) waits behind it
        self._cancel_settle = self._set_timer(self.settle, self._settled)

    def finished(self) -> None:
        """The running search ended (answered, failed or cancelled)."""
        self.running = False
        if self.pending:
            self.search_now(self._pending_full)

    def idle(self) -> None:
        """Nothing to search any more: drop the answer in flight, the timers and any
        re-search."""
        self._stop_timer()
        self.generation += 1
        self.pending = False

    def _timer_fired(self) -> None:
        self._cancel_timer = None
        self.search_now(full=False)

    def _settled(self) -> None:
        self._cancel_settle = None
        self.full_page_due = False
        self.search_now(full=True)

    def _stop_timer(self) -> None:
        """Stop the debounce timer; any search asked for now supersedes the full page too."""
        if self._cancel_timer is not None:
            self._cancel_timer()
            self._cancel_timer = None
        self._stop_settle()

    def _stop_settle(self) -> None:
        self.full_page_due = False
        if self._cancel_settle is not None:
            self._cancel_settle()
            self._cancel_settle = None
