"""One key table: every key of the browser with its binding id, default keys, footer label and
description. The bindings, the footer, the help screen, the command palette, the welcome hints
and the dialogs' key hints are all drawn from it through the app's *current* keymap, so
``App.set_keymap({"order": "ctrl+o"})`` shows everywhere the key is mentioned.

A few entries describe keys Textual itself handles (``tab`` moves the focus, ``enter`` picks
in a list): they have ``bound=False``, are never turned into bindings and cannot be remapped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from textual.app import App
from textual.binding import Binding


@dataclass(frozen=True)
class KeyAction:
    id: str  # the binding id: the name a keymap uses
    action: str  # the action it runs
    keys: str  # default keys, Textual names, comma separated
    label: str  # the footer's label
    description: str  # the help screen's and the command palette's text
    show: bool = True  # in the footer
    tooltip: str = ""
    title: str = ""  # a command palette entry, when set
    hint: str = ""  # a dialog's key hint ("esc cancel"); default: the label in lower case
    row_with: str = ""  # shares a help row with that id (j / k)
    priority: bool = False
    bound: bool = True  # False: a key Textual handles, only described here

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.label, show=self.show, id=self.id,
                       tooltip=self.tooltip, priority=self.priority)


APP = (
    KeyAction("help", "help", "question_mark,f1", "Help", "the keys and what they do", title="Help"),
    KeyAction("command_palette", "command_palette", "ctrl+p", "palette",
              "command palette: every command by name", show=False, priority=True),
    KeyAction("quit", "quit", "ctrl+q,q", "Quit",
              "quit (q from the list and a conversation; in the search bar q is text)"),
    KeyAction("follow", "toggle_follow", "L", "Follow",
              "live follow: take in new lines of the transcripts as they are written (on/off)",
              show=False, title="Toggle live follow"),
)

SEARCH = (
    KeyAction("focus_search", "focus_search", "slash", "Search", "focus the search bar",
              title="Search"),
    KeyAction("cursor_down", "cursor_down", "j,down", "Down", "move through the results",
              show=False),
    KeyAction("cursor_up", "cursor_up", "k,up", "Up", "up through the results", show=False,
              row_with="cursor_down"),
    KeyAction("focus_next", "app.focus_next", "tab", "Next",
              "from the search bar to the results (letters are then commands)", bound=False),
    KeyAction("open", "open", "enter", "Open",
              "open the whole conversation of the highlighted result", show=False,
              title="Open conversation"),
    KeyAction("back", "back", "escape", "Back",
              "one step back: close a dialog, leave the conversation, clear the search",
              show=False),
    KeyAction("view_as", "view_as", "v", "View as",
              "view as: search as a chosen session (its visibility policy, sandbox on/off)",
              tooltip="Search as another session", title="View as…"),
    KeyAction("scope", "toggle_scope", "s", "Scope",
              "scope: all agents / the highlighted result's agent / its session",
              tooltip="All / agent / session", title="Toggle scope", show=False),
    KeyAction("order", "toggle_order", "o", "Order", "order: best match / newest first",
              tooltip="Best match / newest", title="Toggle order", show=False),
    KeyAction("match", "toggle_match", "m", "Match", "match: prefix (while typing) / exact words",
              tooltip="Prefix / exact", title="Toggle match mode", show=False),
    KeyAction("group", "toggle_group", "g", "Group",
              "results: one row per conversation / one row per message",
              tooltip="Per conversation / per message", title="Toggle grouping"),
    KeyAction("tools", "toggle_tools", "t", "Tool calls",
              "search messages / tool calls (a tool's name, arguments, output); an empty bar "
              "lists the newest calls", tooltip="Messages / tool calls",
              title="Toggle tool-call search", show=False),
    KeyAction("calls", "calls", "c", "Calls",
              "what an agent did: the tool calls of the scope's agent or session (else the "
              "highlighted row's agent), newest first", tooltip="An agent's tool calls",
              title="Tool calls of an agent", show=False),
    KeyAction("filters", "filters", "f", "Filters",
              "filters: agent, role, source, project, time; for tool calls a tool's name and "
              "failed only", tooltip="Agent, role, source, project, time",
              title="Filters…"),
    KeyAction("clear_filters", "clear_filters", "x", "Clear filters", "clear every filter",
              show=False, title="Clear filters"),
    KeyAction("copy", "copy", "y", "Copy",
              "copy the highlighted excerpt (or title; a tool call: its arguments)",
              tooltip="Copy the excerpt", title="Copy excerpt"),
    KeyAction("resume", "resume", "r", "Resume",
              "copy the command that resumes the conversation (Claude Code, Codex) or its key",
              tooltip="Copy the resume command", title="Copy resume command"),
    KeyAction("export", "export", "e", "Export",
              "export the highlighted conversation (Markdown, JSON or HTML, redacted)",
              tooltip="Export the conversation", title="Export conversation"),
    KeyAction("usage", "usage", "u", "Usage",
              "usage: tokens per day over the last 30 days, totals by agent and model",
              tooltip="Tokens and cost, last 30 days", title="Usage", show=False),
)

CONVERSATION = (
    KeyAction("conversation.back", "back", "escape", "Back", "back to the results"),
    KeyAction("conversation.down", "scroll_down", "j,down", "Down", "scroll", show=False),
    KeyAction("conversation.up", "scroll_up", "k,up", "Up", "scroll up", show=False,
              row_with="conversation.down"),
    KeyAction("conversation.pgdn", "page_down", "space,pagedown", "Page down", "page down / up",
              show=False),
    KeyAction("conversation.pgup", "page_up", "b,pageup", "Page up", "page up", show=False,
              row_with="conversation.pgdn"),
    KeyAction("conversation.top", "top", "g,home", "Top", "top / bottom", show=False),
    KeyAction("conversation.bottom", "bottom", "G,end", "Bottom", "bottom", show=False,
              row_with="conversation.top"),
    KeyAction("conversation.next", "next_hit", "n", "Next hit", "next / previous hit",
              hint="next hit"),
    KeyAction("conversation.previous", "previous_hit", "N", "Previous hit", "previous hit",
              show=False, row_with="conversation.next"),
    KeyAction("conversation.hit", "to_hit", "h", "To hit", "back to the current hit",
              hint="to the hit", show=False),
    KeyAction("conversation.find", "find", "slash", "Find", "search within this conversation"),
    KeyAction("conversation.select_next", "select_next", "right_square_bracket", "Select",
              "select the next / previous message (the bar on its left)", show=False),
    KeyAction("conversation.select_previous", "select_previous", "left_square_bracket",
              "Select previous", "select the previous message", show=False,
              row_with="conversation.select_next"),
    KeyAction("conversation.unfold", "toggle_fold", "enter", "Unfold",
              "unfold the selected message: its tool calls and results whole, a cut text read "
              "whole; again: fold it", hint="unfold"),
    KeyAction("conversation.failed", "next_failed", "f", "Next failed",
              "next / previous failed tool call (its result marked an error)",
              hint="next failed call"),
    KeyAction("conversation.failed_previous", "previous_failed", "F", "Previous failed",
              "previous failed tool call", show=False, row_with="conversation.failed"),
    KeyAction("conversation.calls", "calls", "c", "Calls",
              "this session's tool calls, newest first", show=False),
    KeyAction("conversation.resume", "resume", "r", "Resume",
              "copy the command that resumes it (Claude Code, Codex) or its key"),
    KeyAction("conversation.export", "export", "e", "Export", "export this conversation"),
    KeyAction("conversation.facts", "toggle_facts", "i", "Facts",
              "the facts: models, tokens, cost, duration, tool calls, files edited (one "
              "line / all of them)", hint="facts"),
)

FIND = (
    KeyAction("find.cancel", "cancel", "escape", "Cancel", "close the search, keep the hits"),
)

CALLS = (
    KeyAction("calls.open", "open", "enter", "Open",
              "open the conversation at the highlighted call (selected, unfolded)"),
    KeyAction("calls.window", "window", "w", "Window",
              "time window: last day / 7 days / 30 days / all time", hint="window"),
    KeyAction("calls.failed", "failed", "f", "Failed only", "failed calls only (on/off)",
              hint="failed only"),
    KeyAction("calls.scope", "scope", "s", "Session / agent",
              "opened on a session: its calls / its agent's calls", show=False),
    KeyAction("calls.down", "cursor_down", "j,down", "Down", "move through the calls",
              show=False),
    KeyAction("calls.up", "cursor_up", "k,up", "Up", "up", show=False, row_with="calls.down"),
    KeyAction("calls.back", "back", "escape", "Back", "back"),
)

FILTERS = (
    KeyAction("filters.close", "close", "escape,f", "Close",
              "close (each change applies at once; the filters stay)", hint="done"),
    KeyAction("filters.clear", "clear", "x", "Clear", "clear every filter"),
)

VIEW_AS = (
    KeyAction("view_as.pick", "select", "enter", "Pick", "search as the highlighted caller",
              bound=False),
    KeyAction("view_as.filter", "focus_filter", "slash", "Filter", "filter the sessions"),
    KeyAction("view_as.sandbox", "toggle_sandbox", "x", "Sandbox",
              "sandboxed: sees only itself and what it spawned"),
    KeyAction("view_as.down", "cursor_down", "j", "Down", "move through the list", show=False),
    KeyAction("view_as.up", "cursor_up", "k", "Up", "up", show=False, row_with="view_as.down"),
    KeyAction("view_as.cancel", "cancel", "escape", "Cancel", "cancel"),
)

EMPTY = (
    KeyAction("take_in", "take_in", "t", "Take in",
              "with nothing imported yet: take in the transcripts of the sources found"),
)

EXPORT = (KeyAction("export.cancel", "cancel", "escape", "Cancel", "cancel"),)
USAGE = (KeyAction("usage.close", "close", "escape,u", "Back", "back to the search"),)
HELP = (
    KeyAction("help.close", "close", "escape,question_mark,f1", "Close", "close this help"),
    KeyAction("help.down", "scroll_down", "j", "Down", "scroll", show=False),
    KeyAction("help.up", "scroll_up", "k", "Up", "scroll up", show=False, row_with="help.down"),
)

# The help screen's sections, in reading order.
SECTIONS: tuple[tuple[str, tuple[KeyAction, ...]], ...] = (
    ("Search", SEARCH),
    ("Everywhere", APP),
    ("In a conversation", CONVERSATION),
    ("In the usage view", USAGE),
    ("In “view as”", VIEW_AS),
    ("In the filters", FILTERS),
    ("In the tool calls list", CALLS),
    ("With nothing imported yet", EMPTY),
)

# The welcome note's hints: (ids, what they do).
WELCOME: tuple[tuple[tuple[str, ...], str], ...] = (
    (("cursor_down", "cursor_up"), "move through the results"),
    (("open",), "open the whole conversation"),
    (("focus_next",), "from the search bar to the results"),
    (("view_as",), "view as another session"),
    (("filters", "clear_filters"), "filters: agent, role, source, project, time"),
    (("group",), "one row per conversation / per message"),
    (("resume",), "copy the command that resumes it"),
    (("scope", "order", "match"), "scope, order, match mode"),
    (("help",), "all keys"),
)

_BY_ID = {k.id: k for k in (*APP, *SEARCH, *CONVERSATION, *FIND, *FILTERS, *VIEW_AS, *EMPTY,
                             *EXPORT, *CALLS, *USAGE, *HELP)}
# How a key is written: compact for hints, as a keymap names it (but ? and /) in the help.
_SHORT = {"question_mark": "?", "slash": "/", "escape": "esc", "down": "↓", "up": "↑",
          "pagedown": "pgdn", "pageup": "pgup", "right_square_bracket": "]",
          "left_square_bracket": "["}
_NAMED = {"question_mark": "?", "slash": "/", "right_square_bracket": "]",
          "left_square_bracket": "["}


def bindings(actions: Iterable[KeyAction]) -> list[Binding]:
    """The Textual bindings of a table (its ``bound`` entries)."""
    return [a.binding() for a in actions if a.bound]


def entry(key_id: str) -> KeyAction:
    return _BY_ID[key_id]


def keymap_of(app: App[object]) -> Mapping[str, str]:
    """The keymap Textual applies (``set_keymap`` / ``update_keymap``). Textual has no public
    getter for it; this is the one place that reads it."""
    return getattr(app, "_keymap", None) or {}


def current_keys(app: App[object], key_id: str) -> list[str]:
    """The keys that run ``key_id`` now: the keymap's, else the defaults."""
    action = entry(key_id)
    remapped = keymap_of(app).get(key_id) if action.bound else None
    return [k.strip() for k in (remapped or action.keys).split(",") if k.strip()]


