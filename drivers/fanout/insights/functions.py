"""Scalar functions of the query language (usable in fields, filter, stats arguments and groups).

Each takes already-evaluated arguments and returns a value, None when an input is absent or not
of a usable kind: a function never fails on a bad event, it yields an absent field, as Logs
Insights does. Boolean functions return Python bools, which render as 1 and 0.
"""

import calendar
import ipaddress
import math
from datetime import datetime, timezone

from fanout.insights.values import Timestamp, as_number, as_text, iso_millis, render

# The moments a date can show (years 1 to 9999); a time outside them is absent.
MIN_MS, MAX_MS = -62_135_596_800_000, 253_402_300_799_999
UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}
MONTHS_PER_UNIT = {"mo": 1, "q": 3, "y": 12}
# The largest amount of each unit a period may have; AWS uses the cap for anything above it
# (CWL_QuerySyntax-operations-functions, datetime functions: "bin(300s)" is 60 seconds).
PERIOD_CAPS = {"ms": 1000, "s": 60, "m": 60, "h": 24}
_MONDAY_MS = -3 * 86_400_000  # 1969-12-29, the Monday before the epoch: weeks start on Mondays


def _numeric(fn):
    def wrapper(*args):
        numbers = [as_number(a) for a in args]
        if any(n is None for n in numbers):
            return None
        try:
            return fn(*numbers)
        except (ValueError, OverflowError, ZeroDivisionError):
            return None

    return wrapper


def _textual(fn):
    def wrapper(*args):
        if args[0] is None:
            return None
        return fn(as_text(args[0]), *args[1:])

    return wrapper


def _extreme(pick):
    def wrapper(*args):
        numbers = [n for n in map(as_number, args) if n is not None]
        return pick(numbers) if numbers else None

    return wrapper


def _substr(text, start, length=None):
    start, length = as_number(start), None if length is None else as_number(length)
    if start is None or start < 0:
        return None
    start = int(start)
    return text[start:] if length is None else text[start : start + max(int(length), 0)]


def _replace(text, old, new):
    if old is None or new is None:
        return None
    return text.replace(as_text(old), as_text(new))


def _strcontains(text, part):
    return part is not None and as_text(part) in text


def _concat(*args):
    return "".join(render(a) for a in args if a is not None)


def _coalesce(*args):
    return next((a for a in args if a is not None), None)


def _isempty(value):
    return value is None or as_text(value) == ""


def _isblank(value):
    return value is None or render(value).strip() == ""


def _trim(strip):
    """trim/ltrim/rtrim: whitespace, or the characters of a second argument, off one or both ends."""

    def apply(text, characters=None):
        return strip(text) if characters is None else strip(text, as_text(characters))

    return apply


def _address(value, versions=(4, 6)):
    """The IP address `value` holds, None when it holds none of the given versions."""
    if value is None:
        return None
    try:
        address = ipaddress.ip_address(render(value).strip())
    except ValueError:
        return None
    return address if address.version in versions else None


def _in_subnet(versions):
    """isIpInSubnet and its IPv4 / IPv6 variants: false for anything that is not an address of
    those versions or a CIDR block; a block with host bits set (10.0.0.1/8) is taken as its
    network, as the CIDR notation means it."""

    def apply(value, subnet):
        address = _address(value, versions)
        if address is None or subnet is None:
            return False
        try:
            network = ipaddress.ip_network(render(subnet).strip(), strict=False)
        except ValueError:
            return False
        return address.version == network.version and address in network

    return apply


