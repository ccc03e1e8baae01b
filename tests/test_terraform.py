"""What Terraform gets from a Ctrl-C, and where its output goes.

Terraform itself is stood in for by a small program on PATH that records how it was called and
which signals reached it, and finishes only when the test releases it: that is the only way to
deliver a Ctrl-C at a known moment of an apply or a destroy. The driver runs in a process group
of its own that receives SIGINT, exactly as a terminal delivers Ctrl-C to its foreground job.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fanout.local import backends
from fanout.cloud import terraform
from fanout.common.errors import FanoutError

FAKE_TERRAFORM = """#!{python}
import json, os, signal, sys, time
from pathlib import Path
state = Path(os.environ["FAKE_TF_DIR"])
command = sys.argv[1]
if command == "version":  # asked for the platform it installs providers for: none is mirrored
    print(json.dumps({{"platform": "fake_platform"}}))
    sys.exit(0)
with open(state / "calls.jsonl", "a") as calls:
    calls.write(json.dumps({{"argv": sys.argv[1:], "sid": os.getsid(0),
                             "aws": sorted(name for name in os.environ if name.startswith("AWS_"))}}) + "\\n")
signals = []
signal.signal(signal.SIGINT, lambda signum, frame: signals.append(signum) or (state / f"{{command}}.sigint").open("a").write("SIGINT\\n"))
if command in ("apply", "destroy"):
    print(f"{{command}}: planning", flush=True)
    (state / f"{{command}}.started").touch()
    while not (state / "release").exists():
        time.sleep(0.01)
    if signals or os.environ.get("FAKE_TF_FAIL"):
        print("Error: " + ("interrupted" if signals else "boom"), file=sys.stderr)
        sys.exit(1)
    print(f"{{command}} complete", flush=True)
"""

DRIVER = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # a shell may start jobs with it ignored
from fanout.cloud import terraform
try:
    terraform.apply("local", "t", {}) if sys.argv[1] == "apply" else terraform.destroy("local", "t")
except KeyboardInterrupt:
    print("driver: interrupted", flush=True)
    sys.exit(130)
print("driver: returned", flush=True)
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A fake `terraform` first on PATH, a private FANOUT_HOME and a stack "t" with state."""
    bin_dir, state = tmp_path / "bin", tmp_path / "fake"
    bin_dir.mkdir()
    state.mkdir()
    program = bin_dir / "terraform"
    program.write_text(FAKE_TERRAFORM.format(python=sys.executable))
    program.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FAKE_TF_DIR", str(state))
    stack_dir = tmp_path / "home" / "stacks" / "local" / "t"
    stack_dir.mkdir(parents=True)
    (stack_dir / terraform.STATE_FILE).write_text(json.dumps({"resources": [{"type": "aws_sqs_queue"}]}))
    return state


def calls(state) -> list[dict]:
    return [json.loads(line) for line in (state / "calls.jsonl").read_text().splitlines()]


def wait_for(condition, patience: float = 60):
    """Poll until `condition()`; fail (rather than hang) if it never comes true."""
    deadline = time.monotonic() + patience
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"still waiting after {patience:g} s for {condition}")
        time.sleep(0.02)


class Driver:
    """terraform.apply or .destroy in a subprocess that is its own process group."""

    def __init__(self, command: str, tmp_path):
        self.log = tmp_path / f"driver-{command}.log"
        with open(self.log, "w") as out:
            self.process = subprocess.Popen([sys.executable, "-c", DRIVER, command], stdout=out, stderr=subprocess.STDOUT,
                                            start_new_session=True)  # fmt: skip

    def ctrl_c(self, then_says: str):
        """SIGINT to the whole group, as a terminal sends it; returns once the driver answered."""
        before = self.output().count(then_says)
        os.killpg(self.process.pid, signal.SIGINT)
        wait_for(lambda: self.output().count(then_says) > before)

    def output(self) -> str:
        return self.log.read_text()

    def finish(self) -> int:
        return self.process.wait(timeout=60)


def test_ctrl_c_asks_terraform_apply_once_to_stop_then_raises(fake, tmp_path):
    driver = Driver("apply", tmp_path)
    wait_for((fake / "apply.started").exists)
    driver.ctrl_c(then_says="asked terraform apply to stop")
    driver.ctrl_c(then_says="still waiting for Terraform to stop")  # not passed on: Terraform would quit at once
    (fake / "release").touch()
    assert driver.finish() == 130
    assert driver.output().endswith("driver: interrupted\n")
    assert (fake / "apply.sigint").read_text() == "SIGINT\n"  # exactly one, and from the driver only
    assert all(call["sid"] != driver.process.pid for call in calls(fake))  # not in the driver's session


def test_ctrl_c_never_reaches_terraform_destroy(fake, tmp_path):
    driver = Driver("destroy", tmp_path)
    wait_for((fake / "destroy.started").exists)
    driver.ctrl_c(then_says="terraform destroy continues")
    driver.ctrl_c(then_says="terraform destroy continues")
    (fake / "release").touch()
    assert driver.finish() == 0
    assert driver.output().endswith("driver: returned\n")
    assert not (fake / "destroy.sigint").exists()


