"""Value semantics of the query language, shared by the evaluator and the result reader.

Logs Insights values are untyped text that behaves as a number when it looks like one. Locally a
value is None (field absent), str, int, float, bool (a JSON boolean, which Logs Insights shows as
1 or 0) or `Timestamp` (epoch milliseconds shown as a date). Everything the evaluator returns is
rendered to text exactly once, by `render`, and read back by `parse_result_value`, the same
function that reads AWS results, so both engines hand downstream code identical types.
"""

import math
import re
from datetime import datetime, timezone

NUMERIC_TYPES = frozenset((int, float, bool))
_NUMBER_TEXT = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_INT_TEXT = re.compile(r"-?\d+")


class Timestamp(int):
    """Epoch milliseconds that render as `YYYY-MM-DD HH:MM:SS.mmm` (UTC), as AWS shows times.

    Arithmetic on it yields plain ints, so `@timestamp - start_ms` is a number of milliseconds.
    """

    __slots__ = ()

    def __str__(self) -> str:
        moment = datetime.fromtimestamp(int(self) / 1000, tz=timezone.utc)
        return moment.strftime("%Y-%m-%d %H:%M:%S.") + f"{int(self) % 1000:03d}"


def as_number(value):
    """The numeric value of `value`, or None when it is absent or not numeric text."""
    kind = value.__class__
    if kind in NUMERIC_TYPES:
        return int(value) if kind is bool else value
    if kind is Timestamp:
        return int(value)
    if kind is str and _NUMBER_TEXT.fullmatch(value.strip()):
        text = value.strip()
        return int(text) if _INT_TEXT.fullmatch(text) else float(text)
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


def parse_result_value(text: str):
    """Typed value of one result cell: int or float when the text is a number, else the text."""
    if _INT_TEXT.fullmatch(text):
        return int(text)
    if _NUMBER_TEXT.fullmatch(text):
        return float(text)
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


def sort_key(value, descending: bool = False):
    """Order for `sort`: numbers, then text; absent values last in either direction."""
    number = as_number(value)
    if number is not None:
        return (0, number, "")
    if value is None:
        return (-1 if descending else 2, 0, "")
    return (1, 0, as_text(value))
