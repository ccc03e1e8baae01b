"""The download strategies, exactly as the function defines them.

The definition lives in functions/runner/download/strategies.py because the function's zip must carry
it (the function parses every message's strategy). The drivers load that same file rather than
a copy, so a `STRATEGY=` value is checked by the code that will run it; here its errors become
one-line usage errors, the checks that need the stack (endpoint, /tmp, the function's
timeout, its memory) are added, with what a download asks of the local backend's network.
"""

import math
from typing import TYPE_CHECKING

from fanout.cloud import costs
from fanout.cloud.params import AUTO_EPHEMERAL, MAX_EPHEMERAL_MIB, MEMORY_HEADROOM_MIB, TMP_HEADROOM_MIB
from fanout.common import function_modules
from fanout.local import backends
from fanout.common.errors import UsageError
from fanout.common.sizes import format_size
from fanout.local.network import capacity, truth

# What a download holds per GET until it ends: its request log keeps each connection's socket, to
# count distinct ones (about 2.4 KB a GET, measured: repeated, 2,000 GETs of 100 KB over TLS); taken
# as 4 KiB. Only repeated's thousands of GETs make it count.
HELD_PER_GET = 4 * 1024

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


def check_fits_tmp(object_size: int, strategy_name: str, ephemeral: int | None = None) -> None:
    """download_file needs the whole object in /tmp (`ephemeral` MB when given, else at most
    Lambda's largest; infra/lambda.tf sizes it with the same headroom); the other strategies read
    into memory."""
    needed = math.ceil(object_size / 2**20) + TMP_HEADROOM_MIB
    if strategy_name == "download_file" and ephemeral is not None and needed > ephemeral:
        raise UsageError(f"invalid ephemeral storage {ephemeral} MB: strategy download_file needs the object "
                         f"({format_size(object_size)}) plus {TMP_HEADROOM_MIB} MiB headroom, {needed} MB; "
                         f"use {needed} or more, or {AUTO_EPHEMERAL}")  # fmt: skip
    if strategy_name == "download_file" and needed > MAX_EPHEMERAL_MIB:
        limit = MAX_EPHEMERAL_MIB - TMP_HEADROOM_MIB
        raise UsageError(
            f"object size {object_size} bytes does not fit in Lambda's /tmp with strategy download_file "
            f"(at most {limit} MiB plus {TMP_HEADROOM_MIB} MiB headroom); use STRATEGY=stream or ranged"
        )


def check_endpoint(choice: Choice, endpoint: str) -> None:
    """Refuse a strategy that cannot be pointed at `endpoint` (an emulator's URL; "" for AWS)."""
    if choice.strategy.aws_only and endpoint:
        raise UsageError(
            f"strategy {choice.name!r} runs only against AWS (not {endpoint}): boto3's CRT client "
            "ignores custom endpoints and would read from AWS instead; use BACKEND=aws"
        )


def check_deployment_endpoint(choice: Choice, backend: str, endpoint: str) -> None:
    """check_endpoint against a deployment's: the embedded emulator on a backend that embeds one,
    else `endpoint` (an emulator's URL; "" for AWS)."""
    check_endpoint(choice, "the embedded emulator" if backends.get(backend).embedded_emulator else endpoint)


def message_seconds(choice: Choice, size: int) -> float:
    """One message's Lambda time at the assumed rates: the bytes it reads at ASSUMED_MIB_PER_S;
    a strategy that reads the object many times (repeated) also waits ASSUMED_REQUEST_SECONDS a
    GET, each on a new connection, `in_flight` at a time (one large read's wait is negligible)."""
    seconds = size * choice.reads() / (costs.ASSUMED_MIB_PER_S * 2**20)
    if choice.strategy.reads:
        seconds += choice.gets(size) * costs.ASSUMED_REQUEST_SECONDS / choice.value("in_flight")
    return seconds


def check_fits_memory(choice: Choice, object_size: int, memory_mb: int) -> None:
    """Refuse a download whose GETs' connections, kept by the
    request log, and the runtime need more than the function's `memory_mb`."""
    gets = choice.gets(object_size)
    needed = MEMORY_HEADROOM_MIB + math.ceil(gets * HELD_PER_GET / 2**20)
    if needed > memory_mb:
        raise UsageError(f"invalid download run: strategy '{choice}' sends {gets:,} GETs, whose connections the "
                         f"request log keeps ({HELD_PER_GET // 1024} KiB each), besides the runtime's "
                         f"{MEMORY_HEADROOM_MIB} MB: it needs a function of at least {needed} MB, the stack has "
                         f"{memory_mb} MB: redeploy with MEMORY={needed} or more, or send fewer requests")  # fmt: skip


def check_time_limit(choice: Choice, size: int, timeout: int) -> None:
    """Refuse a message predicted past the function's `timeout` (costs.time_limit_problem)."""
    rate = f"at {costs.ASSUMED_MIB_PER_S} MiB/s"
    reading = (f"{choice.gets(size):,} GETs of {format_size(size)} ({costs.ASSUMED_REQUEST_SECONDS * 1000:g} ms each, "
               f"{choice.value('in_flight')} at a time) and their bytes {rate}" if choice.strategy.reads
               else f"{format_size(size)} {rate}")  # fmt: skip
    fewer = "fewer requests, more in_flight, " if choice.strategy.reads else ""
    remedy = f"{fewer}a smaller OBJECT_SIZE or a longer FUNCTION_TIMEOUT"
    problem = costs.time_limit_problem(message_seconds(choice, size), timeout, f"strategy '{choice}': {reading}",
                                       remedy)
    if problem:
        raise UsageError(f"invalid download run: {problem}")


def strategy_demand(choice: Choice, size: int) -> capacity.Demand:
    """A message that downloads `size` bytes with `choice` (as many times as it reads them): its
    HEAD and GETs on the connections the strategy opens for that size."""
    return capacity.Demand(f"{choice} of {format_size(size)}", truth.connections(choice, size),
                           capacity.Flow(size * choice.reads(), choice.heads(size) + choice.gets(size)))


def names() -> list[str]:
    return list(STRATEGIES)
