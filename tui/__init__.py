"""backscroll.tui: the command line and the Textual browser."""
