"""The latency workload's driver: fire's options, the checks against the stack, the cost (its
model: costs.py), its report (report.py) and its deploy-level storage classes (storage.py).

The parameters (sizes, repetitions, storage classes) are defined once, in the function's
latency.py, loaded here as `definition`: a `SIZES=` value is checked by the code that will run
it, and its errors become one-line usage errors here.
"""

import json
import math
from typing import TYPE_CHECKING

from fanout.cloud import costs
from fanout.common import function_modules
from fanout.results.sections import Report
from fanout.workloads.latency import storage as storage_classes
from fanout.common.errors import UsageError
from fanout.cloud.params import MEMORY_HEADROOM_MIB, ephemeral_mib  # the runtime's; the object comes on top
from fanout.common.sizes import format_size
from fanout.local.network import capacity
from fanout.workloads.base import DeployPlace, Driver, Given, Plan, ReportModule
from fanout.workloads.latency import WORKLOAD
from fanout.workloads.latency import costs as latency_costs

definition = function_modules.load("latency")
if TYPE_CHECKING:  # the same class, read by mypy from the function's folder on its path
    from latency import Params
    from fanout.workloads.latency.report import Across  # its report module loads numpy and matplotlib: read by mypy only
else:
    Params = definition.Params
LIST_SEPARATOR = ";"  # between the size lists of a sweep axis


def parse(sizes: str | None, reps: str | None, storage: str | None, order: str | None = None,
          client: str | None = None) -> Params:  # fmt: skip
    """The run's parameters from text as a user writes them; UsageError naming the bad value."""
    try:
        return Params(
            sizes=definition.parse_sizes(sizes) if sizes is not None else definition.DEFAULT_SIZES,
            reps=definition.parse_reps(reps) if reps is not None else definition.DEFAULT_REPS,
            storage=definition.parse_storage(storage) if storage is not None else (),
            order=definition.parse_choice("REP_ORDER", order, definition.ORDERS) if order else definition.ORDERS[0],
            client=definition.parse_choice("CALL_CLIENT", client, definition.CLIENTS) if client else definition.CLIENTS[0],
        )
    except definition.ParamError as exc:
        raise UsageError(str(exc)) from None


def check_memory(params: Params, memory_mb: int) -> None:
    """Refuse sizes the function's memory cannot hold (one object at a time plus headroom)."""
    needed = math.ceil(max(params.sizes) / 2**20) + MEMORY_HEADROOM_MIB
    if needed > memory_mb:
        raise UsageError(
            f"size {max(params.sizes)} bytes needs a function of at least {needed} MB (the object in memory plus "
            f"{MEMORY_HEADROOM_MIB} MB headroom), the stack has {memory_mb} MB: redeploy with MEMORY={needed} or more"
        )


def estimate(count: int, deployed, fields: dict) -> costs.Estimate:
    """The cost of `count` messages with these message fields (`Params.fields()`), each storage
    class at its prices; `storage` empty (every deployed class, not known here) is priced as the
    default deployment's. `deployed`: a Stack or a sweep cell (fanout.stages.sweep_axes.CellParams)."""
    storage = tuple(fields["storage"]) or storage_classes.DEFAULT
    deployment = costs.Deployment(deployed.memory, deployed.concurrency, deployed.architecture,
                                  ephemeral_mib(deployed.object_size))  # fmt: skip
    return latency_costs.estimate(count, deployment, fields["sizes"], fields["reps"], storage)


