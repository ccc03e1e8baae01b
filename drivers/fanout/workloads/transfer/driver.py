"""The transfer workload's driver: fire's options, the checks against the stack (memory, /tmp,
the backend, FAN's groups), the cost (costs.py), the sweep's lists and the report (report.py).

The parameters are defined once, in the function's transfer.py, loaded here as `definition`: a
value is checked by the code that will run it, and its errors become one-line usage errors.
"""

import itertools
import math
from typing import TYPE_CHECKING

from fanout.cloud import costs, params as deploy_params
from fanout.cloud.params import MAX_EPHEMERAL_MIB, MEMORY_HEADROOM_MIB, ephemeral_mib  # the runtime's memory
from fanout.common import function_modules
from fanout.local import backends
from fanout.common.errors import UsageError
from fanout.common.sizes import format_size
from fanout.local.network import capacity
from fanout.results.sections import Report
from fanout.workloads.base import Driver, Given, Plan, ReportModule
from fanout.workloads.transfer import WORKLOAD, costs as transfer_costs

definition = function_modules.load("transfer")
operations = function_modules.load("transfer_ops")
if TYPE_CHECKING:  # the same class, read by mypy from the function's folder on its path
    from transfer import Params
    from fanout.workloads.transfer.report import Across  # its report module loads numpy and matplotlib: read by mypy only
else:
    Params = definition.Params
OPTIONS = ("operation", "size", "threads", "part_size", "threshold", "client", "fan", "files", "direction",
           "prefixes", "client_per_object", "method")  # fmt: skip
SWEPT = ("size", "threads", "part_size", "method", "client")  # a sweep takes these as lists (spaces between)
SHOWN = {field.name: field.show for field in WORKLOAD.cells}  # how the report writes a field's value (sizes)
TMP_HEADROOM_MIB = 10
# One boto3 client built from its own session (CLIENT_PER_OBJECT=1), held: each loads its own
# service model. Measured with the pinned SDK (sdk-requirements.txt: boto3 1.44.5, botocore
# 1.44.8) on Python 3.11, N such clients built at once by N threads and kept, the process's RSS
# (VmRSS) before and after: 17 MiB for 1, then 12.9 MiB each for 10, 15.1 for 50, 13.6 for 100
# (a function at THREADS=100 peaked at 1,337 MB, at 50 at 740 MB). Above every many-client figure
# (the first client also loads what the others share); tests/test_transfer.py measures 20 against it.
CLIENT_MIB = 16
READ_CHUNK = 2**20  # a small-files GET's body is read 1 MiB at a time (transfer_ops.small_files)


def parse(given: dict) -> Params:
    """The parameters from text as a user writes them; UsageError naming the bad value."""
    try:
        return definition.parse(given)
    except definition.ParamError as exc:
        raise UsageError(str(exc)) from None


def held_in_memory(p: Params) -> tuple[int, str]:
    """Bytes one message holds in memory besides the runtime, and what holds them (the values
    that decide it, for the refusal's one line)."""
    if p.operation == "small-files":
        workers = min(p.threads, p.files)
        reads = workers * min(p.size, READ_CHUNK) if p.direction == "get" else 0
        clients = workers * CLIENT_MIB * 2**20 if p.client_per_object else 0
        held = p.size + reads + clients
        return held, (f"THREADS {p.threads} with CLIENT_PER_OBJECT=1: {workers} clients at once ({CLIENT_MIB} MiB "
                      "each) and the objects in flight" if clients else f"SIZE {p.size} with THREADS {p.threads}")
    if p.operation == "upload" and p.fan > 1:  # each thread reads its part, then sends it
        parts = min(p.threads, math.ceil(p.parts / p.fan))
        return parts * p.part_size, f"PART_SIZE {format_size(p.part_size)} with THREADS {p.threads}: {parts} parts"
    source = Params(operation="upload", size=p.size, threads=p.threads, part_size=p.part_size, threshold=p.threshold)
    if not source.multipart:
        return 0, f"SIZE {p.size}"  # one PutObject streams from the pattern
    parts = operations.parts_in_memory(source)  # an upload's, or the copy's source's
    return parts * min(p.part_size, p.size), (
        f"PART_SIZE {format_size(p.part_size)} with SIZE {format_size(p.size)} and THREADS {p.threads}: {parts} parts in "
        "memory")


