"""The transfer workload: multipart uploads, many small objects and copies, timed from the function.

One message is one repetition of one OPERATION (`upload`, `small-files`, `copy`). This module
holds the parameters (one definition: the drivers load this file, so fire refuses exactly what a
message would) and the message's path; transfer_ops.py the operations, transfer_requests.py the
accounting. Details: drivers/fanout/workloads/transfer/README.md. Stdlib plus boto3 only (it
runs in Lambda).
"""

import math
import uuid
from dataclasses import dataclass, fields as dataclass_fields

import envelope
import transfer_ops
import units

NAME = "transfer"
OPERATIONS = ("upload", "small-files", "copy")
CLIENTS = ("classic", "crt")
DIRECTIONS = ("put", "get")
METHODS = ("through-function", "copy-object", "part-copy")
MIN_PART, MAX_PART, MAX_PARTS = 5 * units.MiB, 5 * units.GiB, 10_000  # S3's multipart limits
MAX_OBJECT = 5 * units.GiB  # one PUT, one CopyObject; the largest SIZE of upload and copy
MAX_SMALL = 100 * 1000**2  # small-files: 1 B to 100 MB
MAX_THREADS, MAX_FAN, MAX_FILES = 256, 1000, 100_000
CONNECTIONS = MAX_THREADS  # a message may have THREADS requests in flight on the shared client
# Which options each operation takes (the others are refused, not ignored); every record carries
# every field, "-" or 0 where the operation has none, so that queries group every record alike.
APPLIES = {
    "upload": ("size", "threads", "part_size", "threshold", "client", "fan"),
    "small-files": ("size", "threads", "files", "direction", "prefixes", "client_per_object"),
    "copy": ("size", "threads", "part_size", "threshold", "method"),
}
TEXT_FIELDS = ("client", "direction", "method")


class ParamError(ValueError):
    """A transfer parameter that is not valid; the message is one line naming the value."""


@dataclass(frozen=True)
class Params:
    """What one message does. Sizes in bytes; THRESHOLD and PART_SIZE default to boto3's 8 MiB."""

    operation: str = "upload"
    size: int = 64 * units.MiB
    threads: int = 10  # boto3's TransferConfig default max_concurrency
    part_size: int = 8 * units.MiB
    threshold: int = 8 * units.MiB
    client: str = "classic"
    fan: int = 1
    files: int = 100
    direction: str = "put"
    prefixes: int = 1
    client_per_object: int = 0
    method: str = "part-copy"

    def fields(self) -> dict:
        """Every field as the body and the records carry it: "-" or 0 where it does not apply."""
        applies = APPLIES[self.operation]
        return {f.name: getattr(self, f.name) if f.name in applies or f.name == "operation" else
                ("-" if f.name in TEXT_FIELDS else 0) for f in dataclass_fields(self)}  # fmt: skip

    @property
    def parts(self) -> int:
        """Parts of the multipart upload or part copy (1: a single request)."""
        return math.ceil(self.size / self.part_size) if self.multipart else 1

    @property
    def multipart(self) -> bool:
        return (self.operation == "copy" and self.method == "part-copy") or (
            self.operation in ("upload", "copy") and self.method != "copy-object" and self.size >= self.threshold)


def _size(name: str, text: str, low: int, high: int, allowed: str) -> int:
    size = units.parse_size(str(text))
    if size is None or not low <= size <= high:
        raise ParamError(f"invalid {name} {text!r}: expected {allowed} (units KB MB GB KiB MiB GiB)")
    return size


def _count(name: str, text: str, low: int, high: int) -> int:
    count = units.parse_count(str(text))
    if count is None or not low <= count <= high:
        raise ParamError(f"invalid {name} {text!r}: expected a whole number from {low} to {high}")
    return count


def _choice(name: str, text: str, choices: tuple[str, ...]) -> str:
    if text not in choices:
        raise ParamError(f"invalid {name} {text!r}: expected one of {', '.join(choices)}")
    return text


