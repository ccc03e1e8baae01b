"""Lifecycle of the emulator process: start, find, stop, recover from stale files."""

import boto3
import pytest

import argparse
import os

from fanout.local.emulator import control
from fanout.stages import emulator as cli
from fanout.common.errors import FanoutError


def sts_account(endpoint: str) -> str:
    sts = boto3.client(
        "sts", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
    )
    return sts.get_caller_identity()["Account"]


def test_session_emulator_answers_aws_calls(emulator):
    assert sts_account(emulator) == "123456789012"


def test_start_is_idempotent(emulator):
    assert control.start() == emulator
    assert control.running_endpoint() == emulator


@pytest.fixture
def own_home(tmp_path, monkeypatch):
    """A second, short-lived emulator home, so that stopping it leaves the session one alone."""
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path))
    yield tmp_path
    control.stop()


def test_stop_removes_files_and_is_safe_twice(own_home):
    endpoint = control.start()
    pid = control.running_pid()
    assert control.stop() is True
    assert control.running_endpoint() is None
    assert not control.pid_file().exists() and not control.port_file().exists()
    assert control.stop() is False
    assert pid is not None and not control._alive(pid)
    with pytest.raises(Exception):
        sts_account(endpoint)


def test_stale_pid_file_is_ignored_and_replaced(own_home):
    control.pid_file().parent.mkdir(parents=True)
    # A pid that belongs to no emulator: this very test process.
    control.pid_file().write_text(f"{os.getpid()}\n")
    control.port_file().write_text("1\n")
    assert control.running_endpoint() is None
    assert control.stop() is False  # must not signal the unrelated process
    endpoint = control.start()
    assert sts_account(endpoint) == "123456789012"
    assert control.running_pid() != os.getpid()


def test_server_that_dies_gives_one_line_error_naming_the_log(own_home, tmp_path_factory, monkeypatch):
    broken = tmp_path_factory.mktemp("broken") / "fanout"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise ImportError('broken install')\n")
    monkeypatch.setenv("PYTHONPATH", str(broken.parent))
    with pytest.raises(FanoutError) as error:
        control.start()
    message = str(error.value)
    assert "\n" not in message and str(control.log_file()) in message
    assert "broken install" in control.log_file().read_text()
    assert not control.pid_file().exists()


def run_cli(*argv) -> int:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_status_exit_codes(own_home, capsys):
    assert run_cli("emulator", "status") == cli.NOT_RUNNING
    assert "not running" in capsys.readouterr().out
    assert run_cli("emulator", "start") == 0
    endpoint = capsys.readouterr().out.strip()
    assert run_cli("emulator", "status") == 0
    out = capsys.readouterr().out
    assert endpoint in out and str(control.running_pid()) in out
    assert run_cli("emulator", "stop") == 0
    assert run_cli("emulator", "status") == cli.NOT_RUNNING
