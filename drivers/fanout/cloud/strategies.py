"""The download strategies, exactly as the function defines them.

The definition lives in functions/runner/download/strategies.py because the function's zip must carry
it (the function parses every message's strategy). The drivers load that same file rather than
a copy, so a `STRATEGY=` value is checked by the code that will run it; here its errors become
one-line usage errors, and the checks that need the stack (endpoint, /tmp) are added.
"""

from typing import TYPE_CHECKING

from fanout.common import function_modules
from fanout.common.errors import UsageError

definition = function_modules.load("strategies")
STRATEGIES = definition.STRATEGIES
DEFAULT = definition.DEFAULT
if TYPE_CHECKING:  # the same class, read by mypy from the function's folder on its path
    from strategies import Choice
else:
    Choice = definition.Choice


def parse(text: str) -> Choice:
    """One strategy (`ranged connections=8 chunk_size=8MiB`), or UsageError naming what is wrong."""
    if definition.LIST_SEPARATOR in str(text):
        raise UsageError(f"invalid strategy {text!r}: one strategy expected here; a list separated by "
                         f"'{definition.LIST_SEPARATOR}' is a sweep axis")  # fmt: skip
    try:
        return definition.parse(text)
    except definition.StrategyError as exc:
        raise UsageError(str(exc)) from None


def parse_list(text: str) -> list[Choice]:
    """Strategies separated by ';', e.g. `stream; ranged connections=4; download_file` (a sweep
    axis: one cell per strategy, in order); UsageError naming the bad one."""
    try:
        return definition.parse_list(text)
    except definition.StrategyError as exc:
        raise UsageError(str(exc)) from None


def check_endpoint(choice: Choice, endpoint: str) -> None:
    """Refuse a strategy that cannot be pointed at `endpoint` (an emulator's URL; "" for AWS)."""
    if choice.strategy.aws_only and endpoint:
        raise UsageError(
            f"strategy {choice.name!r} runs only against AWS (not {endpoint}): boto3's CRT client "
            "ignores custom endpoints and would read from AWS instead; use BACKEND=aws"
        )


def names() -> list[str]:
    return list(STRATEGIES)
