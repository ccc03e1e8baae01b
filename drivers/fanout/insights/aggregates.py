"""Aggregate functions of `stats`, computed over columns of values collected per group.

Values are collected per group and aggregated at the end: each distinct argument is one column,
converted to numbers and sorted once for every aggregate that reads it. Logs Insights documents
none of the definitions precisely; the local ones (pct, stddev, count_distinct, earliest,
sortsFirst...): docs/insights.md, *Semantics the AWS documentation leaves open*.
"""

import math

from fanout.insights.values import Timestamp, as_number, render, sort_key

# Values used as they are: JSON numbers, and times, so that min, max and pct of @timestamp are
# times (shown as dates: the stats page types them as the field's own values).
_PLAIN_NUMBERS = frozenset((int, float, Timestamp))


class Column:
    """One group's values of one argument, with its numeric and sorted views computed lazily."""

    __slots__ = ("values", "_numbers", "_sorted")

    def __init__(self, values: list):
        self.values = values
        self._numbers: list | None = None
        self._sorted: list | None = None

    @property
    def numbers(self) -> list:
        if self._numbers is None:
            values = self.values
            if set(map(type, values)) <= _PLAIN_NUMBERS:  # nothing to convert
                self._numbers = values
            else:
                self._numbers = [n for n in map(as_number, values) if n is not None]
        return self._numbers

    @property
    def sorted(self) -> list:
        if self._sorted is None:
            self._sorted = sorted(self.numbers)
        return self._sorted


def percentile(ordered: list, p: float):
    """Type 7 percentile of an ascending list (see the module docstring)."""
    if not ordered:
        return None
    h = (len(ordered) - 1) * p / 100
    low = math.floor(h)
    if low + 1 >= len(ordered):
        return ordered[-1]
    fraction = h - low
    return ordered[low] if fraction == 0 else ordered[low] + fraction * (ordered[low + 1] - ordered[low])


def total(numbers: list):
    if not numbers:
        return None
    if all(n.__class__ is int for n in numbers):
        return sum(numbers)
    return math.fsum(numbers)


def mean(numbers: list):
    return math.fsum(numbers) / len(numbers) if numbers else None


def stddev(numbers: list):
    if len(numbers) < 2:
        return None
    centre = math.fsum(numbers) / len(numbers)
    return math.sqrt(math.fsum((n - centre) ** 2 for n in numbers) / (len(numbers) - 1))


def _pick_by_time(values: list, times: list, latest: bool):
    best_time, best = None, None
    for value, time in zip(values, times):
        if value is None or time is None:
            continue
        if best_time is None or (time >= best_time if latest else time < best_time):
            best_time, best = time, value
    return best


def finisher(name: str, parameter=None):
    """fn(count, columns) -> value for aggregate `name`; `columns` holds its argument columns."""
    if name == "count":
        return lambda count, columns: count if not columns else sum(v is not None for v in columns[0].values)
    if name == "count_distinct":
        return lambda count, columns: len({render(v) for v in columns[0].values if v is not None})
    if name in ("pct", "percentile"):
        return lambda count, columns: percentile(columns[0].sorted, parameter)
    if name in ("min", "max"):
        index = 0 if name == "min" else -1
        return lambda count, columns: columns[0].sorted[index] if columns[0].sorted else None
    if name in ("earliest", "latest"):
        return lambda count, columns: _pick_by_time(columns[0].values, columns[1].values, name == "latest")
    if name in ("sortsfirst", "sortslast"):
        pick = min if name == "sortsfirst" else max
        return lambda count, columns: pick((v for v in columns[0].values if v is not None), key=sort_key, default=None)
    numeric = {"sum": total, "avg": mean, "stddev": stddev}[name]
    return lambda count, columns: numeric(columns[0].numbers)
