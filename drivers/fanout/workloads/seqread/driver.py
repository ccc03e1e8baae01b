"""The seqread workload's driver: fire's options (JOBS, BLOCK, DEPTH, FILE_SIZE, FROM, READ_MODE,
TARGET_GBPS), the checks
against the stack (the remote bucket deployed, the time limit), its objects, the cost (costs.py),
its report (report.py) and its deploy-level options, the remote region and the objects the stack
declares (deploy_options.py).

The parameters are defined once, in the function's seqread.py, loaded here as `definition`: a
value is checked by the code that will run it, and its errors become one-line usage errors.
"""

import itertools
import json
from typing import TYPE_CHECKING

from fanout.cloud import costs, params as deploy_params
from fanout.cloud.params import ephemeral_mib
from fanout.common import function_modules
from fanout.common.errors import UsageError
from fanout.common.sizes import format_size
from fanout.local.network import capacity
from fanout.results.sections import Report
from fanout.workloads.base import DeployPlace, Driver, Given, Plan, ReportModule
from fanout.workloads.seqread import WORKLOAD, costs as seqread_costs, declared, deploy_options, objects, region

definition = function_modules.load("seqread")
units = function_modules.load("units")
if TYPE_CHECKING:  # the same class, read by mypy from the function's folder on its path
    from seqread import Params
    from fanout.workloads.seqread.report import Across  # its report module loads numpy and matplotlib: read by mypy only
else:
    Params = definition.Params
# fire's flags: (argparse name, flag, Make variable, parser, default shown).
FLAGS = (
    ("jobs", "--jobs", "JOBS", definition.parse_jobs, f"readers per message, 1 to {definition.MAX_JOBS}"),
    ("block", "--block", "BLOCK", definition.parse_block, "bytes per ranged GET, 64KiB to 64MiB (default 8MiB)"),
    ("depth", "--depth", "DEPTH", definition.parse_depth, f"GETs in flight per job (fio's iodepth), 1 to {definition.MAX_DEPTH}"),
    ("file_size", "--file-size", "FILE_SIZE", definition.parse_file_size, "each job's object (default 64MiB)"),
    ("source", "--from", "FROM", definition.parse_source, "local (the stack's bucket) or remote (REMOTE_REGION's)"),
    ("read_mode", "--read-mode", "READ_MODE", definition.parse_read_mode,
     "fixed (BLOCK x DEPTH per job) or prefetch (Mountpoint v1.0.0's prefetcher; BLOCK and DEPTH unused)"),
    ("target_gbps", "--target-gbps", "TARGET_GBPS", definition.parse_target_gbps,
     f"prefetch: throughput target sizing the shared pool, 1 to {definition.MAX_TARGET_GBPS} (default 10)"),
)  # fmt: skip


def parse(values: dict) -> Params:
    """Params from text as a user writes it (None: the default); UsageError naming the bad value."""
    try:
        given = {name: parser(values[name]) for name, _, _, parser, _ in FLAGS if values.get(name) is not None}
    except definition.ParamError as exc:
        raise UsageError(str(exc)) from None
    return Params(**given)


def check_time_limit(fields: dict, timeout: int) -> None:
    problem = seqread_costs.time_limit_problem(fields, timeout)
    if problem:
        raise UsageError(f"invalid seqread run: {problem}")


def check_declared(stack, fields: dict) -> None:
    """Refuse a run whose objects the stack does not declare (its role could not read them),
    naming the JOB_FILES that adds them to those it has."""
    output = deploy_options.stack_fields(stack.workload_outputs)[declared.OUTPUT]
    has = declared.from_output(output)
    if not declared.covers(has, fields):
        wanted = declared.text(declared.union(has, declared.needed(fields)))
        size = units.format_size(fields["file_size"])
        raise UsageError(f"invalid seqread run: JOBS={fields['jobs']} x FILE_SIZE={size} reads objects stack "
                         f"{stack.stack!r} does not declare (it has {declared.text(has)}); deploy with "
                         f"JOB_FILES='{wanted}' first")  # fmt: skip


def estimate(count: int, deployed, fields: dict, function_region: str, remote_region: str) -> costs.Estimate:
    """`deployed`: a Stack or a sweep cell (fanout.stages.sweep_axes.CellParams)."""
    deployment = costs.Deployment(deployed.memory, deployed.concurrency, deployed.architecture,
                                  ephemeral_mib(deployed.object_size))  # fmt: skip
    return seqread_costs.estimate(count, deployment, fields, function_region, remote_region)


