"""A study never takes the user's stack (issue 33, item 6), end to end through make on the local
backend, as a new user would type it: `make deploy CONCURRENCY=4 MEMORY=2048`, then `make study
STUDY=latency-vs-size LOCAL=1 DESTROY_AFTER=1`. The study runs on the sweeps' own stack of the
region, which it creates and destroys; the user's stack keeps its state and its function's
configuration. A private emulator and FANOUT_HOME: the default stack names are the user's."""

import json
import os
import subprocess
import sys

import pytest

from fanout.cloud import owner, terraform
from fanout.common import aws, paths
from fanout.local.emulator import control
from fanout.stages import study

pytestmark = pytest.mark.slow

USER_STACK = "s3fanout"  # the Makefile's default STACK


def make(*args: str) -> subprocess.CompletedProcess:
    """`make ARGS` with the CLI run by this interpreter from these drivers (`-o venv`: no
    virtualenv is built), in this process's FANOUT_HOME; STACK not on the command line."""
    env = {**os.environ, "PYTHONPATH": str(paths.REPO / "drivers")}
    env.pop("STACK", None)
    return subprocess.run(["make", "--no-print-directory", "-o", "venv", f"FANOUT={sys.executable} -m fanout.cli",
                           *args], cwd=paths.REPO, capture_output=True, text=True, env=env, timeout=900)  # fmt: skip


@pytest.fixture(scope="module")
def studied(tmp_path_factory):
    """The user's stack before and after the study, the study's output and its emulator."""
    with pytest.MonkeyPatch.context() as patch, control.private(prefix="fanout-study-stack-") as endpoint:
        patch.setenv("FANOUT_RESULTS", str(tmp_path_factory.mktemp("results")))
        try:
            deployed = make("deploy", "CONCURRENCY=4", "MEMORY=2048")
            assert deployed.returncode == 0, deployed.stdout + deployed.stderr
            before = state()
            ran = make("study", "STUDY=latency-vs-size", "LOCAL=1", "DESTROY_AFTER=1", "TIMEOUT=240")
            yield before, ran, endpoint
        finally:
            make("destroy")


def state() -> dict:
    return json.loads((paths.stack_dir("local", USER_STACK) / terraform.STATE_FILE).read_text())


def test_the_study_leaves_the_users_stack_as_it_was(studied):
    before, ran, endpoint = studied
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert state() == before  # not one resource or output applied again
    outputs = terraform.outputs("local", USER_STACK)
    assert (outputs["memory"], outputs["concurrency"], outputs["created_by"]) == (2048, 4, owner.DEPLOY)
    function = aws.client("lambda", "us-east-1", endpoint)
    assert function.get_function_configuration(FunctionName=outputs["function_name"])["MemorySize"] == 2048
    reserved = function.get_function_concurrency(FunctionName=outputs["function_name"])
    assert reserved["ReservedConcurrentExecutions"] == 4


def test_the_study_ran_on_its_own_stack_and_destroyed_only_that(studied):
    _, ran, _ = studied
    own = owner.sweep_stack(study.load("latency-vs-size").sweep["region"])  # the source's region, ap-northeast-1
    assert f"Destroyed stack {own!r}" in ran.stdout and f"stack {USER_STACK!r}" not in ran.stdout
    assert not terraform.has_state("local", own)
    assert terraform.has_state("local", USER_STACK)
    assert "study report:" in ran.stdout
