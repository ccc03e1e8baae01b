"""`fanout sweep`: the whole experiment of many cells in one command, stoppable and resumable.

Every parameter given as a list is an axis (fanout.stages.sweep_axes); the cells are their
product. Every value, the whole cost and (on AWS) the account's quotas are checked before
anything is created; then cell after cell goes through the same functions `make
deploy/fire/wait/report` call, with fresh execution environments unless --keep-warm, and the
manifest (fanout.results.sweep_folders) records each step, so that --resume continues where a
Ctrl-C stopped. The details: README.md, *A whole study in one command: `make sweep`*.
"""

import argparse
import dataclasses
import functools
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from botocore.exceptions import ClientError
from rich.console import Console

from fanout.cloud import costs, owner, params, terraform
from fanout.cloud.stack import Stack
from fanout.stages import sweep_axes as axes, command_line, deploy, fire, report as reporting, wait
from fanout.workloads.base import DeployPlace, Given
from fanout.common import interrupts, queue_state
from fanout.common.backend import Hosting
from fanout.local import backends
from fanout.workloads import registry as workloads
from fanout.results import run_folders as runs, run_record, sweep_folders as sweeps, terminal
from fanout.cloud import stack as stacks
from fanout.common.errors import FanoutError, UsageError
from fanout.local.network import options as network_options
from fanout.local.network.model import NetworkModel
from fanout.common.sizes import format_size

IDLE_POLL_SECONDS = 1.0
IDLE_SLACK_SECONDS = 60  # beyond the function timeout, for the last invocation to end
# The texts a sweep takes when its flag is not given (its command line's defaults, and a study's,
# whose file names neither).
DEFAULTS = {"multiplier": str(fire.DEFAULT_MULTIPLIER), "tag": "sweep", "order": axes.ORDERS[0],
            "timeout": str(wait.DEFAULT_TIMEOUT), "workload": workloads.DEFAULT,
            "network_scale": network_options.AUTO}  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sweep", help="run every cell of a parameter sweep, one after another")
    deploy.add_target_arguments(parser, sweeps_own=True)
    params.add_arguments(parser, lists=True)
    deploy.add_verbose(parser)
    parser.add_argument("--multiplier", default=DEFAULTS["multiplier"], help="messages per concurrency slot")
    parser.add_argument("--tag", default=DEFAULTS["tag"], help="experiment tag of every run (default: sweep)")
    parser.add_argument("--order", default=DEFAULTS["order"], help="given (default) or shuffled (seeded; see --seed)")
    parser.add_argument("--seed", help="seed of --order shuffled (default: a random one, printed and recorded)")
    parser.add_argument("--keep-warm", action="store_true", help="do not start each cell with fresh environments")
    parser.add_argument("--destroy-after", action="store_true", help="tear the stack down once every cell is done")
    parser.add_argument("--resume", metavar="SWEEP", help="continue sweep SWEEP (an id, or latest) at its first unfinished cell")
    parser.add_argument("--timeout", default=DEFAULTS["timeout"], help="per cell: give up waiting after this many seconds")
    parser.add_argument("--yes", action="store_true", help="run even when the sweep is large or costly")
    parser.add_argument("--workload", default=DEFAULTS["workload"],
                        help=f"what each message measures: {', '.join(workloads.DRIVERS)} (default: {workloads.DEFAULT}); "
                        "its options may be lists (latency: --sizes lists separated by ';', --reps by spaces)")  # fmt: skip
    for workload in workloads.DRIVERS.values():
        workload.add_fire_arguments(parser, sweep=True)  # deploy's flags stay deploy's here
    parser.add_argument("--cell", action="append", metavar="KEY=VALUE ...",
                        help="an explicit cell after the product, repeatable: values replacing the lists of the "
                        "flags named (an axis or the workload's option, e.g. 'jobs=1 file_size=3GiB'); the "
                        "other flags keep theirs")  # fmt: skip
    network_options.add_arguments(parser)
    parser.set_defaults(func=run, check=check)


@functools.cache  # the parser is fixed: read once, not once per cell or per study key
def flags() -> dict[str, str]:
    """Each flag of `fanout sweep` that takes a value, by its name without dashes (`file_size`,
    `from`; `mode`, the strategy's old name, too), and the argparse name its value goes to: what a
    --cell word and a study's key may name. argparse lists its arguments only in `_actions`."""
    subparsers = argparse.ArgumentParser().add_subparsers()
    register(subparsers)
    return {flag[2:].replace("-", "_"): action.dest for action in subparsers.choices["sweep"]._actions
            if action.nargs != 0 for flag in action.option_strings if flag.startswith("--")}  # fmt: skip


