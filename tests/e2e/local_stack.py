"""The stack the end-to-end modules share on the local backend (2 environments, 512 MB, a 1 KiB
test object), deployed for a module of tests with its function timeout (the session's
`shared_stack` fixture destroys it), and the CLI on it."""

from contextlib import contextmanager

import pytest

from fanout import cli
from fanout.cloud import package, params, stack, terraform

SHARED = "e2e-shared"  # tests/e2e/conftest.py's shared_stack


@contextmanager
def deployed(name: str, function_timeout: int, emulator: str, tmp_path_factory):
    """The stack `name` on the emulator at `emulator`, its results in a temporary folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(tmp_path_factory.mktemp("results")))
        inputs = params.parse(name, "us-east-1", 2, 512, "1KiB", "x86_64", "stream", function_timeout)
        terraform.apply("local", name, inputs.variables(emulator, package.build(function="runner")))
        yield stack.load("local", name)


def command(name: str):
    """`fanout` on the stack `name`: command(name)("fire", "--messages", "2") is the exit status."""
    return lambda *argv: cli.main([*argv[:1], "--backend", "local", "--stack", name, *argv[1:]])
