"""Sizes and counts as messages write them (`8MiB`, `500KB`, `1048576`, `10`), for every workload.

Binary units (KiB MiB GiB TiB) are powers of 1024, decimal ones (KB MB GB TB) powers of 1000,
as `OBJECT_SIZE` takes them. Whole numbers only, and None for anything else, so that each caller
words its own one-line error. Hand-written: the zip may not import the drivers' size parser
(fanout.common.sizes), and a library would add a dependency for a dozen lines.

Stdlib only (it runs in the Lambda runtime).
"""

import re

KiB, MiB, GiB, TiB = 1024, 1024**2, 1024**3, 1024**4
UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
         "kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB}  # fmt: skip
_SIZE = re.compile(r"(?P<number>\d+)(?P<unit>[a-z]*)", re.IGNORECASE | re.ASCII)


def parse_count(text: str) -> int | None:
    """The whole number in `text` (ASCII digits only), or None."""
    return int(text) if text.isascii() and text.isdecimal() else None


def parse_size(text: str) -> int | None:
    """Bytes in `text` (`8MiB`, `500KB`, `1048576`), or None if it is not a size."""
    match = _SIZE.fullmatch(text)
    unit = match and match["unit"].lower()
    return int(match["number"]) * UNITS[unit] if match and unit in UNITS else None


def format_size(n: int) -> str:
    """`n` in the largest binary unit that keeps it whole (`8MiB`), else in bytes."""
    for unit, size in (("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)
