"""The Lambda network model of the local backend: named profiles, model files, scale, labels.

A model gives every execution environment the network Lambda gives a function: a token bucket,
a per-connection cap, first-byte latency, an optional aggregate cap, the same for uploads, and
optional endpoint addresses. Any parameter may depend on memory size; `scale` divides every rate
and the burst. Rates are decimal MB/s. Each parameter and its source: docs/network-model.md.
"""

import ipaddress
import json
import math
import re
import socket
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fanout.common import numerals as numbers
from fanout.common.errors import UsageError
from fanout.common.sizes import parse_size

NONE = "none"
UPLOAD_RATES = ("upload_peak_mb_per_s", "upload_sustained_mb_per_s", "upload_connection_mb_per_s")
RATES = ("peak_mb_per_s", "sustained_mb_per_s", "connection_mb_per_s", "aggregate_mb_per_s", *UPLOAD_RATES)
LATENCIES = ("first_byte_ms", "first_byte_p90_ms")
BURSTS = ("burst", "upload_burst")  # sizes: `32MiB` style allowed
PARAMETERS = ("burst", *RATES, *LATENCIES, "upload_burst")
ADDRESSES = "addresses"
MAX_ADDRESSES = 16
# Region profiles: a request signed for a region named here (its SigV4 credential scope: the
# seqread workload's remote client signs for the remote region) takes that path, for the local
# backend to rehearse reading a bucket in another region: its first byte comes after `rtt_ms`
# (the inter-region round trip) plus `first_byte_ms` (that S3's own), instead of the model's
# draw, and its bytes flow at `rate_factor` times the model's rates, as an address's factor.
REGIONS = "regions"
REGION_PARAMETERS = ("rtt_ms", "first_byte_ms", "rate_factor")
_SCOPE = re.compile(rb"Credential=[^/\s]+/\d{8}/([a-z0-9-]+)/s3/aws4_request")

# Published figures (docs/network-model.md): 2.7 Gbit/s burst, ~0.6 Gbit/s sustained at every
# memory size, a 300 MiB bucket, ~90 MB/s per S3 connection, first byte p90 20 ms. The iperf
# figures were measured with the function sending: they are its egress (uploads) as measured;
# downloads assume the same. The upload bucket's size is not published: the same is assumed.
_LAMBDA_2024 = {
    "burst": 300 * 2**20,
    "peak_mb_per_s": 337.5,
    "sustained_mb_per_s": 75.0,
    "connection_mb_per_s": 90.0,
    "first_byte_ms": 15.0,
    "first_byte_p90_ms": 20.0,
    "upload_burst": 300 * 2**20,
    "upload_peak_mb_per_s": 337.5,
    "upload_sustained_mb_per_s": 75.0,
    "upload_connection_mb_per_s": 90.0,
}
PROFILES: dict[str, dict[str, Any]] = {
    NONE: {},
    "lambda-2024": _LAMBDA_2024,
    # Reported, not verified: 625 Mbit/s at 2 GB up to 3,000 Mbit/s at 10 GB outside a VPC; the
    # 2024 figures below 2 GB. The burst is unknown for it: the 2024 bucket and peak are kept,
    # with the peak never below the sustained rate.
    "lambda-2026": _LAMBDA_2024 | {
        "sustained_mb_per_s": {128: 75.0, 2047: 75.0, 2048: 78.125, 10240: 375.0},
        "peak_mb_per_s": {128: 337.5, 8192: 337.5, 10240: 375.0},
    },
}
SCALE_RANGE = (1.0, 100_000.0)


class ModelError(UsageError):
    """A bad model file or value; the message names the parameter."""


