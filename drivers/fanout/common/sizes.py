"""Object sizes as people write them (`64MiB`, `1.5GiB`, `500MB`) and back.

KiB..TiB are powers of 1024 and KB..TB powers of 1000, in any letter case; a bare `M` or `Mi` is
refused (docs/experiment.md): a size that silently meant the other unit would skew every
throughput figure. Hand-written because the few libraries that parse sizes disagree on what
`KB` means, and twenty lines need no dependency.
"""

import re
from decimal import Decimal

from fanout.common.errors import UsageError

UNITS = {"B": 1, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4,
         "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}  # fmt: skip
_FACTORS = {"": 1} | {name.lower(): factor for name, factor in UNITS.items()}  # no unit: bytes

ALLOWED = f"a positive size such as 1048576, 64MiB, 1.5GiB, 500MB (units {' '.join(UNITS)}, in any letter case)"

_PATTERN = re.compile(r"\s*(?P<number>\d+(?:\.\d+)?|\.\d+)\s*(?P<unit>[a-z]*)\s*", re.IGNORECASE | re.ASCII)


def parse_size(text: str) -> int:
    """Bytes in `text`; a fraction must come out to a whole number of bytes."""
    match = _PATTERN.fullmatch(str(text))
    unit = match and match["unit"].lower()
    if not match or unit not in _FACTORS:
        raise UsageError(f"invalid size {text!r}: expected {ALLOWED}")
    value = Decimal(match["number"]) * _FACTORS[unit]
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
