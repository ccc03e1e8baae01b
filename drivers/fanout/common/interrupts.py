"""Ctrl-C and SIGTERM for the commands that must leave a record or tear down when stopped.

`fire` and `demo` treat SIGTERM as Ctrl-C, so a killed run still writes its run.json and a
killed demo still tears down; a Ctrl-C that Python drops in a finalizer is raised again by
`raise_if_dropped()` in long loops. Why: docs/experiment.md, *demo and Ctrl-C*.
"""

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


_received: list[int] = []  # signals received within sigterm_as_ctrl_c and not yet raised by raise_if_dropped


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Within the block, SIGTERM raises KeyboardInterrupt as Ctrl-C does, and both are noted for
    raise_if_dropped. A SIGINT the process ignores (a shell's background job) stays ignored."""
    signals = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signals.append(signal.SIGINT)
    previous = {sig: signal.signal(sig, _raise_interrupt) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _received.clear()


def raise_if_dropped() -> None:
    """Raise KeyboardInterrupt for a Ctrl-C or SIGTERM whose own KeyboardInterrupt was dropped."""
    if _received:
        _received.clear()
        raise KeyboardInterrupt


@contextmanager
def ignored(message: str) -> Iterator[None]:
    """Within the block, Ctrl-C and SIGTERM only print `message`: for work that must finish."""
    previous = {sig: signal.signal(sig, lambda signum, frame: print(message, file=sys.stderr, flush=True))
                for sig in (signal.SIGINT, signal.SIGTERM)}  # fmt: skip
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt
