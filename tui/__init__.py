"""backscroll.tui: the command line and the Textual browser."""


def package_version() -> str:
    """backscroll's version as installed (``--version``, the MCP server's ``serverInfo``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("backscroll")
    except PackageNotFoundError:  # a source tree that is not installed
        return "0+unknown"