def parse(given: dict) -> Params:
    """The parameters from text as a user writes them (`{"operation": "upload", "size": "64MiB"}`;
    names absent take their defaults), checked: ranges, options of another operation, S3's
    multipart limits. ParamError names the bad value and what is allowed."""
    operation = _choice("OPERATION", given.get("operation") or "upload", OPERATIONS)
    foreign = [name for name, text in given.items() if text is not None and name != "operation"
               and name not in APPLIES[operation]]  # fmt: skip
    if foreign:
        raise ParamError(f"invalid {foreign[0].upper()} with OPERATION={operation}: it takes "
                         f"{', '.join(n.upper() for n in APPLIES[operation])}")  # fmt: skip
    d = Params()
    text = {name: str(value) for name, value in given.items() if value is not None}
    top = MAX_SMALL if operation == "small-files" else MAX_OBJECT
    params = Params(
        operation=operation,
        size=_size("SIZE", text["size"], 1, top, f"1 byte to {units.format_size(top) if top % units.MiB == 0 else '100MB'}")
        if "size" in text else d.size,
        threads=_count("THREADS", text["threads"], 1, MAX_THREADS) if "threads" in text else d.threads,
        part_size=_size("PART_SIZE", text["part_size"], MIN_PART, MAX_PART, "5MiB to 5GiB")
        if "part_size" in text else d.part_size,
        threshold=_size("THRESHOLD", text["threshold"], 1, MAX_OBJECT, "1 byte to 5GiB")
        if "threshold" in text else d.threshold,
        client=_choice("CLIENT", text.get("client", d.client), CLIENTS),
        fan=_count("FAN", text["fan"], 1, MAX_FAN) if "fan" in text else d.fan,
        files=_count("FILES", text["files"], 1, MAX_FILES) if "files" in text else d.files,
        direction=_choice("DIRECTION", text.get("direction", d.direction), DIRECTIONS),
        prefixes=_count("PREFIXES", text["prefixes"], 1, MAX_FILES) if "prefixes" in text else d.prefixes,
        client_per_object=_count("CLIENT_PER_OBJECT", text["client_per_object"], 0, 1)
        if "client_per_object" in text else d.client_per_object,
        method=_choice("METHOD", text.get("method", d.method), METHODS),
    )
    check(params)
    return params


def check(params: Params) -> None:
    """The rules between parameters: S3's part count, FAN's parts, PREFIXES within FILES."""
    if params.multipart and params.parts > MAX_PARTS:
        raise ParamError(f"invalid PART_SIZE {units.format_size(params.part_size)}: SIZE {params.size} bytes would be "
                         f"{params.parts} parts, S3 allows at most {MAX_PARTS}")  # fmt: skip
    if params.fan > 1 and (not params.multipart or params.client != "classic"):
        raise ParamError(f"invalid FAN {params.fan}: FAN splits one multipart upload (SIZE at or above THRESHOLD) "
                         "of CLIENT=classic")  # fmt: skip
    if params.fan > params.parts:
        raise ParamError(f"invalid FAN {params.fan}: the upload has {params.parts} parts, each message needs one at least")
    if params.prefixes > params.files:
        raise ParamError(f"invalid PREFIXES {params.prefixes}: at most FILES ({params.files})")


def params_from_body(data: dict) -> Params:
    """The parameters a message body carries (Params.fields()), checked by fire's rules."""
    try:
        operation = data.get("operation")
        if operation not in OPERATIONS:
            raise ParamError(f"operation={operation!r} is not one of {', '.join(OPERATIONS)}")
        given = {name: data.get(name) for name in APPLIES[operation]}
        bad = [n for n, v in given.items() if v is not None and type(v) is not (str if n in TEXT_FIELDS else int)]
        if bad:
            raise ParamError(f"{bad[0]}={given[bad[0]]!r} is not a {'name' if bad[0] in TEXT_FIELDS else 'whole number'}")
        return parse({"operation": operation, **given})
    except ParamError as exc:
        raise envelope.MalformedMessage(str(exc), {}) from None


def measure_message(s3, environ, body: str, context: dict) -> list[dict]:
    """The message's one event="transfer" record, or an event="error" record (whatever it wrote
    is deleted either way: transfer_ops)."""
    fields: dict = {}
    try:
        known, params, fields = envelope.opened(body, params_from_body)
        if known["inject_failure"]:
            raise envelope.InjectedFailure("the message asked to fail (inject_failure)")
        bucket = environ.get("FANOUT_BUCKET")
        if not bucket:
            raise ValueError("FANOUT_BUCKET is not set: the stack's bucket is where transfer writes")
        # FAN's members share one upload, under the group's prefix; everything else is the delivery's own.
        group = f"fan-{known['seq'] // params.fan}" if params.fan > 1 else f"{known['seq']}-{uuid.uuid4().hex}"
        where = transfer_ops.Place(bucket, f"{NAME}/{known['run_id']}/{group}", known["seq"] % params.fan)
        return [{"event": NAME, **fields, **transfer_ops.run(s3, params, where), **context}]
    except envelope.MalformedMessage as exc:
        return [envelope.error_record(exc, {**exc.known, **context})]
    except Exception as exc:  # noqa: BLE001 - logged as the message's error record; the message fails
        return [envelope.error_record(exc, {**fields, **context})]