@dataclass(frozen=True)
class SweepGiven:
    """A sweep as given, before any value is checked (from_given checks them): its backend, each
    flag's text by argparse name (a command line's, or a study's keys; those not given absent,
    DEFAULTS for those with one), the explicit cells (--cell's KEY=VALUE texts) and the switches."""

    backend: str
    texts: Given
    cells: tuple[str, ...] = ()
    keep_warm: bool = False
    destroy_after: bool = False


@dataclass(frozen=True)
class Resume:
    """The sweep to continue at its first unfinished cell: its id, or latest (--resume)."""

    ref: str


@dataclass(frozen=True)
class SweepParams:
    """How a sweep is made; everything the manifest records besides its cells."""

    backend: str
    stack: str
    region: str
    axes: axes.Axes
    multiplier: int
    tag: str
    order: str = "given"
    seed: int | None = None
    keep_warm: bool = False
    destroy_after: bool = False
    timeout: float = wait.DEFAULT_TIMEOUT
    endpoint: str = ""
    function_timeout: int = params.DEFAULT_FUNCTION_TIMEOUT
    ephemeral_storage: int | None = None  # /tmp in MB; None: sized from each cell's object
    network: str | None = None  # local backend: the model every cell is hosted under (None: options.DEFAULT)
    network_scale: str = network_options.AUTO  # a number, or auto: picked again after each redeploy
    # The workloads' deploy-level options (fanout.workloads.registry.deploy_options), deployed with every cell.
    workload_options: dict = field(default_factory=dict)

    def deployed(self) -> dict:
        """What a cell's estimate reads of the stack it runs on (Driver.cell_estimate)."""
        return {"region": self.region, **self.workload_options}

    def settings(self) -> dict:
        return {
            "backend": self.backend, "stack": self.stack, "region": self.region, "endpoint": self.endpoint,
            "axes": self.axes.as_dict(), "varying": self.axes.varying(), "order": self.order, "seed": self.seed,
            "keep_warm": self.keep_warm, "destroy_after": self.destroy_after, "multiplier": self.multiplier,
            "tag": self.tag, "timeout": self.timeout, "function_timeout": self.function_timeout,
            "ephemeral_storage": self.ephemeral_storage, "network": self.network, "network_scale": self.network_scale,
            **self.workload_options,
            "version": runs.project_version(),
        }  # fmt: skip

    @classmethod
    def from_manifest(cls, manifest: sweeps.Manifest) -> "SweepParams":
        names = ("backend", "stack", "region", "multiplier", "tag", "order", "seed", "keep_warm", "destroy_after",
                 "timeout", "endpoint", "function_timeout", "ephemeral_storage", "network", "network_scale")  # fmt: skip
        return cls(axes=axes.Axes.from_dict(manifest.axes), **{name: getattr(manifest, name) for name in names},
                   workload_options=workloads.recorded_deploy_options(manifest.extra))  # fmt: skip


def check(args: argparse.Namespace) -> SweepParams | Resume:
    """The command line, checked with no side effect: a new sweep's values, or the sweep to resume
    (the manifest has its values)."""
    return Resume(args.resume) if args.resume else from_given(given_of(args))


def given_of(args: argparse.Namespace) -> SweepGiven:
    """The sweep's command line as SweepGiven."""
    return SweepGiven(args.backend, command_line.texts(args), tuple(args.cell or ()), args.keep_warm,
                      args.destroy_after)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    run_sweep(check(args), args.yes, args.verbose, Console())
    return 0


def run_sweep(sweep: SweepParams | Resume, confirmed: bool = False, verbose: bool = False,
              console: Console | None = None) -> sweeps.Manifest:
    """A new sweep (`sweep`, checked), or the one `Resume` names, run to its end and reported,
    its progress on `console` (the command's; None: the terminal), Terraform's output there too
    when `verbose`; its manifest. `confirmed` (--yes): run it even when large or costly."""
    console = console or Console()
    if isinstance(sweep, Resume):
        manifest = resume(sweep.ref, confirmed, console)
    else:
        manifest = start(sweep, confirmed, console)
    started_emulator = backends.get(manifest.backend).will_start()
    with terraform.output_to_log(manifest.backend, manifest.stack, verbose):
        manifest = execute(manifest, console)
        finish(manifest, console, started_emulator)
    return manifest


