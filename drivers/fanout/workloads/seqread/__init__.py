"""The seqread workload: fio-style sequential reads by JOBS readers, from the stack's bucket or
another region's (drivers/fanout/workloads/seqread/README.md)."""

from fanout.common.sizes import format_size
from fanout.common.workload import CellField, Workload

WORKLOAD = Workload(
    "seqread", "fio-style sequential reads by JOBS parallel readers, from this region's bucket or another's",
    (CellField("source", "from", "from {}"), CellField("jobs", "jobs", "{} jobs", numeric=True),
     CellField("file_size", "file size", numeric=True, show=format_size),
     CellField("block", "block", "block {}", numeric=True, show=format_size),
     CellField("depth", "depth", "depth {}", numeric=True)),
    "seqread-percentiles",
)  # fmt: skip
