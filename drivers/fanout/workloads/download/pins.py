"""PIN values (`fanout fire --pin`, `make fire PIN=`), exactly as the function reads them.

The definition lives in functions/runner/endpoints.py, which the function's zip carries; the
drivers load that same file, so a value is checked at fire time by the code that will run it.
"""

import ipaddress

from fanout.common import function_modules
from fanout.local import backends
from fanout.cloud.params import list_values
from fanout.common.errors import UsageError

definition = function_modules.load("endpoints")
AUTO = definition.AUTO
NONE = definition.NONE
steers = definition.steers


def parse(text: str) -> str:
    """`none`, `auto` or an address in canonical form; UsageError naming the value otherwise."""
    try:
        return definition.parse_pin(text)
    except definition.PinError as exc:
        raise UsageError(f"invalid --pin (PIN) {text!r}: {str(exc).split(': ', 1)[1]}") from None


def parse_list(text: str | None) -> tuple[str | None, ...]:
    """A sweep's --pin: values separated by spaces, one cell each, in order; (None,) when not
    given (no pin). UsageError naming a bad or repeated value."""
    return (None,) if text is None else list_values("--pin (PIN)", text, parse)


def check_backend(pin: str | None, backend: str) -> None:
    """Refuse an address the local backend cannot answer on: its endpoint listens on loopback
    addresses only (127.0.0.1, or a network model's `addresses`)."""
    if pin is not None and steers(pin) and pin != AUTO and backends.get(backend).embedded_emulator \
            and not ipaddress.ip_address(pin).is_loopback:
        raise UsageError(f"invalid --pin (PIN) {pin!r} on the local backend: its endpoint answers on loopback "
                         "addresses only (127.0.0.1, or the network model's addresses); use none, auto or one of those")


def check_strategy(pin: str | None, strategy) -> None:
    """Refuse a pin with a strategy whose client resolves and connects itself (crt); `none`
    pins nothing and goes with any strategy."""
    if steers(pin) and strategy.strategy.own_http:
        raise UsageError(f"--pin (PIN) {pin!r} cannot be used with strategy {strategy.name!r}: its client "
                         "resolves and connects itself; choose another strategy, or PIN unset or none")
