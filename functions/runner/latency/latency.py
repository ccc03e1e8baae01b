"""The latency workload: PutObject and GetObject latency against object size, per storage class.

Per message, for each size: PUT an object, then GET it back, REPS times per storage class, one
record per call; a finally deletes whatever is left. The classes take turns within each
repetition (ORDERS' "interleaved") or one class runs all its repetitions before the next
("by-class", the published experiment's order); each call goes through the message's pooled
client, or a new client built just before its timer (CLIENTS' "per-call", as the published
experiment did: the timed call then sets up its own connection). What each time covers and the
cleanup: drivers/fanout/workloads/latency/README.md. Plain Python over a boto3 S3 client (stdlib
plus boto3), so it runs and is tested without Lambda; handler.py reaches it through workloads.py.
"""

import json
import os
import time
import uuid
from dataclasses import dataclass

import boto3

import cputime
import envelope
import units

NAME = "latency"
STORAGE_CLASSES = ("standard", "express")  # the keys of LATENCY_BUCKETS a stack may deploy
MAX_SIZE = 100 * 1000**2  # 100 MB: the largest object a message may ask for
MAX_REPS = 1000
# 1 B to 100 MB in steps of 10x: the published experiment.
DEFAULT_SIZES = tuple(10**exponent for exponent in range(9))
DEFAULT_REPS = 10
READ_CHUNK = 1024 * 1024  # bytes per read of a GET body
CONNECTIONS = 1  # S3 connections a message uses at once: its calls are sequential
# How the repetitions of one size take turns between storage classes: within each repetition
# (a drift during the message touches every class alike), or every repetition of one class
# before the next class's (the published experiment's order).
ORDERS = ("interleaved", "by-class")
# Which client makes each call: the message's pooled one (its connection reused from call to
# call), or a new one built before the timer starts (the published experiment's: the timed call
# includes its DNS, TCP and TLS set-up and, on Express One Zone, the SDK's CreateSession).
CLIENTS = ("pooled", "per-call")


class ParamError(ValueError):
    """A latency parameter that is not valid; the message is one line naming the value."""


class SizeMismatch(Exception):
    """A GET returned a different number of bytes than the PUT wrote."""


class CleanupFailed(Exception):
    """Objects the measurement wrote could not be deleted."""


@dataclass(frozen=True)
class Params:
    """What one message measures: object sizes in bytes, repetitions, storage classes (empty:
    every class the stack deployed), the order of the repetitions and the client of each call."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    reps: int = DEFAULT_REPS
    storage: tuple[str, ...] = ()
    order: str = ORDERS[0]
    client: str = CLIENTS[0]

    def fields(self) -> dict:
        """The message's parameters as the body carries them."""
        return {"sizes": list(self.sizes), "reps": self.reps, "storage": list(self.storage), "order": self.order,
                "client": self.client}  # fmt: skip


def parse_sizes(text: str) -> tuple[int, ...]:
    """Sizes separated by spaces (`1 1KB 1MB 100MB`, units as OBJECT_SIZE), each 1 B..100 MB."""
    sizes = []
    for word in str(text).split():
        size = units.parse_size(word)
        if size is None or not 1 <= size <= MAX_SIZE:
            raise ParamError(f"invalid size {word!r} in SIZES {text!r}: expected sizes from 1 byte to 100MB "
                             "such as 1 1KB 1MB 100MB (units KB MB KiB MiB)")  # fmt: skip
        if size in sizes:
            raise ParamError(f"invalid SIZES {text!r}: size {word!r} is listed twice")
        sizes.append(size)
    if not sizes:
        raise ParamError(f"invalid SIZES {text!r}: expected at least one size such as 1 1KB 1MB 100MB")
    return tuple(sizes)


def parse_reps(text: str) -> int:
    """Repetitions per size: a whole number from 1 to MAX_REPS."""
    reps = units.parse_count(str(text))
    if reps is None or not 1 <= reps <= MAX_REPS:
        raise ParamError(f"invalid REPS {text!r}: expected a whole number from 1 to {MAX_REPS}")
    return reps


def parse_storage(text: str) -> tuple[str, ...]:
    """Storage classes separated by spaces, each one of STORAGE_CLASSES."""
    names = tuple(str(text).split())
    for name in names:
        if name not in STORAGE_CLASSES:
            raise ParamError(f"invalid storage class {name!r}: expected one or more of {', '.join(STORAGE_CLASSES)}")
    if len(set(names)) != len(names):
        raise ParamError(f"invalid storage {text!r}: a class is listed twice")
    return names


def parse_choice(name: str, text: str, allowed: tuple[str, ...]) -> str:
    """One of `allowed` (ORDER: ORDERS, CLIENT: CLIENTS)."""
    if text not in allowed:
        raise ParamError(f"invalid {name} {text!r}: expected one of {', '.join(allowed)}")
    return text


def params_from_body(data: dict) -> Params:
    """The parameters of a message body (JSON lists), checked by the same rules as fire's."""
    try:
        sizes = data.get("sizes", list(DEFAULT_SIZES))
        storage = data.get("storage", [])
        if not isinstance(sizes, list) or not all(type(s) is int for s in sizes):
            raise ParamError(f"sizes={sizes!r} is not a list of whole numbers of bytes")
        if not isinstance(storage, list) or not all(isinstance(s, str) for s in storage):
            raise ParamError(f"storage={storage!r} is not a list of storage class names")
        reps = data.get("reps", DEFAULT_REPS)
        if type(reps) is not int:
            raise ParamError(f"reps={reps!r} is not a whole number")
        order, client = data.get("order", ORDERS[0]), data.get("client", CLIENTS[0])
        return Params(parse_sizes(" ".join(map(str, sizes))), parse_reps(str(reps)), parse_storage(" ".join(storage)),
                      parse_choice("ORDER", order, ORDERS), parse_choice("CLIENT", client, CLIENTS))  # fmt: skip
    except ParamError as exc:
        raise envelope.MalformedMessage(str(exc), {}) from None


