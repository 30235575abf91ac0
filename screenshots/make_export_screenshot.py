"""Write ``export-html.png``: the HTML export of the demo's session worth investigating (the
failed deploy of billing-api v2.22.0, then a forced push), as headless Chromium draws it.

Only the demo's data (``core/demo/incident.py``), stored in a temporary state dir and exported
with ``backscroll export --format html --include-tools``. A page opens with every tool call
folded; for the picture, the failed deploy is shown unfolded (the ``open`` a click would set).

    .venv/bin/python screenshots/make_export_screenshot.py [--out FILE] [--chromium PATH]

Needs Chromium (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from backscroll.core.demo import corpus, incident
from backscroll.core.reconcile import reconcile_agent
from backscroll.core.state import StateDir
from backscroll.core.storage import SessionMeta
from backscroll.tui.cli import main as backscroll

WINDOW = "1100,1250"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--hide-scrollbars")


def incident_session() -> corpus.DemoSession:
    return next(s for s in corpus.generate() if s.label == incident.LABEL)


def make(out: Path, work: Path, browser: str) -> Path:
    session = incident_session()
    state = StateDir(work / "state", database_url="")
    agent = session.key.split(":")[1]
    with state.open(agent, write=True) as db:
        db.import_session(SessionMeta(session.key, session_id=session.session_id,
                                      label=session.label, created_at=session.created_at,
                                      source=session.source),
                          [json.dumps(event) for event in session.events])
    reconcile_agent(state, agent)  # indexed, as a user's would be: the header has its facts
    page = work / "incident.html"
    code = backscroll(["export", session.key, "--format", "html", "--include-tools", "-o",
                       str(page), "--force", "--state-dir", str(state.path)])
    if code != 0:
        raise SystemExit(f"the export failed ({code})")
    html = page.read_text(encoding="utf-8")
    page.write_text(html.replace('<details class="tool failed">',
                                 '<details class="tool failed" open>', 1), encoding="utf-8")
    subprocess.run([browser, *FLAGS, f"--user-data-dir={work / 'profile'}",
                    f"--window-size={WINDOW}", f"--screenshot={out}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    return out


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("export-html.png"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        print(make(args.out.resolve(), Path(work), args.chromium))


if __name__ == "__main__":
    cli()