@dataclass(frozen=True)
class Shape:
    """A model resolved for one memory size and scale: what the shaping proxy enforces.

    Rates in bytes/s and sizes in bytes; None means not limited."""

    burst_bytes: float | None
    peak_rate: float | None
    sustained_rate: float | None
    connection_rate: float | None
    aggregate_rate: float | None
    first_byte_s: float | None  # median
    first_byte_p90_s: float | None  # None: fixed latency
    addresses: dict | None = None  # loopback address -> rate factor; None: 127.0.0.1 at 1
    # The same for request bodies (the function's egress): a bucket of their own.
    upload_burst_bytes: float | None = None
    upload_peak_rate: float | None = None
    upload_sustained_rate: float | None = None
    upload_connection_rate: float | None = None
    regions: dict | None = None  # region -> {rtt_ms, first_byte_ms, rate_factor} (REGIONS)

    def uploads(self) -> "Shape":
        """The upload direction's limits in the download fields, for what predicts downloads
        (fanout.local.network.truth.predicted_seconds) to predict uploads; no aggregate cap."""
        return replace(self, burst_bytes=self.upload_burst_bytes, peak_rate=self.upload_peak_rate,
                       sustained_rate=self.upload_sustained_rate, connection_rate=self.upload_connection_rate,
                       aggregate_rate=None)

    def region_path(self, request_start: bytes) -> tuple[float, float] | None:
        """(first-byte seconds, rate factor) of a request signed for a region of `regions`,
        read from its first bytes (the request line and headers); None: the model's own path."""
        match = _SCOPE.search(request_start) if self.regions else None
        profile = self.regions.get(match[1].decode()) if match and self.regions else None
        if not profile:
            return None
        return (profile["rtt_ms"] + profile["first_byte_ms"]) / 1000, profile["rate_factor"]

    def max_rate(self, connections: int) -> float | None:
        """The most one environment can draw with `connections` connections (None: no limit)."""
        limits = [self.peak_rate if self.burst_bytes else self.sustained_rate]
        limits.append(None if self.connection_rate is None else self.connection_rate * connections)
        finite = [rate for rate in limits if rate is not None]
        return min(finite) if finite else None


@dataclass(frozen=True)
class NetworkModel:
    """A named model and its scale. `parameters` maps names of PARAMETERS to a number or to a
    {memory MB: number} table, all validated."""

    profile: str
    scale: float = 1.0
    parameters: dict = field(default_factory=dict)

    @property
    def shaped(self) -> bool:
        """False for `none`: traffic goes straight to the emulator over loopback."""
        return self.profile != NONE

    def at(self, memory: int) -> Shape:
        """The model for a function of `memory` MB, every rate and the burst divided by scale."""
        value: dict[str, Any] = {name: _at_memory(self.parameters.get(name), memory) for name in PARAMETERS}
        rate = {name: None if value[name] is None else value[name] * 1e6 / self.scale for name in RATES}
        latency = {name: None if value[name] is None else value[name] / 1000 for name in LATENCIES}
        burst = {name: None if value[name] is None else value[name] / self.scale for name in BURSTS}
        return Shape(
            burst_bytes=burst["burst"],
            peak_rate=rate["peak_mb_per_s"],
            sustained_rate=rate["sustained_mb_per_s"],
            connection_rate=rate["connection_mb_per_s"],
            aggregate_rate=rate["aggregate_mb_per_s"],
            first_byte_s=latency["first_byte_ms"],
            first_byte_p90_s=latency["first_byte_p90_ms"],
            addresses=self.parameters.get(ADDRESSES),
            upload_burst_bytes=burst["upload_burst"],
            upload_peak_rate=rate["upload_peak_mb_per_s"],
            upload_sustained_rate=rate["upload_sustained_mb_per_s"],
            upload_connection_rate=rate["upload_connection_mb_per_s"],
            regions=self.parameters.get(REGIONS),
        )

    def with_scale(self, scale: float) -> "NetworkModel":
        return NetworkModel(self.profile, check_scale(scale), self.parameters)

    def describe(self) -> dict:
        """What run.json records under "network"."""
        return {"profile": self.profile, "scale": self.scale,
                "parameters": {k: _json_value(v) for k, v in self.parameters.items()}}


def load(spec: str, scale: float = 1.0) -> NetworkModel:
    """A profile name or the path of a .toml/.json model file, at `scale`."""
    if spec in PROFILES:
        return NetworkModel(spec, check_scale(scale), dict(PROFILES[spec]))
    model = _load_file(spec, scale)
    check_addresses_exist(model.parameters.get(ADDRESSES) or {}, spec)
    return model


