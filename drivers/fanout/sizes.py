"""Object sizes as people write them (`64MiB`, `1.5GiB`, `500MB`) and back.

Binary units (KiB, MiB, GiB, TiB) are powers of 1024, decimal units (KB, MB, GB, TB) powers of
1000, exactly as their names say: a size that silently means the other one would skew every
throughput figure derived from it. Hand-written because the few libraries that parse sizes
disagree on what `KB` means and add a dependency for twenty lines.
"""

import re
from decimal import Decimal

from fanout.errors import UsageError

UNITS = {
    "": 1,
    "b": 1,
    "k": 1000, "kb": 1000,
    "m": 1000**2, "mb": 1000**2,
    "g": 1000**3, "gb": 1000**3,
    "t": 1000**4, "tb": 1000**4,
    "ki": 1024, "kib": 1024,
    "mi": 1024**2, "mib": 1024**2,
    "gi": 1024**3, "gib": 1024**3,
    "ti": 1024**4, "tib": 1024**4,
}  # fmt: skip

ALLOWED = "a positive size such as 1048576, 64MiB, 1.5GiB, 500MB (units KiB MiB GiB TiB KB MB GB TB)"

_PATTERN = re.compile(r"\s*(?P<number>\d+(?:\.\d+)?|\.\d+)\s*(?P<unit>[a-z]*)\s*", re.IGNORECASE | re.ASCII)


def parse_size(text: str) -> int:
    """Bytes in `text`; a fraction must come out to a whole number of bytes."""
    match = _PATTERN.fullmatch(str(text))
    unit = match and match["unit"].lower()
    if not match or unit not in UNITS:
        raise UsageError(f"invalid size {text!r}: expected {ALLOWED}")
    value = Decimal(match["number"]) * UNITS[unit]
    if value <= 0:
        raise UsageError(f"invalid size {text!r}: must be greater than zero; expected {ALLOWED}")
    if value != value.to_integral_value():
        raise UsageError(f"invalid size {text!r}: not a whole number of bytes; expected {ALLOWED}")
    return int(value)


def format_size(n: int) -> str:
    """`n` bytes in the largest binary unit that keeps the number >= 1, e.g. '1.5 GiB'.

    Two decimals at most: for humans reading a summary, not for arithmetic.
    """
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024:
            break
        value /= 1024
    else:
        unit = "TiB"
    if unit == "B":
        return f"{n} B"
    return f"{value:.2f}".rstrip("0").rstrip(".") + f" {unit}"


def format_decimal_size(n: int) -> str:
    """`n` as SIZES= takes it: in decimal units when whole (`10 KB`, `1 MB`), else as
    format_size shows it. The latency workload's sizes are decimal steps of 10x."""
    for unit, factor in (("GB", 1000**3), ("MB", 1000**2), ("KB", 1000)):
        if n >= factor and n % factor == 0:
            return f"{n // factor} {unit}"
    return format_size(n)