def from_given(given: SweepGiven) -> SweepParams:
    """Every value checked, one line naming the first bad one; nothing is created."""
    texts = {**DEFAULTS, "endpoint": deploy.default_endpoint(), **given.texts, "backend": given.backend}
    order = axes.order(texts["order"])
    seed = params.integer("--seed", texts["seed"], 0, 2**63) if "seed" in texts else None
    if order == "shuffled" and seed is None:
        seed = secrets.randbelow(2**32)
    inputs = {**params.DEFAULTS, **params.given(texts)}  # its own axes: never the deployed stack's values
    workload = workloads.get(texts["workload"])
    fire.check_options(workload, texts, deploy_level=(*params.AXES, *workloads.deploy_option_names()))  # deploy's here
    grid = _grid(texts, workload)
    grid = dataclasses.replace(grid, more=tuple(_grid(cell, workload) for cell in _cells(texts, given.cells, workload)))
    endpoint = params.endpoint(backends.get(given.backend), texts["endpoint"])
    network = texts.get("network")
    network_options.check(network, texts["network_scale"])
    if network not in (None, network_options.NONE) and not backends.get(given.backend).hosts_function:
        raise UsageError(f"--network {network} shapes the local host's environments; "
                         "on AWS Lambda's own network applies")
    ephemeral = params.ephemeral_value(inputs["ephemeral_storage"])
    # The workloads check their options against the stack and region the sweep deploys; the
    # sweep's workload adds what its cells need deployed.
    region = params.region(inputs["region"])
    stack = params.stack_name(texts["stack"]) if texts.get("stack") else owner.sweep_stack(region)  # never the user's default
    place = DeployPlace(stack, inputs["region"], given.backend, sweep=True)
    chosen = workloads.deploy_options(texts, place)
    combos = tuple(combo for each in grid.every() for combo in each.options)
    chosen = workload.sweep_deploy_options(chosen, texts, place, combos)
    return SweepParams(
        backend=given.backend, stack=stack, region=region,
        axes=grid, multiplier=fire.positive_int("--multiplier (MULTIPLIER)", texts["multiplier"]),
        tag=fire.check_tag(texts["tag"]), order=order, seed=seed, keep_warm=given.keep_warm,
        destroy_after=given.destroy_after, timeout=wait.timeout_seconds(texts["timeout"]),
        endpoint=endpoint, function_timeout=params.function_timeout_value(inputs["function_timeout"]),
        ephemeral_storage=ephemeral,
        network=network, network_scale=texts["network_scale"], workload_options=chosen,
    )  # fmt: skip


def _grid(texts: Given, workload: workloads.Driver) -> axes.Axes:
    """The product of the axes and the workload's options the flags' `texts` give."""
    inputs = {**params.DEFAULTS, **params.given(texts)}  # its own axes: never the deployed stack's values
    axis_texts = {name: inputs[name] for name in axes.PARSERS}
    grid = axes.Axes.parse(axis_texts)
    return axes.Axes.parse(axis_texts, workload.name, workload.sweep_options(texts, grid.memory))


def _cells(texts: Given, cells: tuple[str, ...], workload: workloads.Driver) -> list[dict[str, str]]:
    """The sweep's `texts` once per explicit cell (--cell's texts), the cell's values in place of
    the sweep's: an axis or an option of the workload (message-level), nothing deployed for the
    whole sweep (region, timeout...)."""
    allowed = {*params.AXES, *workload.OPTIONS}
    keys = {key: dest for key, dest in flags().items() if dest in allowed}
    return [{**texts, **axes.explicit_cell(text, keys)} for text in cells]


def start(sweep: SweepParams, confirmed: bool, console: Console) -> sweeps.Manifest:
    """Check the sweep (cost, account) and write its manifest; nothing is deployed yet."""
    cells = sweep.axes.cells(sweep.order, sweep.seed)
    preflight(sweep, cells, confirmed, console)
    manifest = sweeps.new_manifest(sweep.settings(), [cell.as_dict() for cell in cells])
    path = sweeps.save(manifest)
    seed = f", seed {sweep.seed}" if sweep.order == "shuffled" else ""
    console.print(f"sweep [bold]{manifest.sweep_id}[/]: {len(cells)} cells, {sweep.order} order{seed}; "
                  f"manifest {path}", highlight=False)  # fmt: skip
    return manifest


