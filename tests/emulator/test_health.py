"""A local stack whose emulator stopped, or was restarted, is named as such in one line with the
fix; a connection lost mid-command is one line too, not a traceback."""

import dataclasses
import uuid

import pytest
from test_fire import make_stack

from fanout.common import aws
from fanout import cli
from fanout.stages import fire
from fanout.cloud import terraform
from fanout.cloud import stack as stacks
from fanout.local.emulator import control, health
from fanout.common.errors import FanoutError


@pytest.fixture
def own_home(tmp_path, monkeypatch):
    """An emulator of this test's own, so that stopping it leaves the session one alone."""
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path))
    yield tmp_path
    control.stop()


def deployed_queue(endpoint: str):
    sqs = aws.client("sqs", "us-east-1", endpoint)
    return make_stack(endpoint, sqs.create_queue(QueueName=f"h-{uuid.uuid4().hex[:8]}")["QueueUrl"])


def test_stopped_then_restarted_emulator(own_home):
    stack = deployed_queue(control.start())
    health.check_stack(stack)  # deployed and running: no error

    control.stop()
    with pytest.raises(FanoutError, match="emulator is not running") as failure:
        health.check_stack(stack)
    assert "make deploy STACK=unit" in str(failure.value) and "\n" not in str(failure.value)

    control.start()
    with pytest.raises(FanoutError, match="restarted since stack 'unit' was deployed") as failure:
        health.check_stack(stack)
    assert "make deploy STACK=unit" in str(failure.value)


def test_a_queue_gone_from_the_same_emulator_means_a_restart(own_home):
    stack = deployed_queue(control.start())
    aws.client("sqs", "us-east-1", stack.endpoint).delete_queue(QueueUrl=stack.queue_url)
    with pytest.raises(FanoutError, match="restarted"):
        health.check_stack(dataclasses.replace(stack))


def test_an_emulator_lost_mid_wait_is_one_line(own_home, tmp_path, monkeypatch, capsys):
    """The emulator dies after wait has checked the stack: every later call fails to connect."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    stack = deployed_queue(control.start())
    fire.fire(stack, fire.FireParams(3, "t", workers=1))
    monkeypatch.setattr(stacks, "load", lambda backend, name, fields: stack)  # checked just before it died
    control.stop()
    capsys.readouterr()
    code = cli.main(["wait", "--stack", "unit", "--no-host", "--timeout", "5"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and len(err.splitlines()) == 1, err
    assert f"lost the embedded emulator at {stack.endpoint}" in err and "make deploy" in err


def test_outputs_of_a_vanished_stack_fail(own_home, monkeypatch, capsys):
    """The Terraform state still holds the outputs (read from it here as `terraform output` would
    return them); the emulator that held the stack is gone."""
    stack = deployed_queue(control.start())
    outputs = {k: v for k, v in dataclasses.asdict(stack).items() if k != "backend"}
    monkeypatch.setattr(terraform, "outputs", lambda backend, name: outputs)
    assert cli.main(["outputs", "--stack", "unit"]) == 0  # still there
    control.stop()
    capsys.readouterr()
    code = cli.main(["outputs", "--stack", "unit"])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1 and "not running" in err
