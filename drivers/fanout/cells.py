"""Cells: the combinations of parameters a run's records fall into (memory size, concurrency
limit, download strategy as canonical text, experiment tag). The report has one table row per cell and the plots one
box or line per cell.

Query rows and records must agree on a cell. Logs Insights returns every value as text and the
query path reads numeric-looking text back as a number (a tag "1" becomes 1, while "007" stays
text), whereas records keep their JSON types; `key` passes both through that same reading.
"""

import math

from fanout.insights.values import parse_result_value, render

FIELDS = ("memory_size", "concurrency_limit", "strategy", "experiment_tag")
TITLES = ("memory MB", "concurrency", "strategy", "tag")


def key(row: dict) -> tuple:
    """The cell of a query row or a record, each value as the query path would type it."""
    return tuple(None if row.get(name) is None else parse_result_value(render(row[name])) for name in FIELDS)


def sort_key(row: dict) -> tuple:
    """Memory and concurrency in numeric order (512 before 1024), then strategy and tag as text."""
    memory, limit, strategy, tag = key(row)
    return (_number(memory), _number(limit), str(strategy), str(tag))


def label(row: dict, fields=range(len(FIELDS))) -> str:
    """`1024 MB, concurrency 8, stream chunk_size=256KiB, tag=demo`, or only the parts `fields` names."""
    memory, limit, strategy, tag = key(row)
    parts = (f"{memory} MB", f"concurrency {limit}", str(strategy), f"tag={tag}")
    return ", ".join(parts[i] for i in fields)


def _number(value) -> float:
    return value if isinstance(value, (int, float)) else math.inf
