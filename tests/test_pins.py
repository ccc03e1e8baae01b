"""PIN values at fire time: the function's own definition, and the checks that need the run."""

import pytest

from fanout import pins, strategies
from fanout.errors import UsageError


def test_values_are_the_functions_canonical_ones():
    assert [pins.parse(t) for t in ("auto", "52.216.8.1", "2001:DB8::0:1")] == ["auto", "52.216.8.1", "2001:db8::1"]


@pytest.mark.parametrize("text", ["AUTO", "52.216.8", "s3.amazonaws.com", " 1.2.3.4"])
def test_bad_values_name_the_value_and_what_is_allowed(text):
    with pytest.raises(UsageError, match=rf"^invalid --pin \(PIN\) {text!r}: expected auto or an IPv4/IPv6 address$"):
        pins.parse(text)


def test_the_local_backend_takes_loopback_addresses_or_auto():
    for pin, backend in (("127.0.0.3", "local"), ("auto", "local"), ("52.216.8.1", "aws"), (None, "local")):
        pins.check_backend(pin, backend)
    with pytest.raises(UsageError, match="'52.216.8.1' on the local backend: its endpoint answers on loopback"):
        pins.check_backend("52.216.8.1", "local")


def test_a_pin_is_refused_with_a_strategy_that_connects_itself():
    pins.check_strategy("auto", strategies.parse("stream"))
    pins.check_strategy(None, strategies.parse("crt"))
    with pytest.raises(UsageError, match="'auto' cannot be used with strategy 'crt'"):
        pins.check_strategy("auto", strategies.parse("crt"))