class SeqreadDriver(Driver["Across"]):
    """Its deploy-level options are the remote region and the declared objects (deploy_options.py)."""

    workload = WORKLOAD
    OPTIONS = tuple(name for name, *_ in FLAGS)
    DEPLOY_OPTIONS = deploy_options.DEPLOY_OPTIONS
    deploy_level = deploy_options

    def report(self) -> ReportModule:
        from fanout.workloads.seqread import report
        return report

    def add_fire_arguments(self, parser, sweep: bool = False) -> None:
        for name, flag, make, _, text in FLAGS:
            more = "; a list separated by spaces" if sweep else ""
            parser.add_argument(flag, dest=name, help=f"seqread ({make}): {text}{more}")

    def options_from(self, given: Given) -> Params:
        return parse({name: given.get(name) for name in self.OPTIONS})

    def plan(self, stack, params: Params, count: int) -> Plan:
        """Checked against the stack: the remote bucket deployed when FROM=remote, the objects
        declared, the time limit."""
        remote = region.stack_fields(stack.workload_outputs)
        if params.source == "remote" and not remote["remote_bucket"]:
            raise UsageError(f"invalid FROM 'remote': stack {stack.stack!r} has no remote bucket; deploy it with "
                             "REMOTE_REGION=<region>")  # fmt: skip
        fields = params.fields()
        check_time_limit(fields, stack.timeout)
        check_declared(stack, fields)
        return Plan({"workload": self.name, "options": fields},
                    estimate(count, stack, fields, stack.region, remote["remote_region"]))  # fmt: skip

    def prepare(self, stack, params, say) -> None:
        """The run's objects in the bucket it reads: uploaded when missing (the remote bucket's
        copied from the stack's with fire's --remote-copy), and kept."""
        fields = params.options
        objects.ensure(stack, fields["source"], fields["file_size"], fields["jobs"], say, copy=params.remote_copy)

    def sweep_options(self, given: Given, memories: tuple[int, ...]) -> tuple[dict, ...]:
        """Every combination of the lists given (JOBS, BLOCK, DEPTH, FILE_SIZE, FROM), each within
        the function's time limit; FROM outermost, then FILE_SIZE, JOBS, BLOCK, DEPTH."""
        lists: dict[str, list[str | None]] = {name: [*given.get(name, "").split()] or [None] for name in self.OPTIONS}
        order = ("source", "file_size", "jobs", "block", "depth", "read_mode", "target_gbps")
        combos = [parse(dict(zip(order, values))).fields() for values in itertools.product(*(lists[n] for n in order))]
        timeout = deploy_params.function_timeout_value(given.get("function_timeout") or deploy_params.DEFAULT_FUNCTION_TIMEOUT)
        for fields in combos:
            check_time_limit(fields, timeout)
        if len({json.dumps(c, sort_keys=True) for c in combos}) < len(combos):
            raise UsageError("invalid seqread sweep: a combination is given twice")
        return tuple(combos)

    def sweep_deploy_options(self, chosen: dict, given: Given, place: DeployPlace, combos: tuple) -> dict:
        """The sweep deploys every object its cells read (deploy_options.for_sweep)."""
        return deploy_options.for_sweep(chosen, given, place, combos)

    def describe_cell(self, cell) -> str:
        return f"{self.name} {cell.options}"

    def cell_estimate(self, count: int, cell, deployed: dict) -> costs.Estimate:
        """The region pair is the stack's: its region and remote region."""
        return estimate(count, cell, cell.options, deployed["region"], deployed.get("remote_region", ""))

    def demand(self, cell) -> capacity.Demand:
        """JOBS readers, every job its FILE_SIZE in the read mode's GETs (definition.gets_per_job),
        as many in flight as definition.in_flight allows. The other region's slower path (the
        model's rate factor) is left out: the draw is at most this."""
        f = cell.options
        gets = f["jobs"] * definition.gets_per_job(f)
        how = (f"prefetch at {f['target_gbps']} Gbit/s" if f.get("read_mode") == "prefetch"
               else f"{format_size(f['block'])} blocks, depth {f['depth']}")  # fmt: skip
        return capacity.Demand(f"{self.name} of {f['jobs']} x {format_size(f['file_size'])}, {how}",
                               definition.in_flight(f), down=capacity.Flow(f["jobs"] * f["file_size"], gets))  # fmt: skip

    def report_across(self, run_ids: list[str], folder, title: str, options: dict | None = None) -> "Across":
        from fanout.workloads.seqread import report

        return report.across(run_ids, folder, title)

    def across_sections(self, summary: "Across", folder) -> Report:
        from fanout.workloads.seqread import report

        return report.across_sections(summary, folder)
