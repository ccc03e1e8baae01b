"""The proxy's control commands survive the pipe: each one decodes to what was encoded."""

import pytest

from fanout.local import network
from fanout.local.network.commands import AskFirstBytes, Close, Open, SetPathCost, decode, encode


@pytest.mark.parametrize("command", [
    Open(network.load("lambda-2024").at(1024)),
    Open(network.load("lambda-2024").at(1024), calibration=True),
    Close(40123),
    SetPathCost(0.0042),
    AskFirstBytes(40123),
])
def test_each_command_decodes_to_what_was_encoded(command):
    line = encode(command)
    assert "\n" not in line  # one line on the pipe
    assert decode(line) == command


def test_a_shape_with_addresses_keeps_them_across_the_pipe():
    shape = network.load("lambda-2024").at(1024)
    shape = type(shape)(**{**shape.__dict__, "addresses": {"127.0.0.2": 0.5, "127.0.0.3": 1.0}})
    assert decode(encode(Open(shape))).shape.addresses == {"127.0.0.2": 0.5, "127.0.0.3": 1.0}


def test_an_unknown_command_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown proxy command 'Reboot'"):
        decode('{"command": "Reboot"}')
