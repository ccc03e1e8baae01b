"""The seqread workload's cost and time model: inter-region data transfer by region pair, the
GETs, and whether JOBS x FILE_SIZE fits the function's time limit at a stated rate.

Reading from a bucket in another region is billed as data transfer out of the bucket's region
to the function's, per GB; from the stack's own region it is free (fanout.cloud.costs). The
price depends on the pair, so the table names the pairs it knows, each with its source and date;
an unknown pair's cost is refused in one line, not guessed. Written by hand: no library prices
AWS transfers.
"""

import dataclasses

from fanout.cloud import costs
from fanout.common import function_modules

definition = function_modules.load("seqread")

GB = 1e9  # priced per 10^9 bytes: of the two readings of AWS's "GB", the one that costs more
# (bucket's region, function's region) -> USD per GB, with where the figure was read.
TRANSFER_PRICES = {
    ("us-west-2", "us-east-1"): (0.02, "AWS re:Post, 'Cost effective methods for accessing S3 buckets "
                                 "cross-region' (prices verified 2026-01): us-west-2 bucket read from us-east-1"),
    ("us-east-1", "us-west-2"): (0.02, "Amazon S3 pricing page, data transfer out of us-east-1 to another US "
                                 "region (read 2026-11): a copy from a us-east-1 stack's bucket to us-west-2"),
    ("ap-northeast-1", "us-east-2"): (0.09, "the published fio study (2023): Tokyo read from Ohio; "
                                      "not confirmed on an AWS page"),
}  # fmt: skip
# The rates the time limit and the estimate assume for one invocation's whole group: Lambda's
# sustained ~75 MiB/s per function (docs/network-model.md), and 30% of it across regions (the
# published study's "about 70% lower").
LOCAL_MIB_PER_S = costs.ASSUMED_MIB_PER_S
REMOTE_FACTOR = 0.3
MiB = 2**20
DOMINATES = 0.5  # the transfer's share of the total above which fire warns


def rate(source: str) -> float:
    """MiB/s assumed for one message's group reading from `source`."""
    return LOCAL_MIB_PER_S * (REMOTE_FACTOR if source == "remote" else 1.0)


def message_seconds(fields: dict) -> float:
    """One message at the assumed rate: JOBS x FILE_SIZE bytes."""
    return fields["jobs"] * fields["file_size"] / MiB / rate(fields["source"])


def time_limit_problem(fields: dict, timeout: int) -> str | None:
    """Why JOBS x FILE_SIZE cannot be read within `timeout` seconds at the assumed rate, with the
    arithmetic; None when it fits."""
    total = fields["jobs"] * fields["file_size"] / MiB
    return costs.time_limit_problem(message_seconds(fields), timeout,
                                    f"JOBS={fields['jobs']} x FILE_SIZE={fields['file_size'] / MiB:g}MiB = {total:g} "
                                    f"MiB at {rate(fields['source']):g} MiB/s (FROM={fields['source']})",
                                    "fewer JOBS, a smaller FILE_SIZE or a longer FUNCTION_TIMEOUT")  # fmt: skip


def transfer_price(bucket_region: str, function_region: str) -> float | None:
    """USD per GB read from `bucket_region` by a function in `function_region`: 0 in one region,
    None when the pair is not in TRANSFER_PRICES."""
    if bucket_region == function_region:
        return 0.0
    known = TRANSFER_PRICES.get((bucket_region, function_region))
    return known[0] if known else None


def unknown_pair(bucket_region: str, function_region: str) -> str:
    """The one line that refuses an unknown pair's cost."""
    pairs = ", ".join(f"{b} -> {f}" for b, f in TRANSFER_PRICES)
    return (f"no transfer price known for {bucket_region} -> {function_region} (known: {pairs}); "
            "not estimated")  # fmt: skip


def transfer_lines(bucket_region: str, function_region: str) -> list[str]:
    """The price of the pair and its source, or the refusal."""
    price = transfer_price(bucket_region, function_region)
    if price is None:
        return [unknown_pair(bucket_region, function_region)]
    source = TRANSFER_PRICES.get((bucket_region, function_region), (0, "same region: free"))[1]
    return [f"transfer {bucket_region} -> {function_region}: ${price}/GB (10^9 B); {source}"]


def estimate(count: int, deployment: costs.Deployment, fields: dict, function_region: str,
             remote_region: str) -> costs.Estimate:  # fmt: skip
    """`count` messages: each JOBS x the read mode's GETs per job at S3 Standard's price and, from
    the remote bucket, its bytes at the pair's transfer price (left out, and said so, when the
    pair is unknown); the transfer's share is flagged when it dominates."""
    gets = count * fields["jobs"] * definition.gets_per_job(fields)
    remote = fields["source"] == "remote"
    price = transfer_price(remote_region, function_region) if remote else 0.0
    data = (price or 0.0) * count * fields["jobs"] * fields["file_size"] / GB
    notes = [f"  seqread: {rate(fields['source']):g} MiB/s per message's group (FROM={fields['source']})"]
    if remote:
        notes += [f"  {line}" for line in transfer_lines(remote_region, function_region)]
    est = costs.priced(count, deployment, message_seconds(fields), s3_gets=gets * costs.PRICES["s3_get"],
                       s3_data=data, notes=tuple(notes))  # fmt: skip
    if est.total and data / est.total > DOMINATES:
        warning = f"  warning: inter-region transfer ${data:,.2f} is {data / est.total:.0%} of the estimate"
        est = dataclasses.replace(est, notes=(*notes, warning))
    return est
