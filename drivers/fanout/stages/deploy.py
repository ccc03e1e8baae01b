"""`fanout deploy|plan|outputs|destroy`: the stack's lifecycle.

deploy validates every input first (nothing is created on a typo), then on the local backend
starts the embedded emulator, builds the function zip for the stack's architecture, applies
infra/ and uploads the test object. destroy is safe to run at any time: after a failed or
partial apply, with nothing deployed, and on the local backend after the emulator (and with it
every resource) is gone. What they say goes to a console the command makes (rich's `out`:
the text as it is, no markup or wrapping) and is handed down, so demo and sweep pass their own.
"""

import argparse
import json
import os
import time

from rich.console import Console

from fanout.cloud import owner, package, params, stack, terraform
from fanout.stages import command_line, upload
from fanout.workloads.base import DeployPlace
from fanout.common import function_modules
from fanout.local import backends
from fanout.workloads import registry as workloads
from fanout.common.errors import UsageError
from fanout.common.sizes import format_size

ENDPOINT_ENV = "FANOUT_ENDPOINT"


def register(subparsers: argparse._SubParsersAction) -> None:
    deploy = subparsers.add_parser("deploy", help="deploy the stack and upload the test object; on a deployed "
                                   "stack, an input not given keeps its value")
    _add_inputs(deploy)
    add_verbose(deploy)
    deploy.set_defaults(func=run_deploy, check=check_inputs)

    plan = subparsers.add_parser("plan", help="show what deploy would change")
    _add_inputs(plan)
    plan.add_argument(
        "--detailed-exitcode", action="store_true", help="exit 2 when there are changes, 0 when none"
    )
    plan.set_defaults(func=run_plan, check=check_inputs)

    outputs = subparsers.add_parser("outputs", help="print the deployed stack's outputs as JSON")
    command_line.stack_arguments(outputs)
    outputs.set_defaults(func=run_outputs, check=lambda args: params.stack_name(args.stack))

    destroy = subparsers.add_parser("destroy", help="remove everything the stack created")
    command_line.stack_arguments(destroy)
    _add_endpoint(destroy)
    add_verbose(destroy)
    destroy.set_defaults(func=run_destroy, check=_check_target)


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    """The flags the Makefile passes; values are strings, validated by fanout.cloud.params."""
    add_target_arguments(parser)
    params.add_arguments(parser)
    parser.add_argument("--sdk",
                        help=f"where the function's boto3 comes from: {' or '.join(package.SDKS)} "
                             f"(default: the deployed stack's, else {package.DEFAULT_SDK}; docs/strategies.md)")  # fmt: skip
    parser.add_argument("--keys",
                        help=f"copies of the test object, each under its own prefix, that the messages are spread "
                             f"over (seq mod keys), {params.KEYS_RANGE[0]}-{params.KEYS_RANGE[1]} (default: the "
                             "deployed stack's, else 1)")  # fmt: skip


def add_target_arguments(parser: argparse.ArgumentParser, sweeps_own: bool = False) -> None:
    """Where to deploy and the workloads' deploy-level options: --backend, --stack (a sweep's,
    `sweeps_own`, defaults to the sweeps' own), the workloads' flags
    (fanout.workloads.registry.add_deploy_arguments) and --endpoint (deploy, plan, sweep)."""
    command_line.stack_arguments(parser, sweeps_own)
    workloads.add_deploy_arguments(parser)
    _add_endpoint(parser)


def add_verbose(parser: argparse.ArgumentParser) -> None:
    """--verbose: Terraform's output on the screen (deploy, destroy, sweep, demo; VERBOSE=1)."""
    parser.add_argument("--verbose", action="store_true",
                        help=f"show Terraform's output instead of writing it to the stack's {terraform.LOG_FILE}")


def default_endpoint() -> str:
    """The endpoint when --endpoint is not given: FANOUT_ENDPOINT's, else AWS ("")."""
    return os.environ.get(ENDPOINT_ENV, "")