class LatencyDriver(Driver["Across"]):
    """Its deploy-level options are the storage classes its stack is deployed with (storage.py)."""

    workload = WORKLOAD
    # fire's --sizes, --reps, --storage, --rep-order, --call-client (SIZES, REPS, STORAGE, REP_ORDER, CALL_CLIENT)
    OPTIONS = ("sizes", "reps", "storage", "rep_order", "call_client")
    DEPLOY_OPTIONS = storage_classes.DEPLOY_OPTIONS
    deploy_level = storage_classes

    def report(self) -> ReportModule:
        from fanout.workloads.latency import report
        return report

    def add_fire_arguments(self, parser, sweep: bool = False) -> None:
        """--sizes, --reps, --rep-order, --call-client and (in fire, not in a sweep, whose
        --storage is deploy's) --storage."""
        sizes = " ".join(map(str, definition.DEFAULT_SIZES))
        orders, clients = definition.ORDERS, definition.CLIENTS
        parser.add_argument("--sizes", help=f"latency: object sizes separated by spaces, 1 byte to 100MB (default: {sizes})")
        parser.add_argument("--reps", help=f"latency: repetitions per size (default: {definition.DEFAULT_REPS})")
        parser.add_argument("--rep-order", help=f"latency: {orders[0]} (the storage classes take turns within each "
                            f"repetition; the default) or {orders[1]} (every repetition of a class, then the next's)")
        parser.add_argument("--call-client", help=f"latency: {clients[0]} (one client per message, its connection "
                            f"reused; the default) or {clients[1]} (a new client built before each call's timer)")
        if not sweep:
            parser.add_argument(
                "--storage",
                help=f"latency: storage classes to test, of {', '.join(definition.STORAGE_CLASSES)} (default: every deployed one)",
            )

    def sweep_options(self, given: Given, memories: tuple[int, ...]) -> tuple[dict, ...]:
        """A sweep's combinations of parameters: `--sizes` one or more size lists separated by ';'
        (`1 1KB; 1MB 100MB`), `--reps` one or more counts; each combination is one cell's message
        fields, sizes lists outermost. Each must fit every memory size of the sweep."""
        sizes_text, reps_text = given.get("sizes"), given.get("reps")
        size_lists = [None] if sizes_text is None else sizes_text.split(LIST_SEPARATOR)
        reps = [None] if reps_text is None else (reps_text.split() or [reps_text])
        storage, order, client = given.get("storage"), given.get("rep_order"), given.get("call_client")
        params = [parse(sizes, count, storage, order, client) for sizes in size_lists for count in reps]
        for memory in memories:
            for each in params:
                check_memory(each, memory)
        combos = [each.fields() for each in params]
        if len({json.dumps(c, sort_keys=True) for c in combos}) < len(combos):
            raise UsageError(f"invalid sweep --sizes {sizes_text!r} --reps {reps_text!r}: a combination is given twice")
        return tuple(combos)

    def cell_fire_fields(self, cell) -> dict:
        """FireParams' fields for a sweep cell (fanout.stages.sweep_axes.CellParams): its message fields."""
        return {"workload": definition.NAME, "options": cell.options}

    def describe_cell(self, cell) -> str:
        """What a sweep cell (fanout.stages.sweep_axes.CellParams) measures: the workload and its message fields."""
        return f"{definition.NAME} {cell.options}"

    def cell_estimate(self, count: int, cell, deployed: dict) -> costs.Estimate:
        """The cost of `count` messages of a sweep cell."""
        return estimate(count, cell, cell.options)

    def demand(self, cell) -> capacity.Demand:
        """Per round, size and storage class: a PUT, a GET and a DELETE, one request at a time (the
        storage classes only repeat the rounds: empty, every deployed one, counts as one)."""
        fields = cell.options
        rounds = fields["reps"] * max(1, len(fields["storage"]))
        moved, requests = rounds * sum(fields["sizes"]), rounds * len(fields["sizes"])
        sizes = " ".join(format_size(size) for size in fields["sizes"])
        return capacity.Demand(f"{definition.NAME} PUT, GET and DELETE of {sizes}", 1,
                               down=capacity.Flow(moved, requests), up=capacity.Flow(moved, 2 * requests))

    def options_from(self, given: Given) -> Params:
        """fire's --sizes, --reps, --storage, --rep-order, --call-client, checked before anything
        touches the stack."""
        return parse(given.get("sizes"), given.get("reps"), given.get("storage"), given.get("rep_order"),
                     given.get("call_client"))  # fmt: skip

    def plan(self, stack, params: Params, count: int) -> Plan:
        """fire's latency run on `stack`: checked against its memory and the storage classes its
        function was deployed with, messages' fields, cost of `count`."""
        check_memory(params, stack.memory)
        deployed = storage_classes.deployed(stack)  # the stack's `storage` output
        missing = [name for name in params.storage if name not in deployed]
        if missing:
            raise UsageError(f"invalid storage {' '.join(missing)!r}: stack {stack.stack!r} has {' '.join(deployed)} "
                             "(STORAGE at deploy)")  # fmt: skip
        fields = params.fields()
        cost = estimate(count, stack, {**fields, "storage": params.storage or deployed})
        return Plan({"workload": definition.NAME, "options": fields}, cost)

    def report_across(self, run_ids: list[str], folder, title: str, options: dict | None = None) -> "Across":
        """The tables across runs (a sweep's closing report), written into `folder`; no options of
        its own (a latency call has no concurrency target to run at)."""
        from fanout.workloads.latency import report as latency_report

        return latency_report.across(run_ids, folder, title)

    def across_sections(self, summary: "Across", folder) -> Report:
        from fanout.workloads.latency import report as latency_report

        return latency_report.across_sections(summary, folder)

    def compare(self, a_ids: list[str], b_ids: list[str], options: dict | None = None) -> Report:
        """Not a capability of this workload: its runs are read side by side in one report."""
        raise UsageError(f"compare compares download throughput; these are {definition.NAME} runs: "
                         f"`make report RUNS={','.join(a_ids + b_ids)}` shows their tables side by side")
