"""A workload's own stack on the local backend for its end-to-end tests: deployed for a module of
tests (2 environments, 512 MB, a 1 KiB test object) with its function timeout, and the CLI on
it. It is left to the session's private emulator, which takes it along when it stops: a destroy
costs about 6 CPU-s of Terraform and proves nothing these modules check (tests/infra/test_stack.py,
the experiment's and the study's modules and seqread's, with its second region, destroy theirs). (The sweeps share tests/e2e/conftest.py's stack; a workload's module
redeploys with its own timeout, so it keeps its own.)"""

from contextlib import contextmanager

import pytest

from fanout.local import backends
from fanout.workloads import registry
from fanout import cli
from fanout.cloud import owner, package, params, stack, terraform
from fanout.stages import deploy
from fanout.workloads.download import strategies



@contextmanager
def deployed(name: str, function_timeout: int, emulator: str, tmp_path_factory):
    """The stack `name` on the emulator at `emulator`, its results in a temporary folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(tmp_path_factory.mktemp("results")))
        inputs = params.parse(name, "us-east-1", 2, 512, "1KiB", "x86_64", function_timeout,
                              deploy.workload_deploy({"strategy": str(strategies.parse("stream"))}))  # the others': defaults
        # Recorded as a sweep's stack: the module's sweep redeploys it (a sweep refuses a stack
        # `make deploy` created, fanout.cloud.owner).
        variables = {**inputs.variables(emulator, package.build(function="runner"), backends.get("local")), owner.VARIABLE: owner.SWEEP}
        terraform.apply("local", name, variables)
        yield stack.load(backends.get("local"), name, registry.stack_fields)


def command(name: str):
    """`fanout` on the stack `name`: command(name)("fire", "--messages", "2") is the exit status."""
    return lambda *argv: cli.main([*argv[:1], "--backend", "local", "--stack", name, *argv[1:]])