def resume(ref: str, confirmed: bool, console: Console) -> sweeps.Manifest:
    """The manifest of sweep `ref`, its unfinished cells made pending again (their runs kept and
    marked), checked again like a new sweep."""
    manifest = sweeps.load(ref)
    first = manifest.first_unfinished()
    if first is None:
        raise UsageError(f"sweep {manifest.sweep_id} is complete: every cell is done")
    sweep = SweepParams.from_manifest(manifest)
    preflight(sweep, [cell.cell_params() for cell in manifest.cells[first:]], confirmed, console)
    for cell in manifest.cells[first:]:
        if cell.status != "pending":
            manifest = manifest.with_cell(cell.reopened())
            if cell.run_id:
                _mark_run(cell.run_id, "interrupted")
    manifest = manifest.but(status="running", resumed=[*manifest.resumed, sweeps.now()])
    sweeps.save(manifest)
    console.print(f"resuming sweep [bold]{manifest.sweep_id}[/] at cell {first} of {len(manifest.cells)}")
    return manifest


def preflight(sweep: SweepParams, cells: list[axes.CellParams], confirmed: bool, console: Console) -> None:
    """The cost estimate (printed on AWS, or when refusing), the stack (a sweep's own, never one
    `make deploy` created), then on AWS the credentials (the account and region printed) and the
    account's quotas."""
    owner.check_sweep_may_deploy(sweep.backend, sweep.stack, sweep.region)
    deploy.check_placement(sweep.backend, sweep.stack, sweep.region, sweep.workload_options)
    estimates = cell_estimates(sweep.multiplier, cells, sweep.deployed())
    messages = sum(e.messages for e in estimates)
    usd = sum(e.total for e in estimates)
    refused = costs.refusal(messages, max(e.messages for e in estimates), usd, confirmed)
    backend = backends.get(sweep.backend)
    if not backend.simulated or refused:
        for line in cost_lines(sweep, cells, estimates):
            console.print(line, highlight=False)
    if refused:
        raise UsageError(f"sweep: {refused}")
    who = backend.check_credentials(sweep.region, sweep.endpoint, sweep.stack)
    if who is not None:
        console.print(f"stack {sweep.stack!r}: {who}", highlight=False)
    notes = backend.check_account(sweep.region, sweep.stack, max(c.concurrency for c in cells),
                                  max(c.memory for c in cells), sweep.endpoint)  # fmt: skip
    for note in notes:
        console.print(f"account: {note}", highlight=False)


def cell_estimates(multiplier: int, cells: list[axes.CellParams], deployed: dict) -> list[costs.Estimate]:
    """Each cell's AWS cost and duration (multiplier x concurrency messages) on the stack the
    sweep deploys (SweepParams.deployed), by its workload's model."""
    return [workloads.get(c.workload).cell_estimate(multiplier * c.concurrency, c, deployed) for c in cells]


def cost_lines(sweep: SweepParams, cells: list[axes.CellParams], estimates: list[costs.Estimate]) -> list[str]:
    """Per cell and in total: messages, GB-seconds, dollars and the run's assumed duration (the
    queue mapping's ramp to the cell's concurrency, then every slot busy), then the basis;
    within 80 columns: the options column numbers what the workload says of each cell's options
    (its driver's describe_cell), listed in full below."""
    described = [workloads.get(cell.workload).describe_cell(cell) for cell in cells]
    numbers = {text: f"o{i + 1}" for i, text in enumerate(dict.fromkeys(described))}
    row = "{:>4} {:>6} {:>4} {:>10} {:>6} {:<8} {:>7} {:>8} {:>7} {:>5}"
    lines = [row.format("cell", "memory", "conc", "object", "arch", "options", "msgs", "GB-s", "USD", "min")]
    for i, (cell, est, text) in enumerate(zip(cells, estimates, described)):
        lines.append(row.format(i, cell.memory, cell.concurrency, format_size(cell.object_size), cell.architecture,
                                numbers[text], f"{est.messages:,}", f"{est.gb_seconds:,.0f}", f"{est.total:,.2f}",
                                f"{est.run_seconds / 60:.1f}"))  # fmt: skip
    minutes = sum(e.run_seconds for e in estimates) / 60
    lines.append(row.format("all", "", "", "", "", "", f"{sum(e.messages for e in estimates):,}",
                            f"{sum(e.gb_seconds for e in estimates):,.0f}", f"{sum(e.total for e in estimates):,.2f}",
                            f"{minutes:.1f}"))  # fmt: skip
    lines += [f"  {number}: {text}" for text, number in numbers.items()]
    lines += [
        f"  estimated AWS cost, at {costs.ASSUMED_MIB_PER_S} MiB/s per download; min: the downloads with the",
        "  queue mapping's ramp (fanout.common.ramp), add about a minute per cell for its redeploy and accounting",
        f"  {costs.PRICES_REGION} prices ({costs.PRICES_DATE}), drivers/fanout/cloud/costs.py:",
    ]
    for arch in dict.fromkeys(c.architecture for c in cells):
        lines += [f"  {arch}:", *(f"  {line}" for line in costs.price_list(arch))]
    return lines


