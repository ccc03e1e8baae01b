"""Errors the CLI turns into one-line messages and non-zero exits."""

import argparse
from typing import NoReturn


class FanoutError(Exception):
    """A failure the user can act on; printed as one line, exit status 1."""

    exit_code = 1


class UsageError(FanoutError):
    """Bad input (a value out of range, an unknown name); exit status 2, nothing was changed."""

    exit_code = 2


class OneLineErrors(argparse.ArgumentParser):
    """argparse's errors as a UsageError: one line naming the value and what is allowed, instead
    of the usage block, which buries that line under every flag of the command. (The CLI's
    parser, and the sweep parser a study fills from its file.)"""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")
