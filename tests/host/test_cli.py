"""`fanout host` on bad input: one line naming the problem, a non-zero exit, the queue untouched."""

import argparse

import pytest

from fanout.errors import FanoutError
from fanout.host import cli

from .support import REGION


def host_command(*argv) -> tuple[int, str]:
    """Run `fanout host ARGV` as the console script does; (exit status, error message)."""
    parser = argparse.ArgumentParser(prog="fanout")
    cli.register(parser.add_subparsers())
    args = parser.parse_args(["host", *argv])
    try:
        return args.func(args), ""
    except FanoutError as exc:
        return exc.exit_code, str(exc)


def queue_depth(fn) -> int:
    attributes = fn.client("sqs").get_queue_attributes(
        QueueUrl=fn.queue_url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"])


def test_unknown_function(emulator):
    status, message = host_command("--function", "no-such-function", "--endpoint", emulator)
    assert status == 2 and "no-such-function" in message and "\n" not in message


def test_function_without_sqs_mapping(deploy):
    fn = deploy("def handler(event, context):\n    pass\n", mapping=False)
    status, message = host_command("--function", fn.name, "--endpoint", fn.endpoint, "--region", REGION)
    assert status == 2 and fn.name in message and "SQS" in message and "\n" not in message


@pytest.mark.parametrize("source, error", [
    ("import module_that_does_not_exist\n", "Runtime.ImportModuleError"),
    ("x = 1\n", "Runtime.HandlerNotFound"),
])
def test_handler_that_fails_to_initialise_consumes_nothing(deploy, source, error):
    fn = deploy(source)
    fn.send([{"seq": 1}, {"seq": 2}])

    status, message = host_command("--function", fn.name, "--endpoint", fn.endpoint, "--idle", "0.5")

    assert status == 1 and error in message and "handler.handler" in message and "\n" not in message
    assert queue_depth(fn) == 2


@pytest.mark.parametrize("flag, value", [("--idle", "0"), ("--max-envs", "0")])
def test_out_of_range_options(emulator, flag, value):
    status, message = host_command("--function", "any", "--endpoint", emulator, flag, value)
    assert status == 2 and flag in message


def test_cli_hosts_until_drained(deploy, capsys):
    fn = deploy("def handler(event, context):\n    print('ok')\n")
    fn.send([{"seq": i} for i in range(3)])

    status, _ = host_command("--function", fn.name, "--endpoint", fn.endpoint, "--idle", "0.5")

    assert status == 0 and queue_depth(fn) == 0
    assert "3/3 messages done" in capsys.readouterr().err
