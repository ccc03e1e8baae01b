"""Ctrl-C and SIGTERM for the commands that must leave a record or tear down when stopped.

Python turns Ctrl-C (SIGINT) into KeyboardInterrupt, so `finally` blocks run; SIGTERM (`kill`,
a CI job being cancelled) kills the process outright unless handled. `fire` and `demo` treat
both alike, so that a killed run still writes its run.json and a killed demo still tears down.
"""

import signal
import sys
from contextlib import contextmanager


@contextmanager
def sigterm_as_ctrl_c():
    """Within the block, SIGTERM raises KeyboardInterrupt as Ctrl-C does."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def ignored(message: str):
    """Within the block, Ctrl-C and SIGTERM only print `message`: for work that must finish."""
    previous = {sig: signal.signal(sig, lambda signum, frame: print(message, file=sys.stderr, flush=True))
                for sig in (signal.SIGINT, signal.SIGTERM)}  # fmt: skip
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
