"""Cells: the combinations of parameters a run's records fall into (memory size, concurrency
limit, object size, download strategy as canonical text, experiment tag), and across runs also
the architecture, the network the run was made under and its PIN (from run.json: a sweep's pin
axis makes runs that differ only in it). The one definition of
a cell for the run report, the report across runs and compare. The report has one table row per
cell and the plots one box or line per cell.

A cell is a record with named fields, never a tuple read by position, so that adding a field
(another parameter, say) cannot silently shift what an index means.

Query rows and records must agree on a cell. Logs Insights returns every value as text and the
query path reads numeric-looking text back as a number (a tag "1" becomes 1, while "007" stays
text), whereas records keep their JSON types; `key` passes both through that same reading.
"""

import math
from dataclasses import dataclass, fields

from fanout.insights.values import parse_result_value, render
from fanout.sizes import format_size


@dataclass(frozen=True)
class Cell:
    """One cell. The first fields are record fields (FIELDS, functions/downloader/measure.py);
    architecture, network and pin come from run.json, known only across runs (None in one run's
    report, where every record shares them; pin None also means not pinned)."""

    memory_size: int | None
    concurrency_limit: int | None
    object_size: int | None
    strategy: str | None
    experiment_tag: str | int | float | None
    architecture: str | None = None
    network: str | None = None
    pin: str | None = None

    def as_dict(self) -> dict:
        """Every field, in the order of the tables across runs (ACROSS_FIELDS)."""
        return {name: getattr(self, name) for name in ACROSS_FIELDS}

    def sort_key(self) -> tuple:
        """Memory, concurrency and size in numeric order (512 before 1024), then strategy and tag."""
        return (_number(self.memory_size), _number(self.concurrency_limit), _number(self.object_size),
                str(self.strategy), str(self.experiment_tag))  # fmt: skip

    def text(self, name: str) -> str:
        """One field as the tables show it."""
        value = getattr(self, name)
        if name == "object_size" and isinstance(value, int):
            return format_size(value)
        return "-" if value is None else str(value)

    def label(self, names: tuple[str, ...] | None = None) -> str:
        """`1024 MB, concurrency 8, 16 MiB, stream chunk_size=256KiB, tag=demo`, or only the named parts."""
        return ", ".join(LABELS[name].format(self.text(name)) for name in names or FIELDS)


FROM_RUN = ("architecture", "network", "pin")  # known from run.json, not from the records
FIELDS = tuple(f.name for f in fields(Cell) if f.name not in FROM_RUN)  # the record fields
# Every field, as the report across runs orders its columns (architecture beside the other
# deployment values, network last).
ACROSS_FIELDS = ("memory_size", "concurrency_limit", "object_size", "architecture", "strategy", "pin",
                 "experiment_tag", "network")  # fmt: skip
TITLES = {"memory_size": "memory MB", "concurrency_limit": "concurrency", "object_size": "object",
          "strategy": "strategy", "experiment_tag": "tag"}  # fmt: skip
LABELS = {"memory_size": "{} MB", "concurrency_limit": "concurrency {}", "object_size": "{}", "strategy": "{}",
          "experiment_tag": "tag={}"}  # fmt: skip


def key(row: dict) -> Cell:
    """The cell of a query row or a record, each value as the query path would type it."""
    return Cell(**{name: None if row.get(name) is None else parse_result_value(render(row[name])) for name in FIELDS})


def sort_key(row: dict) -> tuple:
    return key(row).sort_key()


def label(row: dict, names: tuple[str, ...] | None = None) -> str:
    return key(row).label(names)


def varying(cell_list: list[Cell]) -> tuple[str, ...]:
    """The names of the fields whose values differ between cells."""
    return tuple(name for name in FIELDS if len({getattr(cell, name) for cell in cell_list}) > 1)


def _number(value) -> float:
    return value if isinstance(value, (int, float)) else math.inf
