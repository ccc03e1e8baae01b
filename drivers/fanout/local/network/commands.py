"""The commands the host's Shaper sends the shaping proxy over its pipe, one JSON line each.

Typed here and turned into a line and back in one place, so that the two processes agree on
every command's name and fields (fanout.local.network.proxy).
"""

import json
from dataclasses import asdict, dataclass

from fanout.local.network.model import Shape


@dataclass(frozen=True)
class Open:
    """Open an endpoint shaped by `shape`; the proxy answers with its port. A calibration
    endpoint waits its latency in full (the path's cost is not subtracted)."""

    shape: Shape
    calibration: bool = False


@dataclass(frozen=True)
class Close:
    """Stop listening on an endpoint (its environment was reaped)."""

    port: int


@dataclass(frozen=True)
class SetPathCost:
    """What the path adds to a first-byte wait, subtracted from every drawn latency."""

    seconds: float


@dataclass(frozen=True)
class AskFirstBytes:
    """The proxy answers with the endpoint's FirstBytes since the last ask, as one JSON line."""

    port: int


Command = Open | Close | SetPathCost | AskFirstBytes


def encode(command: Command) -> str:
    """One line of JSON, without its newline."""
    return json.dumps({"command": type(command).__name__, **asdict(command)})


def decode(line: str | bytes) -> Command:
    fields = json.loads(line)
    match fields.pop("command"):
        case "Open":
            return Open(Shape(**fields["shape"]), fields["calibration"])
        case "Close":
            return Close(fields["port"])
        case "SetPathCost":
            return SetPathCost(fields["seconds"])
        case "AskFirstBytes":
            return AskFirstBytes(fields["port"])
        case other:
            raise ValueError(f"unknown proxy command {other!r}: expected Open, Close, SetPathCost or AskFirstBytes")