# ---- running the cells ------------------------------------------------------------------------


class _Deployment:
    """The stack as the sweep last deployed it, and (local --keep-warm) its shared host."""

    def __init__(self, sweep: SweepParams, sweep_id: str, console: Console, cells: Sequence[axes.CellParams] = ()):
        self.sweep, self.sweep_id, self.console, self.cells = sweep, sweep_id, console, cells
        self.backend = backends.get(sweep.backend)
        self.inputs: params.DeployParams | None = None
        self.stack: stacks.Stack | None = None
        self.hosted: Hosting | None = None
        self.network: NetworkModel | None = None  # the local host's model, at the scale this deployment's cells need
        self.host_exit: ExitStack | None = None

    def inputs_for(self, cell: axes.CellParams, index: int) -> params.DeployParams:
        # A host started here starts fresh environments itself; Lambda's are made fresh by a new configuration.
        fresh_by_config = not self.backend.hosts_function and not self.sweep.keep_warm
        options = {**self.sweep.workload_options,
                   **workloads.get(self.sweep.axes.workload).sweep_stack_inputs(self.sweep.axes)}  # fmt: skip
        return params.DeployParams(
            stack=self.sweep.stack, region=self.sweep.region, concurrency=cell.concurrency, memory=cell.memory,
            object_size=cell.object_size, architecture=cell.architecture, function_timeout=self.sweep.function_timeout, ephemeral_storage=self.sweep.ephemeral_storage,
            kept_object_sizes=self.sweep.axes.object_sizes(),
            environment_epoch=f"{self.sweep_id}/{index}" if fresh_by_config else "",
            workload_options=options, workload_variables=workloads.terraform_variables(options),
        )  # fmt: skip

    def ensure(self, cell: axes.CellParams, index: int) -> bool:
        """Deploy what the cell needs unless it is deployed; True when it redeployed."""
        inputs = self.inputs_for(cell, index)
        if inputs == self.inputs:
            return False
        self._stop_host()  # its environments hold the old configuration
        self.inputs = None
        self.stack = deploy.deploy(inputs, self.sweep.backend, self.sweep.endpoint, console=self.console,
                                   created_by=owner.SWEEP)  # fmt: skip
        if self.backend.hosts_function:
            self.network = network_options.resolve(self.sweep.network, self.sweep.network_scale, self.stack,
                                                   self.console.print, lambda: self.demands(inputs))  # fmt: skip
        self.inputs = inputs
        return True

    def demands(self, inputs: params.DeployParams) -> list:
        """What a message of each cell deployed as `inputs` asks of the network. Those cells share
        one scale, the largest any of them needs, so that they compare under one model (a
        strategy's or a message option's cells; with --keep-warm they share the host too)."""
        return [workloads.get(cell.workload).demand(cell)
                for index, cell in enumerate(self.cells) if self.inputs_for(cell, index) == inputs]  # fmt: skip

    def deployed(self) -> stacks.Stack:
        assert self.stack is not None, "ensure() deployed it"
        return self.stack

    def host(self) -> Hosting | None:
        """The host shared by the cells of one deployment: local backend with --keep-warm only."""
        if not self.backend.hosts_function or not self.sweep.keep_warm:
            return None
        if self.hosted is None:
            self.host_exit = ExitStack()
            self.hosted = self.host_exit.enter_context(wait.hosting(self.deployed(), self.network, self.console))
        return self.hosted

    def _stop_host(self) -> None:
        if self.host_exit is not None:
            self.host_exit.close()
        self.hosted = self.host_exit = None

    def close(self) -> None:
        self._stop_host()