def memory_needed_mib(p: Params) -> int:
    """What one message needs: what it holds (held_in_memory) plus the headroom."""
    return math.ceil(held_in_memory(p)[0] / 2**20) + MEMORY_HEADROOM_MIB


def check_against(p: Params, backend: str, memory_mb: int, tmp_mib: int) -> None:
    """Refuse what the deployed function cannot run: more memory than it has, a through-function
    copy larger than its /tmp, CLIENT=crt against the emulator."""
    needed, (_, what) = memory_needed_mib(p), held_in_memory(p)
    if needed > memory_mb:  # at most 7.5 GiB + headroom (SIZE 5 GiB in 3 parts): within Lambda's 10240 MB
        raise UsageError(f"invalid {what}: needs a function of at least {needed} MB ({MEMORY_HEADROOM_MIB} MB "
                         f"headroom), the stack has {memory_mb} MB: redeploy with MEMORY={needed} or more")  # fmt: skip
    if p.operation == "copy" and p.method == "through-function":
        needed_tmp = math.ceil(p.size / 2**20) + TMP_HEADROOM_MIB
        if needed_tmp > tmp_mib:
            top = f" (Lambda's largest /tmp is {MAX_EPHEMERAL_MIB} MB)" if needed_tmp > MAX_EPHEMERAL_MIB else \
                f": redeploy with OBJECT_SIZE={needed_tmp - TMP_HEADROOM_MIB}MiB or more, which sizes /tmp"
            raise UsageError(f"invalid SIZE {p.size} with METHOD=through-function: the copy goes through /tmp, which holds "
                             f"{tmp_mib - TMP_HEADROOM_MIB} MiB on this stack{top}")  # fmt: skip
    if p.client == "crt" and p.operation == "upload" and backends.get(backend).embedded_emulator:
        raise UsageError("invalid CLIENT 'crt' with --backend local: boto3's CRT client ignores custom endpoints, so it "
                         "runs only on AWS; use CLIENT=classic")  # fmt: skip


def check_time_limit(p: Params, timeout: int) -> None:
    """Refuse a message predicted past the function's timeout (transfer_costs.time_limit_problem)."""
    problem = transfer_costs.time_limit_problem(p, timeout)
    if problem:
        raise UsageError(f"invalid transfer run: {problem}")


def connections(p: Params) -> int:
    """Requests one message has in flight at most: THREADS, within its objects (small-files) or
    its parts (FAN messages share one upload's); one for an upload in a single PUT."""
    if p.operation == "small-files":
        return min(p.threads, p.files)
    if p.operation == "copy":  # the source's upload, then the copy's parts
        return min(p.threads, math.ceil(p.size / p.part_size))
    return min(p.threads, math.ceil(p.parts / p.fan)) if p.multipart else 1


def check_fan(p: Params, count: int) -> None:
    """FAN=N needs whole groups of N messages."""
    if count % p.fan:
        raise UsageError(f"invalid MESSAGES {count} with FAN {p.fan}: FAN messages share one upload, so the run "
                         f"needs a multiple of {p.fan} messages")  # fmt: skip


def _texts(given: Given) -> dict:
    """Its options on the command line, as text (None: not given)."""
    return {name: given.get(name) for name in OPTIONS}


def _deployment(deployed) -> costs.Deployment:
    return costs.Deployment(deployed.memory, deployed.concurrency, deployed.architecture,
                            ephemeral_mib(deployed.object_size))  # fmt: skip


