"""Numbers as typed on a command line: ASCII digits only, and finite.

Python's int() and float() also accept full-width and other Unicode digits ("１０"), and float()
takes "inf", "nan" and "1e400" (which overflows to infinity): none is a value anyone means as a
count or a number of seconds, so every count and duration read from the command line goes
through these two functions. They return None for anything else; callers raise the error,
which names the flag and its allowed range.
"""

import math
import re

_WHOLE = re.compile(r"\s*\+?[0-9]+\s*", re.ASCII)
_DECIMAL = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*", re.ASCII)


def whole(text: object) -> int | None:
    """`text` as a whole number written in ASCII digits, or None."""
    text = str(text)
    return int(text) if _WHOLE.fullmatch(text) else None


def decimal(text: object) -> float | None:
    """`text` as a finite decimal number written in ASCII (an exponent is allowed), or None."""
    text = str(text)
    if not _DECIMAL.fullmatch(text):
        return None
    value = float(text)
    return value if math.isfinite(value) else None