def _add_endpoint(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--endpoint",
        default=default_endpoint(),
        help=f"aws backend only: the emulator URL (e.g. LocalStack) the stack is deployed to; env {ENDPOINT_ENV}",
    )


def check_inputs(args: argparse.Namespace) -> params.DeployParams:
    """deploy's and plan's command line, checked with no side effect (no emulator started, no
    AWS call): the inputs (on a deployed stack, its values for those not on the command line: a
    redeploy changes only what was asked; on a first deploy, the defaults), the endpoint, a
    deployment a workload cannot run on (download: a default strategy the endpoint or /tmp cannot serve), and a
    deployed stack's region and remote region kept."""
    inputs = inputs_given(given_of(args), terraform.outputs(args.backend, params.stack_name(args.stack)))
    check_deployment(inputs, args.backend, params.endpoint(backends.get(args.backend), args.endpoint))
    check_placement(args.backend, inputs.stack, inputs.region, inputs.workload_options)
    return inputs


def inputs_from(args: argparse.Namespace, deployed: dict | None = None) -> params.DeployParams:
    """deploy's (or plan's) inputs from its command line (inputs_given); `deployed`: the deployed
    stack's outputs (None: none)."""
    return inputs_given(given_of(args), deployed or {})


def given_of(args: argparse.Namespace) -> params.DeployGiven:
    """deploy's (or plan's) command line, as params.DeployGiven."""
    return params.DeployGiven(args.stack, args.backend, command_line.texts(args))


def inputs_given(given: params.DeployGiven, deployed: dict) -> params.DeployParams:
    """The inputs of a deploy (params.from_given) with the workloads' deploy-level options: given,
    else kept from the deployed stack (`deployed`: its outputs, {}: none), else their defaults,
    checked by the workloads against the stack and region it goes to."""
    names = workloads.deploy_option_names()
    chosen = {name: given.texts[name] for name in names if name in given.texts}
    kept = workloads.kept_options(deployed, chosen) if deployed else {}
    place = DeployPlace(given.stack, given.region(deployed), given.backend)
    return params.from_given(given, deployed, workload_deploy(workloads.deploy_options({**chosen, **kept}, place)))


def workload_deploy(options: dict) -> params.WorkloadDeploy:
    """The workloads' deploy-level `options` (checked) with infra/'s variables for them."""
    return params.WorkloadDeploy(options, workloads.terraform_variables(options))


def blank(given: params.DeployGiven) -> params.DeployGiven:
    """`given` with no input given (backend, stack, sdk and keys kept): the deployed stack's inputs."""
    names = {*params.DEFAULTS, *workloads.deploy_option_names()}
    return params.DeployGiven(given.stack, given.backend, {k: v for k, v in given.texts.items() if k not in names})


def _check_target(args: argparse.Namespace) -> None:
    """destroy's stack name and endpoint, checked with no side effect."""
    params.stack_name(args.stack)
    params.endpoint(backends.get(args.backend), args.endpoint)


def run_deploy(args: argparse.Namespace) -> int:
    console = Console()
    inputs = resolve(args, console)
    with terraform.output_to_log(args.backend, inputs.stack, args.verbose):
        deploy(inputs, args.backend, args.endpoint, check_account=True, console=console)
    return 0


def resolve(args: argparse.Namespace, console: Console) -> params.DeployParams:
    """deploy's and plan's inputs (check_inputs), with one line per change on `console` when the
    stack is deployed."""
    inputs = check_inputs(args)
    deployed = terraform.outputs(args.backend, inputs.stack)
    if deployed:
        changed = params.changes(inputs_given(blank(given_of(args)), deployed), inputs)
        console.out(f"Stack {inputs.stack!r} is deployed on the {args.backend} backend; inputs not given keep "
                    "their values:", highlight=False)  # fmt: skip
        console.out("\n".join(f"  {line}" for line in changed or ["no change"]), highlight=False)
    return inputs