def floor_time(millis: int, amount: int, unit: str) -> int:
    """Start of the `amount` x `unit` period containing `millis` (UTC; weeks start on Monday)."""
    if unit in MONTHS_PER_UNIT:
        step = amount * MONTHS_PER_UNIT[unit]
        moment = datetime.fromtimestamp(millis / 1000, tz=timezone.utc)
        index = (moment.year * 12 + moment.month - 1) // step * step
        return calendar.timegm((index // 12, index % 12 + 1, 1, 0, 0, 0)) * 1000
    width = amount * UNIT_MS[unit]
    origin = _MONDAY_MS if unit == "w" else 0
    return (millis - origin) // width * width + origin


def ceil_time(millis: int, amount: int, unit: str) -> int:
    """End of the period containing `millis`, or `millis` itself when it starts a period."""
    start = floor_time(millis, amount, unit)
    if start == millis:
        return start
    if unit in MONTHS_PER_UNIT:
        moment = datetime.fromtimestamp(start / 1000, tz=timezone.utc)
        index = moment.year * 12 + moment.month - 1 + amount * MONTHS_PER_UNIT[unit]
        return calendar.timegm((index // 12, index % 12 + 1, 1, 0, 0, 0)) * 1000
    return start + amount * UNIT_MS[unit]


def _timestamp(millis) -> Timestamp | None:
    """`millis` as a Timestamp, None when absent or outside the dates that can be shown."""
    return Timestamp(int(millis)) if millis is not None and MIN_MS <= millis <= MAX_MS else None


def _millis(value) -> Timestamp | None:
    """The time a value stands for: epoch milliseconds, or ISO 8601 text (UTC without an offset),
    so that a time read from a message, such as Powertools' `timestamp`, works like @timestamp."""
    millis = as_number(value)
    if millis is None and value.__class__ is str:
        millis = iso_millis(value)
    return _timestamp(millis)


def date_function(round_time):
    def apply(value, period):
        millis = _millis(value)
        if millis is None:
            return None
        try:
            return _timestamp(round_time(millis, *period))
        except ValueError:  # the period around the year 9999 ends after it
            return None

    return apply


def _to_millis(value):
    millis = _millis(value)
    return None if millis is None else int(millis)


# name -> (function, minimum arguments, maximum arguments or None for any number)
FUNCTIONS = {
    "abs": (_numeric(abs), 1, 1),
    "ceil": (_numeric(math.ceil), 1, 1),
    "floor": (_numeric(math.floor), 1, 1),
    "log": (_numeric(math.log), 1, 1),
    "sqrt": (_numeric(math.sqrt), 1, 1),
    "greatest": (_extreme(max), 1, None),
    "least": (_extreme(min), 1, None),
    "concat": (_concat, 1, None),
    "strlen": (_textual(len), 1, 1),
    "toupper": (_textual(str.upper), 1, 1),
    "tolower": (_textual(str.lower), 1, 1),
    "substr": (_textual(_substr), 2, 3),
    "replace": (_textual(_replace), 3, 3),
    "strcontains": (lambda text, part: text is not None and _strcontains(as_text(text), part), 2, 2),
    "isempty": (_isempty, 1, 1),
    "isblank": (_isblank, 1, 1),
    "ispresent": (lambda value: value is not None, 1, 1),
    "coalesce": (_coalesce, 1, None),
    "trim": (_textual(_trim(str.strip)), 1, 2),
    "ltrim": (_textual(_trim(str.lstrip)), 1, 2),
    "rtrim": (_textual(_trim(str.rstrip)), 1, 2),
    "isvalidip": (lambda value: _address(value) is not None, 1, 1),
    "isvalidipv4": (lambda value: _address(value, (4,)) is not None, 1, 1),
    "isvalidipv6": (lambda value: _address(value, (6,)) is not None, 1, 1),
    "isipinsubnet": (_in_subnet((4, 6)), 2, 2),
    "isipv4insubnet": (_in_subnet((4,)), 2, 2),
    "isipv6insubnet": (_in_subnet((6,)), 2, 2),
    # Offline there is no data protection policy: the value is what AWS would show unmasked.
    "unmask": (lambda value: value, 1, 1),
    "frommillis": (lambda value: _timestamp(as_number(value)), 1, 1),
    "tomillis": (_to_millis, 1, 1),
}
# Functions whose last argument is a period literal such as 5m.
DATE_FUNCTIONS = {"datefloor": date_function(floor_time), "dateceil": date_function(ceil_time)}
