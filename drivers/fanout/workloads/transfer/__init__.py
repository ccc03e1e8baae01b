"""The transfer workload: multipart uploads, many small objects and server-side copies
(README.md beside it)."""

from fanout.common.sizes import format_decimal_size, format_size
from fanout.common.workload import CellField, Workload


def _binary(n: int) -> str:
    """A part size or threshold (binary units, as PART_SIZE is written); 0: not the operation's."""
    return format_size(n) if n else "-"


def _decimal(n: int) -> str:
    return format_decimal_size(n) if n else "-"


def _count(n: int) -> str:
    return str(n) if n else "-"


WORKLOAD = Workload(
    "transfer", "upload (multipart), small-files or copy, with the transfer tuning of THREADS, PART_SIZE and others",
    (CellField("operation", "operation"), CellField("method", "method"), CellField("client", "client"),
     CellField("direction", "direction"),
     CellField("size", "size", numeric=True, show=_decimal), CellField("part_size", "part size", numeric=True, show=_binary),
     CellField("threshold", "threshold", numeric=True, show=_binary),
     CellField("threads", "threads", "{} threads", numeric=True, show=_count),
     CellField("files", "files", "{} files", numeric=True, show=_count),
     CellField("prefixes", "prefixes", "{} prefixes", numeric=True, show=_count),
     CellField("fan", "fan", "fan {}", numeric=True, show=_count),
     CellField("client_per_object", "client per object", "client per object {}", numeric=True, show=_count)),
    "transfer-percentiles",
    # No transfer run is pinned: the column is always empty. It stays so that transfer.csv keeps
    # the columns it has been written with (they came from the download workload's pin when every
    # workload's cells carried it).
    run_cells=(CellField("pin", "pin"),),
)  # fmt: skip
