"""Cells: the combinations of parameters a run's records fall into, built from what a workload
declares; its cell fields are declared once, in its folder's Workload, and `of(workload)` is the one
definition of its cells (docs/statistics.md, *Cells*).

A cell is a frozen dataclass made per workload rather than a mapping: `cell.memory_size` fails
when misspelt where `cell["memory_sise"]` would read as None. `key` reads query rows and records
alike, so both agree on a cell.
"""

import math
from dataclasses import dataclass, field, make_dataclass
from functools import cache
from collections.abc import Iterable
from typing import Any, cast

from fanout.common import workload as workloads
from fanout.insights.values import parse_result_value, render

# Known from run.json, not from the records, for every workload (None in one run's report, where
# every record shares them); a workload adds its own such fields (Workload.run_cells).
FROM_RUN = (workloads.CellField("architecture", "architecture", short="arch"), workloads.CellField("network", "network"))


class Cell:
    """What every workload's cell class does (each is a subclass); `schema` is its Schema."""

    schema: "Schema"
    concurrency_limit: int  # a field every workload's cells share (its subclass sets it)

    def as_dict(self) -> dict:
        """Every field, in the order of the tables across runs (Schema.across)."""
        return {name: getattr(self, name) for name in self.schema.across}

    def sort_key(self) -> tuple:
        """The record fields in order: numbers in numeric order (512 before 1024), text as text."""
        declared = self.schema.declared
        return tuple(_number(getattr(self, name)) if declared[name].numeric else str(getattr(self, name))
                     for name in self.schema.fields)  # fmt: skip

    def text(self, name: str) -> str:
        """One field as the tables show it."""
        return self.schema.text(name, getattr(self, name))

    def label(self, names: tuple[str, ...] | None = None) -> str:
        """`1024 MB, concurrency 8, 16 MiB, stream chunk_size=256KiB, tag=demo`, or only the named parts."""
        return ", ".join(self.schema.declared[name].label.format(self.text(name)) for name in names or self.schema.fields)


@dataclass(frozen=True)
class Schema:
    """The cells of one workload: `fields`, the record fields in label and sort order; `across`,
    every field in the order of the tables across runs (the deployment's values, the
    architecture, the message's, the tag, the network last); `Cell`, the cell class."""

    workload: str
    fields: tuple[str, ...]
    across: tuple[str, ...]
    declared: dict = field(compare=False)  # name -> workloads.CellField
    Cell: type = field(compare=False)

    @property
    def titles(self) -> dict[str, str]:
        """Column title of each record field."""
        return {name: self.declared[name].title for name in self.fields}

    def text(self, name: str, value: object) -> str:
        """A value of field `name` as the tables show it (a size as a size; None: -)."""
        show = self.declared[name].show
        if show is not None and isinstance(value, int):
            return show(value)
        return "-" if value is None else str(value)

    def long_label(self, row: dict, names: Iterable[str]) -> str:
        """`1024 MB, 1 GiB, arch x86_64`: the named fields of a row as a cell's label says them (the
        plots' words, which have the room)."""
        return ", ".join(self.declared[name].label.format(self.text(name, row[name])) for name in names)

    def short_label(self, row: dict, names: Iterable[str]) -> str:
        """`MB 1024, size 1 GiB, arch x86_64`: the named fields of a row (a cell's fields as a
        dict, as the tables across runs hold them), by their short titles."""
        return ", ".join(f"{self.declared[name].short_title} {self.text(name, row[name])}" for name in names)

    def header(self, row: dict, names: Iterable[str]) -> tuple[str, ...]:
        """`memory MB: 1024`, `object: 16 MiB`...: the named fields of a row, one line each, as a
        report's header states what every cell shares (its tables then leave those columns out)."""
        return tuple(f"{self.declared[name].title}: {self.text(name, row[name])}" for name in names)

    def key(self, row: dict) -> Any:  # Any: a Cell whose fields make_dataclass adds at run time
        """The cell of a query row or a record, each value as the query path would type it."""
        return self.Cell(**{name: None if row.get(name) is None else parse_result_value(render(row[name]))
                            for name in self.fields})  # fmt: skip

    def sort_key(self, row: dict) -> tuple:
        return self.key(row).sort_key()

    def label(self, row: dict, names: tuple[str, ...] | None = None) -> str:
        return self.key(row).label(names)

    def varying(self, cell_list: list) -> tuple[str, ...]:
        """The names of the fields whose values differ between cells."""
        return tuple(name for name in self.fields if len({getattr(cell, name) for cell in cell_list}) > 1)


@cache
def of(workload: workloads.Workload) -> Schema:
    """The cells of `workload`, from what its folder declares."""
    shared, tag = workloads.SHARED_CELLS[:-1], workloads.SHARED_CELLS[-1]
    record = (*shared, *workload.cells, tag)
    deployed = [f for f in workload.cells if f.name in workload.deployed]
    message = [f for f in workload.cells if f.name not in workload.deployed]
    architecture, network = FROM_RUN
    across = (*shared, *deployed, architecture, *message, *workload.run_cells, tag, network)
    names = tuple(f.name for f in record)
    from_run = (*FROM_RUN, *workload.run_cells)
    schema_fields = [(f.name, object) for f in record] + [(f.name, object, None) for f in from_run]
    cell_class = make_dataclass(f"{workload.name.title()}Cell", schema_fields, bases=(Cell,), frozen=True)
    schema = Schema(workload.name, names, tuple(f.name for f in across), {f.name: f for f in (*record, *from_run)},
                    cell_class)  # fmt: skip
    cast(type[Cell], cell_class).schema = schema
    _BUILT[workload.name] = schema
    return schema


# The schemas of() built, by workload: the registry (fanout.workloads.registry) builds every
# registered workload's when it is imported, so that titles() knows them all.
_BUILT: dict[str, Schema] = {}


def titles() -> set[str]:
    """Every cell field's column title, of every workload whose cells were built (tables
    left-align them): the shared fields' and each workload's own record fields."""
    return {schema.declared[name].title for schema in _BUILT.values() for name in schema.fields}


def _number(value: object) -> float:
    return value if isinstance(value, (int, float)) else math.inf
