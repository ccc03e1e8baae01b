"""The transfer workload's cost model: every request a message sends, by price class, and the
bytes it uploads, for fire's estimate and the report's cost per GB.

Prices are S3 Standard's (fanout.cloud.costs.PRICES); which request pays which price, and why
the upload's egress is $0: drivers/fanout/workloads/transfer/README.md (cost). Written by hand:
no library prices AWS requests.
"""

import math
from dataclasses import dataclass

from fanout.cloud import costs

ASSUMED_REQUEST_SECONDS = costs.ASSUMED_REQUEST_SECONDS  # the median small S3 request in one published study
UPLOAD_EGRESS_PRICE_GB = 0.0  # data into S3 in the function's region is free
LOG_BYTES_PER_RECORD = 2_000 + 30 * 1000  # the fields, and at most 1,000 part timings of ~30 bytes


@dataclass(frozen=True)
class Requests:
    """Requests of one message by price class, and the bytes it moves (uploaded: sent to S3)."""

    puts: float  # PUT, COPY, POST, LIST
    gets: float  # GET, HEAD
    uploaded: int
    moved: int  # every byte through the function or copied server-side (its time)
    downloaded: int = 0  # read by the function
    free: float = 0.0  # DELETE-class requests, not billed but sent: FAN's aborted uploads


def _upload(size: int, part_size: int, multipart: bool) -> float:
    """PUT-class requests of one upload: one PUT, or create + parts + complete."""
    return math.ceil(size / part_size) + 2 if multipart else 1


def message_requests(p) -> Requests:
    """The requests one message with parameters `p` (the function's Params) sends."""
    if p.operation == "upload":
        if p.fan > 1:  # transfer_ops.fan_upload and shared_upload
            lost = (p.fan - 1) / p.fan  # all but the group's first id PUT lose: abort, then GET the winner's id
            # its share of the parts, its create, id PUT and ListParts, its share of the one complete
            return Requests(p.parts / p.fan + 3 + 1 / p.fan, lost, p.size // p.fan, p.size // p.fan, free=lost)
        return Requests(_upload(p.size, p.part_size, p.multipart), 0, p.size, p.size)
    if p.operation == "small-files":
        gets = p.files if p.direction == "get" else 0  # a get run writes its objects first
        return Requests(p.files, gets, p.files * p.size, p.files * p.size * (2 if gets else 1), gets * p.size)
    source = _upload(p.size, p.part_size, p.size >= p.threshold)  # the message writes its source first
    if p.method == "copy-object":
        return Requests(source + 1, 0, p.size, 2 * p.size)
    if p.method == "part-copy":  # and the transfer manager's HeadObject of the source
        return Requests(source + math.ceil(p.size / p.part_size) + 2, 1, p.size, 2 * p.size)
    ranged = math.ceil(p.size / p.part_size) if p.multipart else 1  # download_file: HEAD, then GETs
    return Requests(2 * source, ranged + 1, 2 * p.size, 3 * p.size, p.size)


def message_seconds(p) -> float:
    """One message's Lambda time: the bytes it moves at ASSUMED_MIB_PER_S, and
    ASSUMED_REQUEST_SECONDS a request, THREADS at a time."""
    r = message_requests(p)
    return r.moved / (costs.ASSUMED_MIB_PER_S * 2**20) + (r.puts + r.gets) * ASSUMED_REQUEST_SECONDS / p.threads


def time_limit_problem(p, timeout: int) -> str | None:
    """Why one message cannot end within `timeout` seconds at the assumed rates; None when it fits."""
    r = message_requests(p)
    return costs.time_limit_problem(message_seconds(p), timeout,
                                    f"OPERATION={p.operation} moving {r.moved / 2**20:,.0f} MiB at "
                                    f"{costs.ASSUMED_MIB_PER_S} MiB/s with {r.puts + r.gets:,.0f} requests of "
                                    f"{ASSUMED_REQUEST_SECONDS * 1000:g} ms, {p.threads} at a time",
                                    "a smaller SIZE or FILES, more THREADS, or a longer FUNCTION_TIMEOUT")  # fmt: skip


def estimate(messages: int, deployment: costs.Deployment, p) -> costs.Estimate:
    """AWS cost of `messages` messages: Lambda time (message_seconds), every request, the upload egress."""
    r = message_requests(p)
    seconds = message_seconds(p)
    return costs.priced(messages, deployment, seconds, s3_gets=messages * r.gets * costs.PRICES["s3_get"],
                        s3_puts=messages * r.puts * costs.PRICES["s3_put"],
                        s3_data=messages * r.uploaded / 1e9 * UPLOAD_EGRESS_PRICE_GB, notes=notes(messages, r),
                        log_bytes_each=LOG_BYTES_PER_RECORD)  # fmt: skip


def notes(messages: int, r: Requests) -> tuple[str, ...]:
    """What fire prints under the estimate: the request counts and the upload's egress."""
    return (f"  {messages * r.puts:,.0f} PUT/COPY/POST/LIST requests at ${costs.PRICES['s3_put'] * 1e6:.2f}/M, "
            f"{messages * r.gets:,.0f} GET/HEAD at ${costs.PRICES['s3_get'] * 1e6:.2f}/M, DELETE free",
            f"  upload egress {messages * r.uploaded / 1e9:,.3f} GB at ${UPLOAD_EGRESS_PRICE_GB}/GB (data into S3 in "
            f"its region is free); {ASSUMED_REQUEST_SECONDS * 1000:g} ms per request")  # fmt: skip


def cost_per_gb(requests: dict, moved_bytes: int) -> float | None:
    """Request cost per GB (10^9 bytes) moved, from a record's `requests` by API name (the report's
    column beside the speed); None when nothing was moved."""
    if not moved_bytes:
        return None
    gets = sum(n for name, n in requests.items() if name in GET_CLASS)
    puts = sum(n for name, n in requests.items() if name not in GET_CLASS and name not in FREE)
    return (gets * costs.PRICES["s3_get"] + puts * costs.PRICES["s3_put"]) / (moved_bytes / 1e9)


GET_CLASS = {"GetObject", "HeadObject"}
FREE = {"DeleteObject", "DeleteObjects", "AbortMultipartUpload"}