def deploy(inputs: params.DeployParams, backend: str, endpoint: str = "", check_account: bool = False,
           console: Console | None = None, errors: Console | None = None,
           created_by: str = owner.DEPLOY) -> stack.Stack:  # fmt: skip
    """Create or update the stack with `inputs` and upload its test object; the deployed Stack.

    Validated first (nothing is created on a bad endpoint, without AWS credentials, by a sweep
    (`created_by` owner.SWEEP) on a stack `make deploy` created, or, with `check_account`, when
    the AWS account's quotas cannot host it: a sweep checks its largest cell once instead); on
    the local backend the embedded emulator is started if none runs. A first apply records
    `created_by` in the stack's state. What it says goes to `console` (None: stdout), its
    warnings to `errors` (None: stderr).
    """
    console = console or Console()
    started = time.monotonic()
    if created_by == owner.SWEEP:
        owner.check_sweep_may_deploy(backend, inputs.stack, inputs.region)
    endpoint = _check(inputs, backend, endpoint, console, errors or Console(stderr=True))
    if check_account:
        for note in backends.get(backend).check_account(inputs.region, inputs.stack, inputs.concurrency,
                                                        inputs.memory, endpoint):  # fmt: skip
            console.out(f"account: {note}", highlight=False)
    terraform.apply(backend, inputs.stack, {**_variables(inputs, backend, endpoint), owner.VARIABLE: created_by})
    deployed = stack.load(backends.get(backend), inputs.stack, workloads.stack_fields)
    upload.ensure_object(deployed)
    console.out(summary(deployed, time.monotonic() - started), highlight=False)
    return deployed


def run_plan(args: argparse.Namespace) -> int:
    console = Console()
    inputs = resolve(args, console)
    endpoint = _check(inputs, args.backend, args.endpoint, console, Console(stderr=True))
    return terraform.plan(args.backend, inputs.stack, _variables(inputs, args.backend, endpoint), args.detailed_exitcode)


def run_outputs(args: argparse.Namespace) -> int:
    """The stack's outputs as JSON; a one-line error, exit 1, when none is deployed (an empty `{}`
    with exit 0 read as a stack without outputs) or a local stack's emulator is gone."""
    name = params.stack_name(args.stack)
    stack.load(backends.get(args.backend), name, workloads.stack_fields)
    Console().out(json.dumps(terraform.outputs(args.backend, name), indent=2, sort_keys=True), highlight=False)
    return 0


def run_destroy(args: argparse.Namespace) -> int:
    with terraform.output_to_log(args.backend, params.stack_name(args.stack), args.verbose):
        destroy(args.backend, args.stack, args.endpoint, Console())
    return 0


def destroy(backend: str, name: str, endpoint: str = "", console: Console | None = None) -> None:
    """Remove everything the stack created; safe when nothing is deployed, and on the local
    backend after the emulator (and with it every resource) is gone. `endpoint`, when given,
    must be the one the stack was deployed to. What it says goes to `console` (None: stdout)."""
    console = console or Console()
    name = params.stack_name(name)
    endpoint = params.endpoint(backends.get(backend), endpoint)
    if not terraform.has_state(backend, name):
        console.out(f"Nothing to destroy: no stack {name!r} is deployed on the {backend} backend.", highlight=False)
        return
    inputs = terraform.recorded_inputs(backend, name)
    recorded = inputs.get("endpoint", "")
    if endpoint and endpoint != recorded:
        raise UsageError(
            f"invalid --endpoint {endpoint!r}: stack {name!r} was deployed to {recorded or 'AWS'}; "
            "destroy removes it from there (omit --endpoint)"
        )
    if backends.get(backend).before_destroy(name, inputs, console):
        return
    started = time.monotonic()
    terraform.destroy(backend, name)
    console.out(f"Destroyed stack {name!r} on the {backend} backend in {time.monotonic() - started:.0f} s.",
                highlight=False)  # fmt: skip