class TransferDriver(Driver["Across"]):
    """No deploy-level options: the workload writes under transfer/ of the stack's bucket."""

    workload = WORKLOAD
    OPTIONS = OPTIONS

    def report(self) -> ReportModule:
        from fanout.workloads.transfer import report
        return report

    def add_fire_arguments(self, parser, sweep: bool = False) -> None:
        lists = " (a sweep: a list, spaces between)"
        helps = {
            "operation": f"transfer: {', '.join(definition.OPERATIONS)} (default: upload)",
            "size": "transfer: object size (upload, copy: up to 5GiB; small-files: 1 byte to 100MB)",
            "threads": "transfer: concurrent requests, 1 to 256 (default: 10)",
            "part_size": "transfer: multipart part size, 5MiB to 5GiB (default: 8MiB)",
            "threshold": "transfer: size from which upload and copy go multipart (default: 8MiB)",
            "client": f"transfer upload: {' or '.join(definition.CLIENTS)} (crt: AWS only)",
            "fan": "transfer upload: N messages share one multipart upload (default: 1)",
            "files": "transfer small-files: objects per message (default: 100)",
            "direction": "transfer small-files: put or get (default: put)",
            "prefixes": "transfer small-files: prefixes the objects spread over (default: 1)",
            "client_per_object": "transfer small-files: 1 opens a new client per object (default: 0)",
            "method": f"transfer copy: {', '.join(definition.METHODS)} (default: part-copy)",
        }
        for name in OPTIONS:
            parser.add_argument(f"--{name.replace('_', '-')}", dest=name,
                                help=helps[name] + (lists if sweep and name in SWEPT else ""))  # fmt: skip

    def options_from(self, given: Given) -> Params:
        return parse(_texts(given))

    def plan(self, stack, p: Params, count: int) -> Plan:
        """fire's transfer run on `stack`: checked against its memory, /tmp and backend, and FAN's groups."""
        check_against(p, stack.backend, stack.memory, ephemeral_mib(stack.object_size))
        check_time_limit(p, stack.timeout)
        check_fan(p, count)
        return Plan({"workload": definition.NAME, "options": p.fields()},
                    transfer_costs.estimate(count, _deployment(stack), p))  # fmt: skip

    def sweep_options(self, given: Given, memories: tuple[int, ...]) -> tuple[dict, ...]:
        """Every combination of SIZE, THREADS, PART_SIZE, METHOD and CLIENT (each a list, spaces
        between), with the other options as given; each checked against the function timeout and
        every memory size (the backend and /tmp are checked when each cell fires)."""
        text = _texts(given)
        lists = {name: (text[name].split() or [text[name]]) if text[name] is not None else [None] for name in SWEPT}
        timeout = deploy_params.function_timeout_value(given.get("function_timeout") or deploy_params.DEFAULT_FUNCTION_TIMEOUT)
        combos = []
        for values in itertools.product(*lists.values()):
            p = parse({**text, **dict(zip(SWEPT, values))})
            check_time_limit(p, timeout)
            for memory in memories:
                check_against(p, "aws", memory, MAX_EPHEMERAL_MIB)
            combos.append(p.fields())
        if len({tuple(sorted(c.items())) for c in combos}) < len(combos):
            raise UsageError("invalid sweep: a combination of SIZE, THREADS, PART_SIZE, METHOD, CLIENT is given twice")
        return tuple(combos)

    def describe_cell(self, cell) -> str:
        o = cell.options
        shown = {name: _shown(name, o[name]) for name in ("size", "threads", "part_size", "method", "client")
                 if o[name] not in ("-", 0)}  # fmt: skip
        return f"{definition.NAME} {o['operation']} " + " ".join(f"{k}={v}" for k, v in shown.items())

    def cell_estimate(self, count: int, cell, deployed: dict) -> costs.Estimate:
        return transfer_costs.estimate(count, _deployment(cell), parse(_as_text(cell.options)))

    def demand(self, cell) -> capacity.Demand:
        """The bytes one message uploads and reads and the requests that carry them (its cost
        model's count, transfer_costs.message_requests), on the connections it opens at once."""
        p = parse(_as_text(cell.options))
        r = transfer_costs.message_requests(p)
        return capacity.Demand(self.describe_cell(cell), connections(p),
                               down=capacity.Flow(r.downloaded, math.ceil(r.gets)),
                               up=capacity.Flow(r.uploaded, math.ceil(r.puts + r.free)))  # fmt: skip

    def report_across(self, run_ids: list[str], folder, title: str, options: dict | None = None) -> "Across":
        from fanout.workloads.transfer import report as transfer_report

        return transfer_report.across(run_ids, folder, title)

    def across_sections(self, summary: "Across", folder) -> Report:
        from fanout.workloads.transfer import report as transfer_report

        return transfer_report.across_sections(summary, folder)


def _shown(name: str, value) -> str:
    """A field's value as the report writes it (sizes in their units)."""
    show = SHOWN.get(name)
    return show(value) if show else str(value)


def _as_text(fields: dict) -> dict:
    """A message's fields (Params.fields()) as parse() takes them: its operation's options only."""
    return {"operation": fields["operation"],
            **{name: str(fields[name]) for name in definition.APPLIES[fields["operation"]]}}  # fmt: skip
