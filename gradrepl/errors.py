"""Errors every layer may raise and the command line turns into words."""


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""
