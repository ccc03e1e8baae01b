"""The latency workload: PUT then GET objects of several sizes per storage class (docs/aws.md)."""

from fanout.common.workload import CellField, Workload
from fanout.common.sizes import format_decimal_size

WORKLOAD = Workload(
    "latency", "PUT then GET objects of several sizes per storage class, each call timed",
    (CellField("storage", "storage"), CellField("operation", "operation"),
     CellField("size", "size", numeric=True, show=format_decimal_size)),
    "latency-percentiles", deployed=("storage",),
)  # fmt: skip