def buckets_from_env(environ) -> dict[str, str]:
    """LATENCY_BUCKETS: a JSON object storage class -> bucket name (infra/lambda.tf)."""
    text = environ.get("LATENCY_BUCKETS")
    if not text:
        raise ValueError("LATENCY_BUCKETS is not set: the stack was deployed without the latency workload")
    return json.loads(text)


def measure_message(s3, environ, body: str, context: dict) -> list[dict]:
    """The records of one message: one event="latency" record per call, and an event="error"
    record last if anything failed (envelope.records)."""

    def calls(params: Params, known: dict, emit) -> None:
        buckets = chosen_buckets(buckets_from_env(environ), params.storage)
        prefix = f"latency/{known['run_id']}/{known['seq']}-{uuid.uuid4().hex}"
        measure(s3, buckets, params, prefix, lambda timing: emit({"event": NAME, **timing}))

    return envelope.records(body, context, params_from_body, calls)


def chosen_buckets(deployed: dict[str, str], storage: tuple[str, ...]) -> dict[str, str]:
    """The buckets of the named classes (all deployed ones when none is named)."""
    missing = [name for name in storage if name not in deployed]
    if missing:
        raise ValueError(f"storage {', '.join(missing)} is not deployed on this stack (deployed: {', '.join(deployed)})")
    return {name: deployed[name] for name in storage} if storage else dict(deployed)


def measure(s3, buckets: dict[str, str], params: Params, prefix: str, emit) -> None:
    """Time PUT then GET of every size, REPS times, in every bucket, in `params.order` (rounds);
    `emit(fields)` per call, which names the client that made it."""
    written: set[tuple[str, str]] = set()
    client = (lambda: new_client(s3)) if params.client == "per-call" else (lambda: s3)
    try:
        for size in params.sizes:
            data = os.urandom(size)
            keys = {storage: f"{prefix}/{storage}/{size}" for storage in buckets}
            for rep, storage in rounds(params.reps, tuple(buckets), params.order):
                bucket, key = buckets[storage], keys[storage]
                written.add((bucket, key))
                cell = {"storage": storage, "size": size, "rep": rep, "client": params.client}
                emit({**cell, "operation": "put", **put(client(), bucket, key, data)})
                emit({**cell, "operation": "get", **get(client(), bucket, key, size)})
            for storage, bucket in buckets.items():
                s3.delete_object(Bucket=bucket, Key=keys[storage])
                written.discard((bucket, keys[storage]))
    finally:
        left = delete_all(s3, written)
    if left:
        raise CleanupFailed(f"could not delete {len(left)} objects, e.g. s3://{left[0][0]}/{left[0][1]}")


def rounds(reps: int, storage: tuple[str, ...], order: str) -> list[tuple[int, str]]:
    """(repetition, storage class) in the order the calls run: "interleaved" takes the classes
    in turn within each repetition, "by-class" runs every repetition of a class before the next."""
    if order == "by-class":
        return [(rep, name) for name in storage for rep in range(reps)]
    return [(rep, name) for rep in range(reps) for name in storage]


def new_client(s3):
    """A new client like `s3` (region, endpoint, configuration) from a new session: nothing
    pooled, so its first call opens its own connection (and, on a directory bucket, the SDK
    makes its own CreateSession first). Built before the timer starts, as the published
    experiment built its client before timing the call."""
    meta = s3.meta
    return boto3.session.Session().client("s3", region_name=meta.region_name, endpoint_url=meta.endpoint_url,
                                          config=meta.config)  # fmt: skip


def put(s3, bucket: str, key: str, data: bytes) -> dict:
    start_ms = time.time_ns() // 1_000_000
    started, cpu_started = time.monotonic(), cputime.now()
    s3.put_object(Bucket=bucket, Key=key, Body=data)
    seconds = time.monotonic() - started
    return {"seconds": seconds, "first_byte_seconds": None, "start_ms": start_ms,
            **cputime.fields(cputime.now() - cpu_started, seconds)}  # fmt: skip


def get(s3, bucket: str, key: str, size: int) -> dict:
    start_ms = time.time_ns() // 1_000_000
    started, cpu_started = time.monotonic(), cputime.now()
    body = s3.get_object(Bucket=bucket, Key=key)["Body"]
    headers_at = time.monotonic()
    received = sum(len(chunk) for chunk in body.iter_chunks(READ_CHUNK))
    ended, cpu_ended = time.monotonic(), cputime.now()
    if received != size:
        raise SizeMismatch(f"GET of {key} returned {received} bytes, PUT wrote {size}")
    return {"seconds": ended - started, "first_byte_seconds": headers_at - started, "start_ms": start_ms,
            **cputime.fields(cpu_ended - cpu_started, ended - started)}  # fmt: skip


def delete_all(s3, written: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """Delete every (bucket, key); the ones that could not be deleted."""
    left = []
    for bucket, key in sorted(written):
        try:
            s3.delete_object(Bucket=bucket, Key=key)
        except Exception:  # noqa: BLE001 - reported by the caller, after trying every object
            left.append((bucket, key))
    return left
