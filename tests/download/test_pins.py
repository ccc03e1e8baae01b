"""PIN values at fire time: the function's own definition, and the checks that need the run."""

import pytest

from dataclasses import fields

from fanout.stages import command_line
from fanout import cli
from fanout.workloads.download import pins, strategies
from fanout.common.errors import UsageError
from fanout.cloud.stack import Stack
from fanout.workloads.download import driver as download


def test_values_are_the_functions_canonical_ones():
    texts = ("none", "auto", "52.216.8.1", "2001:DB8::0:1")
    assert [pins.parse(t) for t in texts] == ["none", "auto", "52.216.8.1", "2001:db8::1"]
    assert [pins.steers(pins.parse(t)) for t in texts] == [False, True, True, True]


@pytest.mark.parametrize("text", ["AUTO", "None", "unpinned", "52.216.8", "s3.amazonaws.com", " 1.2.3.4"])
def test_bad_values_name_the_value_and_what_is_allowed(text):
    expected = rf"^invalid --pin \(PIN\) {text!r}: expected none, auto or an IPv4/IPv6 address$"
    with pytest.raises(UsageError, match=expected):
        pins.parse(text)


def test_the_local_backend_takes_loopback_addresses_auto_or_none():
    for pin, backend in (("127.0.0.3", "local"), ("auto", "local"), ("none", "local"), ("52.216.8.1", "aws"),
                         (None, "local")):  # fmt: skip
        pins.check_backend(pin, backend)
    with pytest.raises(UsageError, match="'52.216.8.1' on the local backend: its endpoint answers on loopback"):
        pins.check_backend("52.216.8.1", "local")


def test_a_pin_is_refused_with_a_strategy_that_connects_itself():
    pins.check_strategy("auto", strategies.parse("stream"))
    pins.check_strategy(None, strategies.parse("crt"))
    pins.check_strategy("none", strategies.parse("crt"))  # pins nothing, so crt takes it
    with pytest.raises(UsageError, match="'auto' cannot be used with strategy 'crt'"):
        pins.check_strategy("auto", strategies.parse("crt"))


def fire_plan(*argv: str, default_strategy: str = "crt"):
    """What `fanout fire ARGV` would send, planned against an AWS stack (nothing is sent)."""
    args = cli.build_parser().parse_args(["fire", "--backend", "aws", *argv])
    values = {f.name: f.type() for f in fields(Stack) if f.type in (int, str)}
    stack = Stack(**values | {"backend": "aws", "object_size": 1, "memory": 1024, "architecture": "x86_64",
                              "workload_outputs": {"default_strategy": default_strategy}, "timeout": 300})  # fmt: skip
    driver = download.DownloadDriver()
    return driver.plan(stack, driver.options_from(command_line.texts(args)), 3)


def test_fire_takes_none_as_no_pin_even_with_a_strategy_that_connects_itself():
    assert fire_plan("--pin", "none").fire_fields["options"]["pin"] == "none"  # recorded as chosen; pins nothing
    assert "pin" not in fire_plan().fire_fields["options"]
    with pytest.raises(UsageError, match="'auto' cannot be used with strategy 'crt'"):
        fire_plan("--pin", "auto")
