"""Importers of other runtimes' transcripts. Each stores events without indexing them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator


@dataclass
class ImportReport:
    """What an import did: sessions touched, events added, lines skipped (``file:line: why``)."""

    sessions: int = 0
    events: int = 0
    keys: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, key: str, events: int) -> None:
        self.sessions += 1
        self.events += events
        self.keys.append(key)

    def as_json(self) -> dict[str, object]:
        return {
            "sessions": self.sessions,
            "events": self.events,
            "skipped": self.skipped,
            "notes": self.notes,
        }


def read_jsonl(file: Path, report: ImportReport) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) of non-blank lines; undecodable lines are reported, not raised."""
    try:
        handle = file.open("rb")
    except OSError as err:
        report.skipped.append(f"{file}: cannot read ({err.strerror or err})")
        return
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                report.skipped.append(f"{file}:{lineno}: not valid UTF-8")
                continue
            if text:
                yield lineno, text
