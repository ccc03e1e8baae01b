"""What a workload declares in its folder's __init__.py: its Workload entry and cell fields (its
driver names it, fanout.workloads.registry lists the drivers). Plain data, below every wing: the
results build a workload's cells from it without importing the workload."""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class CellField:
    """A cell field, declared once (fanout.results.cells builds the cells from these): the record
    field `name`, its column `title`, its part of a cell's label (`{}`: the value as text), whether
    it sorts as a number (512 before 1024), `show`, how a whole number is written (a size), and
    `short`, its title where a table must fit 80 columns (the tables across runs; "": `title`)."""

    name: str
    title: str
    label: str = "{}"
    numeric: bool = False
    show: Callable[[int], str] | None = None
    short: str = ""

    @property
    def short_title(self) -> str:
        return self.short or self.title


@dataclass(frozen=True)
class Workload:
    """A registered workload. `cells`: the cell fields its records add to those every record
    shares (SHARED_CELLS), of which `deployed` are the deployment's (tables across runs put them
    before the architecture); `query`: its saved percentile query (a file in its folder's
    queries/, paths.QUERY_GLOBS), grouped by them. `run_cells`: the cell fields its run.json
    holds and its records do not (download's pin), None in one run's report; the tables across
    runs put them after the message's fields."""

    name: str
    help: str
    cells: tuple[CellField, ...]
    query: str
    deployed: tuple[str, ...] = ()
    run_cells: tuple[CellField, ...] = ()

    @property
    def cell_fields(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.cells)


# The cell fields of every record, whatever the workload (the envelope, docs/workloads.md): a
# cell's fields are these with the workload's own before the tag (fanout.results.cells).
SHARED_CELLS = (CellField("memory_size", "memory MB", "{} MB", numeric=True, short="MB"),
                CellField("concurrency_limit", "concurrency", "concurrency {}", numeric=True, short="conc"),
                CellField("experiment_tag", "tag", "tag={}"))  # fmt: skip
SHARED_CELL_FIELDS = tuple(field.name for field in SHARED_CELLS)

# The workload of a run.json or a sweep's manifest that names none (saved before there were
# others), and fire's when given none: the function's default too (functions/runner/workloads.py).
DEFAULT = "download"
