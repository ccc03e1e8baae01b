"""Errors the CLI turns into one-line messages and non-zero exits."""


class FanoutError(Exception):
    """A failure the user can act on; printed as one line, exit status 1."""

    exit_code = 1


class UsageError(FanoutError):
    """Bad input (a value out of range, an unknown name); exit status 2, nothing was changed."""

    exit_code = 2
