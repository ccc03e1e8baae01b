"""The stack's default strategy, the download workload's deploy-level option (`--strategy`, its old
name `--mode`; Make STRATEGY): what the function downloads with when a message names no strategy.
fire always names one (the run's, else this one), so it decides what a run of `make fire` without
STRATEGY measures, and what the stack must hold for it (/tmp for download_file, AWS for crt).

The download driver's deploy hooks (fanout.workloads.base) call the functions here. infra/download.tf
holds its variable and output, both `default_strategy` as when every stack had it, so that a stack
deployed before, and its recorded inputs and outputs, read the same.
"""

from fanout.workloads.base import DeployPlace, Given
from fanout.workloads.download import strategies

OPTION = "strategy"  # its flag's argparse name, the key of the deploy options and of a sweep's manifest
OUTPUT = "default_strategy"  # infra/'s variable and output
DEPLOY_OPTIONS = (OPTION,)


def add_deploy_arguments(parser) -> None:
    """--strategy (--mode) of deploy, plan and sweep (a sweep's: its axis of strategies)."""
    parser.add_argument(
        "--strategy", "--mode", dest=OPTION,
        help=f"the stack's default download strategy, e.g. 'stream' or 'ranged connections=8' (one of "
        f"{', '.join(strategies.STRATEGIES)}; --mode is its old name; default: deploy and plan keep the deployed "
        f"stack's, else {strategies.DEFAULT}); a sweep's strategies, one or more separated by "
        f"'{strategies.definition.LIST_SEPARATOR}', one cell each, the first deployed as the stack's default",
    )  # fmt: skip


def deploy_options(given: Given, place: DeployPlace) -> dict:
    """The default strategy given (absent: the function's default) as canonical text. A sweep's is a
    list (its cells' strategies, which its sweep_options check): the stack deploys its first."""
    text = given.get(OPTION, strategies.DEFAULT)
    chosen = strategies.parse_list(text)[0] if place.sweep else strategies.parse(text)
    return {OPTION: str(chosen)}


def kept_options(outputs: dict, given: Given) -> dict:
    """The deployed stack's default strategy, unless given."""
    return {} if OPTION in given or OUTPUT not in outputs else {OPTION: str(outputs[OUTPUT])}


def terraform_variables(options: dict) -> dict:
    """infra/'s `default_strategy`; absent (a sweep recorded before it was an option), the default."""
    return {OUTPUT: options.get(OPTION, strategies.DEFAULT)}


def stack_fields(outputs: dict) -> dict:
    """The stack's `default_strategy` output (every stack has had it)."""
    return {OUTPUT: outputs.get(OUTPUT, strategies.DEFAULT)}


def deployed(stack) -> str:
    """The default strategy `stack` (fanout.cloud.stack.Stack) was deployed with, as canonical text."""
    return str(stack.workload_outputs[OUTPUT])


def of_inputs(inputs) -> strategies.Choice:
    """The default strategy deploy inputs (fanout.cloud.params.DeployParams) deploy."""
    return strategies.parse(terraform_variables(inputs.workload_options)[OUTPUT])


def deploy_summary(stack) -> list[str]:
    """deploy's line: the default strategy."""
    return [f"strategy  {stack.workload_outputs[OUTPUT]}"]