def execute(manifest: sweeps.Manifest, console: Console) -> sweeps.Manifest:
    """Run every pending cell in order, keeping the manifest current and the progress on
    `console`; see the module docstring. Terraform's output goes where the caller says (run:
    the stack's terraform.log). Returns the manifest as it ends."""
    sweep = SweepParams.from_manifest(manifest)
    cells = [cell.cell_params() for cell in manifest.cells]
    resumed = bool(manifest.resumed)
    keeper = sweeps.Keeper(manifest)
    with interrupts.sigterm_as_ctrl_c(), closing(_Deployment(sweep, manifest.sweep_id, console, cells)) as deployment:
        index = None
        try:
            for cell in manifest.cells:
                if cell.status == "done":
                    continue
                index = cell.index
                _run_cell(keeper, index, deployment, resumed, console)
                resumed = False
        except KeyboardInterrupt:
            _stop(keeper, index, "interrupted")
            console.print(f"sweep interrupted; the stack stays deployed. Continue with\n"
                          f"  make sweep RESUME={manifest.sweep_id}   (or fanout sweep --resume latest)")  # fmt: skip
            raise
        except FanoutError:
            _stop(keeper, index, "failed")
            raise
    return keeper.change(status="done")


def _run_cell(keeper: sweeps.Keeper, index: int, deployment: _Deployment, purge_first: bool, console: Console) -> None:
    """Cell `index`'s steps in order, each timed into the manifest, which says where the cell is."""
    sweep = deployment.sweep
    cell = keeper.change_cell(index, status="running", started=sweeps.now()).cell_params()
    console.rule(f"[bold]cell {index} of {len(keeper.manifest.cells)}: {_describe(cell)}")
    with _timed("deploy", keeper, index):
        redeployed = deployment.ensure(cell, index)
    stack = deployment.deployed()
    if purge_first:
        with _timed("purge", keeper, index):
            purge(stack, console)
    environments = "fresh" if redeployed or not sweep.keep_warm else "warm (kept from the previous cell)"
    keeper.change_cell(index, environments=environments)
    made = run_record.RunSweep(sweep_id=keeper.manifest.sweep_id, cell=index, environments=environments)
    with _timed("fire", keeper, index):
        # The cell claims its run as soon as fire records it, also when fire is interrupted.
        record = fire_cell(stack, sweep, cell, made, lambda run_id: keeper.change_cell(index, run_id=run_id), console)
    hosted = deployment.host()
    with _timed("wait", keeper, index):
        accounting = wait_cell(stack, record, index, sweep.timeout, deployment.network, hosted, console)
    with _timed("idle", keeper, index):
        wait_idle(stack, hosted, stack.timeout + IDLE_SLACK_SECONDS)
    with _timed("report", keeper, index):
        report_cell(stack, record.run_id)
    _mark_run(record.run_id, "done")
    keeper.change_cell(index, status="done", finished=sweeps.now(), accounting=accounting.as_record())


def fire_cell(stack: stacks.Stack, sweep: SweepParams, cell: axes.CellParams, made: run_record.RunSweep,
              recorded: Callable[[str], object], console: Console) -> run_record.RunRecord:
    """Fire the cell's messages (multiplier x its concurrency) as the run of sweep cell `made`,
    `recorded(run_id)` called as fire.fire calls it; refused when none reached the queue."""
    fire_params = fire.FireParams(sweep.multiplier * cell.concurrency, sweep.tag, sweep=made,
                                  **workloads.get(cell.workload).cell_fire_fields(cell))  # fmt: skip
    record = fire.fire(stack, fire_params, recorded=recorded, console=console)
    if not record.sent:
        raise FanoutError(f"cell {made.cell}: none of the {fire_params.messages} messages reached the queue")
    return record


def wait_cell(stack: stacks.Stack, record: run_record.RunRecord, index: int, timeout: float,
              network: NetworkModel | None, hosted: Hosting | None, console: Console) -> wait.Accounting:
    """Wait for the run of cell `index` (hosting it here on the local backend, on the shared
    `hosted` when given); refused when messages are lost or unaccounted for after `timeout` s."""
    params = wait.WaitParams(timeout, host=backends.get(stack.backend).hosts_function, network=network)
    accounting = wait.wait(stack, record, params, hosted=hosted, console=console)
    wait.check_accounted(accounting, record.run_id, timeout, prefix=f"cell {index}: ")
    return accounting


