"""``python -m backscroll.tui.cli``: the same as the ``backscroll`` console script."""

from .main import main

raise SystemExit(main())
