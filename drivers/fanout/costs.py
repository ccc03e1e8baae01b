"""What a run would cost on AWS: the one table of prices, and the estimate fire prints.

The estimate guards against typing one zero too many: `fanout fire` refuses a run above
CONFIRM_MESSAGES messages or CONFIRM_USD dollars unless given --yes, and prints this estimate
(with the prices and assumptions it used) either way it is asked.
"""

import math
from dataclasses import dataclass

from fanout.sizes import format_size

# On-demand list prices in USD for us-east-1 (N. Virginia), as published on the AWS pricing
# pages in 2025. Other regions differ (some by 10-40%), free tiers and savings plans are ignored.
PRICES_REGION = "us-east-1"
PRICES_DATE = "2025"
PRICES = {
    "lambda_gb_second": {"x86_64": 0.0000166667, "arm64": 0.0000133334},
    "lambda_request": 0.20 / 1e6,
    "sqs_request": 0.40 / 1e6,  # standard queue, per 64 KiB chunk of a request
    "s3_get": 0.0004 / 1e3,  # S3 Standard GET; same-region transfer to Lambda is free
}

# Assumed per-function S3 throughput: the published sustained figure for one Lambda function.
ASSUMED_MIB_PER_S = 75
# boto3's transfer manager (download_file mode) reads in ranged GETs of 8 MiB.
PART_SIZE = 8 * 1024**2
# SQS requests per message: its share of a 10-message SendMessageBatch, one receive, one delete.
SQS_REQUESTS_PER_MESSAGE = 0.1 + 1 + 1

CONFIRM_MESSAGES = 100_000
CONFIRM_USD = 10.0


@dataclass(frozen=True)
class Estimate:
    messages: int
    seconds_each: float
    gb_seconds: float
    lambda_compute: float
    lambda_requests: float
    sqs_requests: float
    s3_gets: float

    @property
    def total(self) -> float:
        return self.lambda_compute + self.lambda_requests + self.sqs_requests + self.s3_gets

    @property
    def needs_confirmation(self) -> bool:
        return self.messages > CONFIRM_MESSAGES or self.total > CONFIRM_USD


def estimate(
    messages: int, memory_mb: int, object_size: int, mode: str, architecture: str = "x86_64"
) -> Estimate:
    """AWS cost of `messages` downloads of `object_size` bytes at ASSUMED_MIB_PER_S each."""
    seconds_each = object_size / (ASSUMED_MIB_PER_S * 1024**2)
    gb_seconds = messages * seconds_each * memory_mb / 1024
    gets_each = math.ceil(object_size / PART_SIZE) if mode == "download_file" else 1
    rate = PRICES["lambda_gb_second"].get(architecture, PRICES["lambda_gb_second"]["x86_64"])
    return Estimate(
        messages=messages,
        seconds_each=seconds_each,
        gb_seconds=gb_seconds,
        lambda_compute=gb_seconds * rate,
        lambda_requests=messages * PRICES["lambda_request"],
        sqs_requests=messages * SQS_REQUESTS_PER_MESSAGE * PRICES["sqs_request"],
        s3_gets=messages * gets_each * PRICES["s3_get"],
    )


def describe(est: Estimate, memory_mb: int, object_size: int) -> str:
    """One line: the total, its parts, and the assumptions and prices behind them."""
    return (
        f"estimated AWS cost of {est.messages:,} messages: ${est.total:,.2f} "
        f"(Lambda {est.gb_seconds:,.0f} GB-s at {memory_mb} MB = ${est.lambda_compute:,.2f}, "
        f"Lambda requests ${est.lambda_requests:,.2f}, SQS ${est.sqs_requests:,.2f}, "
        f"S3 GET ${est.s3_gets:,.2f}; assumes {format_size(object_size)} read at "
        f"{ASSUMED_MIB_PER_S} MiB/s = {est.seconds_each:.3g} s each; {price_list()})"
    )


def price_list() -> str:
    """The prices the estimate uses, with their region and date."""
    gb_s = PRICES["lambda_gb_second"]
    return (
        f"{PRICES_REGION} list prices of {PRICES_DATE}, other regions differ: "
        f"Lambda ${gb_s['x86_64']:.10f}/GB-s x86_64, ${gb_s['arm64']:.10f}/GB-s arm64, "
        f"${PRICES['lambda_request'] * 1e6:.2f}/M requests; SQS ${PRICES['sqs_request'] * 1e6:.2f}/M "
        f"requests; S3 GET ${PRICES['s3_get'] * 1e3:.4f}/1k"
    )