def keys_text(app: App[object], key_ids: Sequence[str], short: bool = True) -> str:
    """The keys of ``key_ids``, first keys first: ``j k ↓ ↑`` for down and up."""
    lists = [current_keys(app, i) for i in key_ids]
    names = _SHORT if short else _NAMED
    ordered = [keys[n] for n in range(max(map(len, lists), default=0))
               for keys in lists if n < len(keys)]
    return " ".join(names.get(k, k) for k in ordered)


def first_key(app: App[object], key_id: str) -> str:
    """The first key that runs ``key_id`` now, written compactly (``esc``, ``/``)."""
    first = current_keys(app, key_id)[:1] or ["?"]
    return _SHORT.get(first[0], first[0])


def hint_line(app: App[object], key_ids: Sequence[str]) -> str:
    """``esc back · h to the hit``: each id's first key and its hint."""
    return " · ".join(f"{first_key(app, i)} {entry(i).hint or entry(i).label.lower()}"
                      for i in key_ids)


def palette_help(app: App[object], key_id: str) -> str:
    """A command palette description: ``Order: best match / newest first (o)``."""
    text = entry(key_id).description
    return f"{text[:1].upper()}{text[1:]} ({keys_text(app, [key_id])})"


def help_sections(app: App[object]) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """(section, [(keys, description, binding id)]) for the help screen."""
    sections = []
    for title, actions in SECTIONS:
        rows = []
        for action in actions:
            if action.row_with:
                continue
            ids = [action.id] + [a.id for a in actions if a.row_with == action.id]
            rows.append((keys_text(app, ids, short=False), action.description,
                         action.id if action.bound else ""))
        sections.append((title, rows))
    return sections


def welcome_hints(app: App[object]) -> list[tuple[str, str]]:
    """(keys, what they do) for the note shown before the first search."""
    return [(keys_text(app, ids), what) for ids, what in WELCOME]
