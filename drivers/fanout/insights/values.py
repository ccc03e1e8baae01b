"""Value semantics of the query language, shared by the evaluator and the result reader.

Logs Insights values are untyped text that behaves as a number when it looks like one. Every
value the evaluator returns is rendered to text once (`render`) and read back by
`parse_result_value`, the function that reads AWS results, so both engines hand downstream code
identical types. Types and limits: docs/insights.md, *Semantics the AWS documentation leaves
open*.
"""

import calendar
import math
import re
from datetime import datetime, timezone

NUMERIC_TYPES = frozenset((int, float, bool))
INT_RANGE = range(-(2**63), 2**64)  # what orjson reads as int
_NUMBER_TEXT = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_INT_TEXT = re.compile(r"-?\d+")
# Result cells that read back as numbers without losing anything: no leading zeros (but "0"),
# an integer of at most 20 digits, or a decimal of at most 17 significant digits (a double's).
_RESULT_INT = re.compile(r"-?(?:0|[1-9]\d{0,19})")
_RESULT_DECIMAL = re.compile(r"-?(?P<mantissa>(?:0|[1-9]\d*)(?:\.\d+)?)(?:[eE][-+]?\d+)?")
MAX_EXACT_DIGITS = 17
_NATURAL_CHUNK = re.compile(r"[0-9]+|[^0-9]+")


class Timestamp(int):
    """Epoch milliseconds that render as `YYYY-MM-DD HH:MM:SS.mmm` (UTC), as AWS shows times.

    Arithmetic on it yields plain ints, so `@timestamp - start_ms` is a number of milliseconds.
    """

    __slots__ = ()

    def __str__(self) -> str:
        moment = datetime.fromtimestamp(int(self) / 1000, tz=timezone.utc)
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{int(self) % 1000:03d}"


def number_from_text(text: str):
    """The number numeric text stands for: an int when it is a whole number in INT_RANGE."""
    if _INT_TEXT.fullmatch(text) and len(text) <= 21:  # int() of 5,000 digits would raise
        number = int(text)
        if number in INT_RANGE:
            return number
    return float(text)


def as_number(value):
    """The numeric value of `value`, or None when it is absent or not numeric text."""
    kind = value.__class__
    if kind in NUMERIC_TYPES:
        return int(value) if kind is bool else value
    if kind is Timestamp:
        return int(value)
    if kind is str:
        text = value.strip()
        if _NUMBER_TEXT.fullmatch(text):
            return number_from_text(text)
    return None


def as_text(value) -> str | None:
    """The text form of a value (None stays None): what comparisons with strings and `like` see."""
    if value is None or value.__class__ is str:
        return value
    return render(value)


def render(value) -> str:
    """The string a GetQueryResults row would carry for `value`."""
    kind = value.__class__
    if kind is str:
        return value
    if kind is bool:
        return "1" if value else "0"
    if kind is float:
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return str(value)


def iso_millis(text: str) -> int | None:
    """Epoch milliseconds of an ISO 8601 time (UTC when it has no offset), exact (no float
    rounding); None when the text is not one."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return calendar.timegm(moment.utctimetuple()) * 1000 + moment.microsecond // 1000


def parse_result_value(text: str):
    """Typed value of one result cell: a number when the text reads back as one exactly, else the text.

    "007" stays text (an identifier, not seven), and so does anything with more digits than a
    64-bit integer or a double holds, so no result cell silently changes on the way in.
    """
    if _RESULT_INT.fullmatch(text):
        return int(text)
    if decimal := _RESULT_DECIMAL.fullmatch(text):
        number = float(text)
        digits = decimal["mantissa"].replace(".", "").strip("0")
        if math.isfinite(number) and len(digits) <= MAX_EXACT_DIGITS:
            return number
    return text


def compare(left, right) -> int | None:
    """-1, 0 or 1 ordering `left` against `right`; None when either is absent.

    Two numbers (or numeric text) compare numerically; anything else compares as text.
    """
    if left is None or right is None:
        return None
    a, b = as_number(left), as_number(right)
    if a is None or b is None:
        a, b = as_text(left), as_text(right)
    return (a > b) - (a < b)


def natural_key(text: str) -> tuple:
    """Natural order of text: runs of digits compare by length, then digit by digit (so by
    value); other runs, and a run of digits against another run, by code point."""
    return tuple(("0", len(chunk), chunk) if chunk[0] in "0123456789" else (chunk,)
                 for chunk in _NATURAL_CHUNK.findall(text))  # fmt: skip


def sort_key(value, descending: bool = False):
    """Order for `sort` as AWS documents it (ascending): text first in natural order, then
    numbers. Absent values come last in either direction, hence `descending`."""
    if value is None:
        return (-1,) if descending else (3,)
    number = as_number(value)
    if number is not None:
        return (2, number, value if value.__class__ is str else "")  # "01" before "1", as AWS shows
    return (1, natural_key(render(value)), "")
