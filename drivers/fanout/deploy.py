"""`fanout deploy|plan|outputs|destroy`: the stack's lifecycle.

deploy validates every input first (nothing is created on a typo), then on the local backend
starts the embedded emulator, builds the function zip for the stack's architecture, applies
infra/ and uploads the test object. destroy is safe to run at any time: after a failed or
partial apply, with nothing deployed, and on the local backend after the emulator (and with it
every resource) is gone.
"""

import json
import os
import sys
import time

from fanout import aws, package, params, stack, strategies, terraform, upload
from fanout.emulator import control
from fanout.errors import UsageError
from fanout.sizes import format_size

ENDPOINT_ENV = "FANOUT_ENDPOINT"


def register(subparsers) -> None:
    deploy = subparsers.add_parser("deploy", help="deploy the stack and upload the test object")
    _add_inputs(deploy)
    deploy.set_defaults(func=run_deploy)

    plan = subparsers.add_parser("plan", help="show what deploy would change")
    _add_inputs(plan)
    plan.add_argument(
        "--detailed-exitcode", action="store_true", help="exit 2 when there are changes, 0 when none"
    )
    plan.set_defaults(func=run_plan)

    outputs = subparsers.add_parser("outputs", help="print the deployed stack's outputs as JSON")
    stack.add_arguments(outputs)
    outputs.set_defaults(func=run_outputs)

    destroy = subparsers.add_parser("destroy", help="remove everything the stack created")
    stack.add_arguments(destroy)
    _add_endpoint(destroy)
    destroy.set_defaults(func=run_destroy)


def _add_inputs(parser) -> None:
    """The flags the Makefile passes; values are strings, validated by fanout.params."""
    stack.add_arguments(parser)
    parser.add_argument("--concurrency", default="10", help="reserved concurrency, 1-1000 (default 10)")
    parser.add_argument("--memory", default="1024", help="function memory in MB, 128-10240 (default 1024)")
    parser.add_argument("--object-size", default="256MiB", help="test object size, e.g. 64MiB, 1GB")
    parser.add_argument("--region", default="us-east-1", help="AWS region (default us-east-1)")
    parser.add_argument("--architecture", default="x86_64", help="x86_64 (default) or arm64")
    parser.add_argument(
        "--strategy", "--mode", dest="strategy", default=strategies.DEFAULT,
        help=f"strategy of messages that name none, e.g. 'stream' (default {strategies.DEFAULT}); "
        "--mode is its old name",
    )
    parser.add_argument(
        "--function-timeout",
        default=str(params.DEFAULT_FUNCTION_TIMEOUT),
        help=f"function timeout in seconds, 1-900 (default {params.DEFAULT_FUNCTION_TIMEOUT}); "
        "the queue's visibility timeout is 6x it",
    )
    _add_endpoint(parser)


def _add_endpoint(parser) -> None:
    parser.add_argument(
        "--endpoint",
        default=os.environ.get(ENDPOINT_ENV, ""),
        help=f"aws backend only: the emulator URL (e.g. LocalStack) the stack is deployed to; env {ENDPOINT_ENV}",
    )


def run_deploy(args) -> int:
    started = time.monotonic()
    inputs = _inputs(args)
    terraform.apply(args.backend, inputs.stack, _variables(args, inputs))
    deployed = stack.load(args.backend, inputs.stack)
    upload.ensure_object(deployed)
    _print_summary(deployed, time.monotonic() - started)
    return 0


def run_plan(args) -> int:
    inputs = _inputs(args)
    return terraform.plan(args.backend, inputs.stack, _variables(args, inputs), args.detailed_exitcode)


def run_outputs(args) -> int:
    name = params.stack_name(args.stack)
    values = terraform.outputs(args.backend, name)
    if not values:
        print(f"fanout: no stack {name!r} is deployed on the {args.backend} backend", file=sys.stderr)
    else:
        stack.load(args.backend, name)  # a local stack whose emulator is gone: one line, exit 1
    print(json.dumps(values, indent=2, sort_keys=True))
    return 0


def run_destroy(args) -> int:
    name = params.stack_name(args.stack)
    endpoint = params.endpoint(args.backend, args.endpoint)
    if not terraform.has_state(args.backend, name):
        print(f"Nothing to destroy: no stack {name!r} is deployed on the {args.backend} backend.")
        return 0
    recorded = terraform.recorded_inputs(args.backend, name).get("endpoint", "")
    if endpoint and endpoint != recorded:
        raise UsageError(
            f"invalid --endpoint {endpoint!r}: stack {name!r} was deployed to {recorded or 'AWS'}; "
            "destroy removes it from there (omit --endpoint)"
        )
    if args.backend == "local" and _emulator_gone(name):
        terraform.forget("local", name)
        print(
            f"The emulator that held stack {name!r} is no longer running, and its resources went "
            "with it; deleted the stack's local state."
        )
        return 0
    started = time.monotonic()
    terraform.destroy(args.backend, name)
    print(f"Destroyed stack {name!r} on the {args.backend} backend in {time.monotonic() - started:.0f} s.")
    return 0


def _inputs(args) -> params.DeployParams:
    """The validated inputs, before anything runs: a bad value, or an AWS profile that does not
    exist, is one error line; an allowed but risky value gets a warning line."""
    inputs = params.from_args(args)
    endpoint = params.endpoint(args.backend, args.endpoint)
    emulator = "the embedded emulator" if args.backend == "local" else endpoint
    strategies.check_endpoint(strategies.parse(inputs.strategy), emulator)
    if args.backend == "aws" and not endpoint:
        aws.client("sts", inputs.region)  # a missing AWS profile: one line now, not Terraform's page later
    for warning in params.warnings(inputs):
        print(f"fanout: warning: {warning}", file=sys.stderr)
    return inputs


def _variables(args, inputs: params.DeployParams) -> dict:
    """infra/'s variables, for which the local backend starts its emulator if needed."""
    endpoint = control.start() if args.backend == "local" else args.endpoint
    zip_path = package.build("downloader", inputs.architecture)
    return inputs.variables(endpoint, zip_path, args.backend)


def _emulator_gone(name: str) -> bool:
    """Is the emulator the local stack was deployed to no longer the one running?

    The emulator keeps everything in memory: once it stops (or a new one runs elsewhere), the
    stack's resources no longer exist anywhere and its state describes nothing.
    """
    recorded = terraform.recorded_inputs("local", name).get("endpoint")
    running = control.running_endpoint()
    return running is None or (recorded is not None and recorded != running)


def _print_summary(deployed: stack.Stack, seconds: float) -> None:
    where = deployed.endpoint or deployed.region
    print(
        f"\nDeployed stack {deployed.stack!r} on the {deployed.backend} backend ({where}) "
        f"in {seconds:.0f} s\n"
        f"  function  {deployed.function_name}: {deployed.memory} MB, reserved concurrency "
        f"{deployed.concurrency}, {deployed.architecture}\n"
        f"  strategy  {deployed.default_strategy}\n"
        f"  object    {format_size(deployed.object_size)} at s3://{deployed.bucket}/{deployed.object_key}\n"
        f"  queue     {deployed.queue_url}\n"
        f"            to the dead-letter queue after {deployed.max_receive_count} receives\n"
        f"  logs      {deployed.log_group}"
    )