def tear_down(backend: str, name: str, started_emulator: bool, console: Console) -> None:
    """Remove the stack after a demo or a sweep: `terraform destroy`, or the backend's quicker
    way when this command started what holds the stack (the local backend stops the emulator it
    started). What it says goes to the demo's or sweep's `console`."""
    if not backends.get(backend).teardown(name, started_emulator, console):
        destroy(backend, name, console=console)


def check_deployment(inputs: params.DeployParams, backend: str, endpoint: str) -> None:
    """Refuse inputs a registered workload cannot run on at `endpoint` (its driver's check_deployment)."""
    for driver in workloads.DRIVERS.values():
        driver.check_deployment(inputs, backend, endpoint)


def _check(inputs: params.DeployParams, backend: str, endpoint: str, console: Console, errors: Console) -> str:
    """The endpoint (and a deployment a workload cannot run on), checked before anything runs: a bad one, or
    AWS credentials missing or of another account than the deployed stack's, is one error line; on AWS the account and region the stack goes to are
    said on `console`; an allowed but risky input gets a warning line on `errors`. The workloads'
    deploy-level options were checked against the backend with the other inputs."""
    check_placement(backend, inputs.stack, inputs.region, inputs.workload_options)
    endpoint = params.endpoint(backends.get(backend), endpoint)
    check_deployment(inputs, backend, endpoint)
    who = backends.get(backend).check_credentials(inputs.region, endpoint, inputs.stack)
    if who is not None:
        console.out(f"stack {inputs.stack!r}: {who}", highlight=False)
    for warning in params.warnings(inputs):
        errors.out(f"fanout: warning: {warning}", highlight=False)
    return endpoint


def check_placement(backend: str, name: str, region: str, workload_options: dict) -> None:
    """Refuse, in one line, to move a deployed stack to another region or remote region
    (params.placement_change): its resources would stay where they are, out of Terraform's reach."""
    if terraform.has_state(backend, name):
        wanted = {"region": region, **workloads.terraform_variables(workload_options)}
        problem = params.placement_change(name, terraform.recorded_inputs(backend, name), wanted)
        if problem:
            raise UsageError(problem)


def _variables(inputs: params.DeployParams, backend: str, endpoint: str) -> dict:
    """infra/'s variables, for which the local backend starts its emulator if needed."""
    endpoint = backends.get(backend).endpoint(endpoint)
    zip_path = package.build(function_modules.NAME, inputs.architecture, inputs.sdk)
    return inputs.variables(endpoint, zip_path, backends.get(backend))


def summary(deployed: stack.Stack, seconds: float) -> str:
    """The stack at a glance, as deploy ends. Bucket and key on lines of their own: together (an
    s3:// URL) they outgrow 80 columns for the default stack name already."""
    where = deployed.endpoint or deployed.region
    workload_lines = "".join(f"  {line}\n" for line in workloads.deploy_summary(deployed))
    return (
        f"\nDeployed stack {deployed.stack!r} on the {deployed.backend} backend ({where}) "
        f"in {seconds:.0f} s\n"
        f"  function  {deployed.function_name}: {deployed.memory} MB, reserved concurrency "
        f"{deployed.concurrency}, {deployed.architecture}\n"
        f"  SDK       {deployed.sdk} ({package.SDKS[deployed.sdk]})\n"
        f"  object    {format_size(deployed.object_size)}, key {deployed.object_key}"
        f"{f' and {len(deployed.object_keys) - 1} copies' if len(deployed.object_keys) > 1 else ''}\n"
        f"  bucket    {deployed.bucket}\n"
        f"{workload_lines}"
        f"  queue     {deployed.queue_url}\n"
        f"            to the dead-letter queue after {deployed.max_receive_count} receives\n"
        f"  logs      {deployed.log_group}"
    )
