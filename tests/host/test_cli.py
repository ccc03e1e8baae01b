"""`fanout host` on bad input: one line naming the problem, a non-zero exit, the queue untouched."""

import pytest

from fanout import cli

from .support import queue_depth


def host_command(capsys, *argv) -> tuple[int, str]:
    """Run `fanout host ARGV` as the console script does; (exit status, what it wrote to stderr)."""
    capsys.readouterr()
    status = cli.main(["host", *argv])
    return status, capsys.readouterr().err


def test_unknown_function(emulator, capsys):
    status, err = host_command(capsys, "--function", "no-such-function", "--endpoint", emulator)
    assert status == 2
    assert err == f"fanout: error: no function 'no-such-function' is deployed at {emulator}\n"


def test_unreachable_endpoint(capsys):
    status, err = host_command(capsys, "--function", "x", "--endpoint", "http://127.0.0.1:9")
    assert status == 1
    assert err.startswith("fanout: error: cannot read function 'x' from http://127.0.0.1:9: Could not connect")
    assert err.count("\n") == 1


def test_function_without_sqs_mapping(deploy, capsys):
    fn = deploy("def handler(event, context):\n    pass\n", mapping=False)
    status, err = host_command(capsys, "--function", fn.name, "--endpoint", fn.endpoint)
    assert status == 2
    assert err == (f"fanout: error: function '{fn.name}' has no SQS event source mappings; "
                   "the host consumes exactly one\n")


def test_reserved_concurrency_zero_is_refused(deploy, capsys):
    fn = deploy("def handler(event, context):\n    pass\n", reserved=0)
    fn.send([{"seq": 1}])

    status, err = host_command(capsys, "--function", fn.name, "--endpoint", fn.endpoint)

    assert status == 2
    assert err == (f"fanout: error: function '{fn.name}' has reserved concurrency 0, so Lambda would throttle "
                   "every invocation; give it a reserved concurrency of 1 or more, or none\n")
    assert queue_depth(fn) == 1


@pytest.mark.parametrize("source, error", [
    ("import module_that_does_not_exist\n",
     "Runtime.ImportModuleError: Unable to import module 'handler': No module named 'module_that_does_not_exist'"),
    ("x = 1\n", "Runtime.HandlerNotFound: Handler 'handler' missing on module 'handler'"),
])
def test_handler_that_fails_to_initialise_consumes_nothing(deploy, capsys, source, error):
    fn = deploy(source)
    fn.send([{"seq": 1}, {"seq": 2}])

    status, err = host_command(capsys, "--function", fn.name, "--endpoint", fn.endpoint, "--idle", "0.5")

    assert status == 1
    assert err == (f"fanout: error: function '{fn.name}' (handler 'handler.handler') failed to initialise: "
                   f"[ERROR] {error}\n")
    assert queue_depth(fn) == 2


@pytest.mark.parametrize("flag, value, message", [
    ("--idle", "0", "invalid --idle '0': expected a finite number of seconds above 0"),
    ("--idle", "nan", "invalid --idle 'nan': expected a finite number of seconds above 0"),
    ("--idle", "1e400", "invalid --idle '1e400': expected a finite number of seconds above 0"),
    ("--max-envs", "0", "invalid --max-envs '0': expected a whole number, 1 or more"),
    ("--max-envs", "\uff14", "invalid --max-envs '\uff14': expected a whole number, 1 or more"),
])
def test_out_of_range_options(emulator, capsys, flag, value, message):
    status, err = host_command(capsys, "--function", "any", "--endpoint", emulator, flag, value)
    assert status == 2
    assert err == f"fanout: error: {message}\n"


def test_cli_hosts_until_drained(deploy, capsys):
    fn = deploy("def handler(event, context):\n    print('ok')\n")
    fn.send([{"seq": i} for i in range(3)])

    status, err = host_command(capsys, "--function", fn.name, "--endpoint", fn.endpoint, "--idle", "0.5")

    assert status == 0 and queue_depth(fn) == 0
    assert "3/3 messages done" in err