def test_output_goes_to_the_log_without_colour(fake, capfd):
    (fake / "release").touch()
    with terraform.output_to_log("local", "t") as log:
        terraform.apply("local", "t", {})
    assert "apply complete" in log.read_text()
    assert capfd.readouterr().out == ""
    assert all("-no-color" in call["argv"] for call in calls(fake))
    terraform.forget(backends.get("local"), "t")
    assert not terraform.has_state("local", "t") and log.exists()  # the log outlives the state


def test_a_failure_in_the_log_prints_its_tail_and_names_the_error(fake, capfd, monkeypatch):
    (fake / "release").touch()
    monkeypatch.setenv("FAKE_TF_FAIL", "1")
    with terraform.output_to_log("local", "t") as log, pytest.raises(FanoutError) as failed:
        terraform.apply("local", "t", {})
    assert "Error: boom" in str(failed.value) and str(log) in str(failed.value)
    assert "apply: planning" in capfd.readouterr().err  # the tail


def test_a_stack_in_the_embedded_emulator_never_hands_terraform_the_users_aws_setup(fake, monkeypatch):
    """Before anything is recorded (a plan, a first apply) the variables the command runs with
    say whether the stack is in the embedded emulator; init and plan both run without the user's
    AWS setup there, and with it on AWS."""
    monkeypatch.setenv("AWS_PROFILE", "theirs")
    terraform.plan("local", "fresh", {"endpoint": "", "embedded_emulator": backends.get("local").embedded_emulator})
    terraform.plan("aws", "fresh", {"endpoint": "", "embedded_emulator": backends.get("aws").embedded_emulator})
    assert [(call["argv"][0], "AWS_PROFILE" in call["aws"]) for call in calls(fake)] == [
        ("init", False), ("plan", False), ("init", True), ("plan", True)]


def test_output_on_a_non_terminal_has_no_colour_codes(fake, capfd):
    (fake / "release").touch()
    terraform.apply("local", "t", {})  # stdout is captured here: not a terminal
    assert "apply complete" in capfd.readouterr().out
    assert all("-no-color" in call["argv"] for call in calls(fake))


def aws_stack_t(fake) -> None:
    """Stack "t" with state on the aws backend (where destroy needs no emulator)."""
    stack_dir = fake.parent / "home" / "stacks" / "aws" / "t"
    stack_dir.mkdir(parents=True)
    (stack_dir / terraform.STATE_FILE).write_text(json.dumps({"resources": [{"type": "aws_sqs_queue"}]}))


def signed_in(monkeypatch) -> None:
    """AWS credentials found (the commands check them first; tests/test_credentials.py tests that)."""
    from fanout.cloud import credentials

    monkeypatch.setattr(credentials, "identity", lambda region: credentials.Identity("123456789012", "arn", region))


def test_destroy_writes_terraform_to_the_log_and_verbose_shows_it(fake, capfd, monkeypatch):
    from fanout import cli

    signed_in(monkeypatch)
    aws_stack_t(fake)
    (fake / "release").touch()
    assert cli.main(["destroy", "--backend", "aws", "--stack", "t"]) == 0
    out, err = capfd.readouterr()
    log = fake.parent / "home" / "stacks" / "aws" / "t" / terraform.LOG_FILE
    assert "destroy complete" in log.read_text() and "destroy complete" not in out
    assert f"Terraform's output goes to {log}" in err
    assert "Destroyed stack 't'" in out  # the command's own line stays on screen
    assert cli.main(["destroy", "--backend", "aws", "--stack", "t", "--verbose"]) == 0
    assert "destroy complete" in capfd.readouterr().out


def test_a_failed_destroy_shows_the_logs_tail_and_exits_1(fake, capfd, monkeypatch):
    from fanout import cli

    signed_in(monkeypatch)
    aws_stack_t(fake)
    (fake / "release").touch()
    monkeypatch.setenv("FAKE_TF_FAIL", "1")
    assert cli.main(["destroy", "--backend", "aws", "--stack", "t"]) == 1
    err = capfd.readouterr().err
    assert "destroy: planning" in err and "fanout: error: terraform destroy failed" in err and "Error: boom" in err


def test_the_log_is_emptied_and_created_only_when_terraform_runs(fake, capfd):
    log = fake.parent / "home" / "stacks" / "local" / "t" / terraform.LOG_FILE
    log.write_text("the last command's output\n")
    with terraform.output_to_log("local", "t"):
        pass  # nothing ran: the last command's log stays
    assert log.read_text() == "the last command's output\n"
    (fake / "release").touch()
    with terraform.output_to_log("local", "t"):
        terraform.apply("local", "t", {})
        terraform.apply("local", "t", {})
    assert log.read_text().count("apply complete") == 2 and "last command" not in log.read_text()
    assert capfd.readouterr().err.count("Terraform's output goes to") == 1
    with terraform.output_to_log("local", "fresh"):
        pass
    assert not (fake.parent / "home" / "stacks" / "local" / "fresh").exists()
