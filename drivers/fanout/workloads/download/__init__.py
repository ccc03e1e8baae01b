"""The download workload: download the stack's test object with a strategy, timed (docs/aws.md)."""

from fanout.common.workload import CellField, Workload
from fanout.common.sizes import format_size

WORKLOAD = Workload(
    "download", "download the stack's test object with a strategy, timed (docs/strategies.md)",
    (CellField("object_size", "object", numeric=True, show=format_size, short="size"), CellField("strategy", "strategy")),
    "download-percentiles", deployed=("object_size",),
    run_cells=(CellField("pin", "pin"),),  # fire's --pin, in run.json; None: not pinned
)  # fmt: skip