def _load_file(spec: str, scale: float) -> NetworkModel:
    path = Path(spec)
    if path.suffix not in (".toml", ".json"):
        raise ModelError(f"invalid network {spec!r}: expected one of {', '.join(PROFILES)} "
                         "or a model file ending in .toml or .json")
    try:
        text = path.read_text()
    except OSError as exc:
        raise ModelError(f"cannot read network model file {spec!r}: {exc.strerror}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise ModelError(f"network model file {spec!r} is not valid {path.suffix[1:].upper()}: "
                         f"{str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise ModelError(f"network model file {spec!r} must hold a table of parameters")
    return NetworkModel(path.stem, check_scale(scale), parameters(data, spec))


def parameters(data: dict, where: str) -> dict:
    """Validated parameters of a model file; a one-line ModelError naming the bad one."""
    unknown = sorted(set(data) - {*PARAMETERS, ADDRESSES, REGIONS})
    if unknown:
        raise ModelError(f"network model {where!r}: unknown parameter {unknown[0]!r}; "
                         f"allowed: {', '.join([*PARAMETERS, ADDRESSES, REGIONS])}")
    special = {ADDRESSES: _addresses, REGIONS: _regions}
    checked = {name: special[name](value, where) if name in special else _parameter(name, value, where)
               for name, value in data.items()}  # fmt: skip
    _check_consistent(checked, where)
    return checked


def check_scale(value) -> float:
    low, high = SCALE_RANGE
    scale = numbers.decimal(value)
    if scale is None or not low <= scale <= high:
        raise ModelError(f"invalid network scale {value!r}: expected a number from {low:g} to {high:g}")
    return scale


def label(simulated: bool, network: dict | None) -> str:
    """How a run's numbers were made, for every report, summary file and plot caption: from
    whether its backend simulates them (fanout.local.backends.simulated: the local host, or not
    recorded) and the network it was hosted under (run.json's "network"; None: not recorded). A
    scale other than 1 says what it does to a figure: the model's rates (and bursts) divided by
    it, its first-byte waits not."""
    if not simulated:
        return "measured on AWS"
    network = network or {"profile": NONE}
    if network["profile"] == NONE:
        return "simulated network: none (loopback, not modelled)"
    scale = network["scale"]
    effect = f" (rates / {scale:g}, first byte not scaled)" if scale != 1 else ""
    return f"simulated network: {network['profile']}, scale {scale:g}{effect}"


def shapes_uploads(network: dict | None) -> bool:
    """Did the network a run was hosted under (run.json's "network") limit what the function sends?
    Only a model with an upload rate does: the proxy paces request bodies by those alone."""
    return any(name in (network or {}).get("parameters", {}) for name in UPLOAD_RATES)


def _parameter(name: str, value, where: str):
    if isinstance(value, dict):
        if not value:
            raise ModelError(f"network model {where!r}: parameter {name!r} has an empty memory table")
        return {_memory(name, key, where): _number(name, v, where) for key, v in value.items()}
    return _number(name, value, where)


def _memory(name: str, key, where: str) -> int:
    try:
        memory = int(key)
    except (TypeError, ValueError):
        memory = 0
    if not 128 <= memory <= 10240:
        raise ModelError(f"network model {where!r}: parameter {name!r} has memory {key!r}; "
                         "expected memory sizes from 128 to 10240 (MB) as keys")
    return memory


def _number(name: str, value, where: str) -> float:
    if name in BURSTS and isinstance(value, str):
        try:
            return float(parse_size(value))
        except UsageError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        allowed = "a size such as 32MiB or a number of bytes" if name in BURSTS else "a number above 0"
        raise ModelError(f"network model {where!r}: parameter {name!r} = {value!r} is not allowed; expected {allowed}")
    return float(value)


def _check_consistent(checked: dict, where: str) -> None:
    """Relations between parameters, at every memory size any table names."""
    tables = [v for name, v in checked.items() if name in PARAMETERS and isinstance(v, dict)]
    memories = sorted({m for table in tables for m in table} or {128})
    for memory in memories:
        value: dict[str, Any] = {name: _at_memory(checked.get(name), memory) for name in PARAMETERS}
        for burst, refill in (("burst", "sustained_mb_per_s"), ("upload_burst", "upload_sustained_mb_per_s")):
            if value[burst] is not None and value[refill] is None:
                raise ModelError(f"network model {where!r}: parameter {burst!r} needs {refill!r} "
                                 "(the rate that refills the bucket)")
        if value["first_byte_p90_ms"] is not None and value["first_byte_ms"] is None:
            raise ModelError(f"network model {where!r}: parameter 'first_byte_p90_ms' needs 'first_byte_ms' "
                             "(the median)")
        for high, low in (("peak_mb_per_s", "sustained_mb_per_s"), ("first_byte_p90_ms", "first_byte_ms"),
                          ("upload_peak_mb_per_s", "upload_sustained_mb_per_s")):
            if None not in (value[high], value[low]) and value[high] < value[low]:
                raise ModelError(f"network model {where!r}: parameter {high!r} = {value[high]:g} at {memory} MB "
                                 f"is below {low!r} = {value[low]:g}")


def _addresses(value, where: str) -> dict[str, float]:
    """The `addresses` table: IPv4 loopback addresses (127.0.0.0/8) to rate factors above 0."""
    if not isinstance(value, dict) or not 1 <= len(value) <= MAX_ADDRESSES:
        raise ModelError(f"network model {where!r}: {ADDRESSES!r} must be a table of 1 to {MAX_ADDRESSES} "
                         'loopback addresses and rate factors, e.g. { "127.0.0.2" = 1, "127.0.0.3" = 0.5 }')
    checked = {}
    for address, factor in value.items():
        try:
            parsed = ipaddress.IPv4Address(address)
        except ValueError:
            parsed = None
        if parsed is None or not parsed.is_loopback:
            raise ModelError(f"network model {where!r}: address {address!r} is not allowed; "
                             "expected an IPv4 loopback address (127.0.0.0/8), e.g. 127.0.0.2")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not 0 < factor < math.inf:
            raise ModelError(f"network model {where!r}: address {address!r} has rate factor {factor!r}; "
                             "expected a number above 0 (1 = the model's rates, 0.5 = half)")
        checked[str(parsed)] = float(factor)
    return checked


def _regions(value, where: str) -> dict[str, dict]:
    """The `regions` table: region name -> {rtt_ms, first_byte_ms, rate_factor}, each a number
    (latencies from 0, the factor above 0)."""
    if not isinstance(value, dict) or not value:
        raise ModelError(f"network model {where!r}: {REGIONS!r} must be a table of regions, e.g. "
                         '[regions.us-west-2] rtt_ms = 60, first_byte_ms = 20, rate_factor = 0.3')
    checked = {}
    for region, profile in value.items():
        if not isinstance(profile, dict) or set(profile) != set(REGION_PARAMETERS):
            raise ModelError(f"network model {where!r}: region {region!r} must give exactly "
                             f"{', '.join(REGION_PARAMETERS)}")
        for name, number in profile.items():
            low_ok = number > 0 if name == "rate_factor" else number >= 0
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not low_ok or number == math.inf:
                raise ModelError(f"network model {where!r}: region {region!r} has {name} = {number!r}; expected a "
                                 f"number {'above' if name == 'rate_factor' else 'from'} 0")  # fmt: skip
        checked[region] = {name: float(profile[name]) for name in REGION_PARAMETERS}
    return checked


def check_addresses_exist(addresses, where: str) -> None:
    """Refuse addresses this machine cannot listen on: Linux routes all of 127.0.0.0/8 to the
    loopback interface, macOS only 127.0.0.1 unless an alias is added."""
    for address in addresses:
        with socket.socket() as probe:
            try:
                probe.bind((address, 0))
            except OSError as exc:
                raise ModelError(f"network model {where!r}: address {address} is not on this machine's loopback "
                                 f"interface ({exc.strerror}); add it (macOS: sudo ifconfig lo0 alias {address} up) "
                                 f"or leave it out of {ADDRESSES!r}") from None


def _at_memory(value, memory: int) -> float | None:
    """A parameter at `memory` MB: tables interpolate linearly, constant beyond their ends."""
    if not isinstance(value, dict):
        return value
    points = sorted(value.items())
    if memory <= points[0][0]:
        return points[0][1]
    for (m0, v0), (m1, v1) in zip(points, points[1:]):
        if memory <= m1:
            return v0 + (v1 - v0) * (memory - m0) / (m1 - m0)
    return points[-1][1]


def _json_value(value):
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else value


def from_record(network: dict | None) -> NetworkModel:
    """The model a run.json "network" entry describes (none when absent)."""
    if not network:
        return load(NONE)
    return NetworkModel(network["profile"], network["scale"], parameters(network["parameters"], "run.json"))