def report_cell(stack: stacks.Stack, run_id: str) -> list[Path]:
    """The cell run's report files, without plots (the report across the sweep draws them); the
    paths written."""
    return reporting.render(reporting.fetch(stack, runs.load(run_id)), plots_too=False)


def _stop(keeper: sweeps.Keeper, index: int | None, status: str) -> None:
    """Leave the manifest consistent after an interruption or a failure in cell `index`."""
    if index is not None and keeper.manifest.cells[index].status == "running":
        cell = keeper.manifest.cells[index]
        keeper.change_cell(index, status=status, finished=sweeps.now())
        if cell.run_id:
            _mark_run(cell.run_id, status)
    keeper.change(status=status)


def _mark_run(run_id: str, status: str) -> None:
    """Say in the run's run.json how its sweep cell ended (the run itself is kept)."""
    record = runs.load(run_id)
    runs.update(record.but(sweep=(record.sweep or run_record.RunSweep()).but(cell_status=status)))


def wait_idle(stack: Stack, hosted: Hosting | None, timeout: float) -> None:
    """Until the queue is idle (fanout.common.queue_state: nothing visible, in flight or delayed)
    and no invocation runs (shared local host): only then may the next cell start."""
    sqs = stack.client("sqs")
    deadline = time.monotonic() + timeout
    while True:
        queued = queue_state.messages(sqs, stack.queue_url)
        if queued == 0 and (hosted is None or hosted.idle()):
            return
        if time.monotonic() >= deadline:
            raise FanoutError(f"the queue of stack {stack.stack!r} still holds {queued} messages after {timeout:g} s; "
                              "the next cell would overlap this one")  # fmt: skip
        time.sleep(IDLE_POLL_SECONDS)


def purge(stack: Stack, console: Console, sleep: Callable[[float], None] = time.sleep,
          clock: Callable[[], float] = time.time) -> None:
    """Drop what an abandoned run left in the queue, so that it does not compete with the cell
    run again (its records keep their own run id and never count in another run), and return
    only once the purge is over and the abandoned run's invocations have ended.

    SQS takes up to a minute to purge and may delete messages sent meanwhile (PurgeQueue,
    botocore's sqs model), and the purge drops the messages in flight but not their invocations,
    which hold reserved slots until they end: the backend waits until they must have ended
    (after_purge: on AWS at least SQS's minute, then up to the function timeout). A purge already
    under way (PurgeQueueInProgress: one began within the last minute, e.g. a resume retried at
    once) is waited out the same way.
    """
    sqs = stack.client("sqs")
    try:
        sqs.purge_queue(QueueUrl=stack.queue_url)
        what = "purged the queue"
    except ClientError as exc:
        if not exc.response["Error"].get("Code", "").endswith("PurgeQueueInProgress"):
            raise
        what = "a purge of the queue was already in progress"
    purged_at = clock()
    console.print(what, highlight=False)
    backends.get(stack.backend).after_purge(stack, purged_at, lambda line: console.print(line, highlight=False),
                                            sleep, clock)  # fmt: skip
    wait_idle(stack, None, stack.timeout + IDLE_SLACK_SECONDS)


@contextmanager
def _timed(step: str, keeper: sweeps.Keeper, index: int) -> Iterator[None]:
    """Time a step of cell `index` into its manifest's timings, also when the step fails."""
    started = time.monotonic()
    try:
        yield
    finally:
        timings = keeper.manifest.cells[index].timings
        keeper.change_cell(index, timings={**timings, step: round(time.monotonic() - started, 2)})


def _describe(cell: axes.CellParams) -> str:
    what = workloads.get(cell.workload).describe_cell(cell)
    return (f"{cell.memory} MB, concurrency {cell.concurrency}, {format_size(cell.object_size)}, "
            f"{cell.architecture}, {what}")  # fmt: skip


# ---- the end ----------------------------------------------------------------------------------


def finish(manifest: sweeps.Manifest, console: Console, started_emulator: bool = False) -> None:
    """The report across the sweep's runs on `console`, then --destroy-after (stopping the
    emulator instead when this command started it, see deploy.tear_down)."""
    terminal.show(reporting.report_sweep(manifest), console)
    if manifest.destroy_after:
        deploy.tear_down(manifest.backend, manifest.stack, started_emulator, console)
    console.print(f"manifest: {sweeps.sweep_dir(manifest.sweep_id) / sweeps.SWEEP_FILE}", highlight=False)
