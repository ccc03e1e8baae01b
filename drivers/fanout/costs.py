"""What a run would cost on AWS: the one table of prices, and the estimate fire prints.

The estimate guards against typing one zero too many: `fanout fire` refuses a run above
CONFIRM_MESSAGES messages or CONFIRM_USD dollars unless given --yes, and refuses one above
MAX_MESSAGES even with --yes. It prints this estimate, with the prices and assumptions behind
it, on every fire at AWS and whenever it refuses a run. `fanout sweep` applies the same
thresholds to the sweep's totals, before anything is deployed.
"""

from dataclasses import dataclass

# On-demand list prices in USD for us-east-1 (N. Virginia), as published on the AWS pricing
# pages in 2025. Other regions differ (some by 10-40%), free tiers and savings plans are ignored.
# A workload's own storage's prices live with its cost model (latency's Express One Zone prices:
# fanout.workloads.latency_costs), which builds on these with `priced`.
PRICES_REGION = "us-east-1"
PRICES_DATE = "2025"
PRICES = {
    "lambda_gb_second": {"x86_64": 0.0000166667, "arm64": 0.0000133334},
    "lambda_request": 0.20 / 1e6,
    "sqs_request": 0.40 / 1e6,  # standard queue, per 64 KiB chunk of a request
    "s3_get": 0.0004 / 1e3,  # S3 Standard GET; same-region transfer to Lambda is free
    "s3_put": 0.005 / 1e3,  # S3 Standard PUT
    "s3_delete": 0.0,  # DELETE requests are free
}
# Assumed per-function S3 throughput: the published sustained figure for one Lambda function.
ASSUMED_MIB_PER_S = 75
# SQS requests per message: its share of a 10-message SendMessageBatch, one receive, one delete.
SQS_REQUESTS_PER_MESSAGE = 0.1 + 1 + 1

CONFIRM_MESSAGES = 100_000
CONFIRM_USD = 10.0
# No experiment here needs more: 1,000 concurrent functions x 1,000 downloads each. A run of
# more is a typo, and its message bodies alone would fill the sender's memory.
MAX_MESSAGES = 1_000_000


@dataclass(frozen=True)
class Estimate:
    messages: int
    architecture: str
    seconds_each: float  # one download at the assumed throughput
    gb_seconds: float
    lambda_compute: float
    lambda_requests: float
    sqs_requests: float
    s3_gets: float
    s3_puts: float = 0.0  # and deletes: a workload's writes
    s3_data: float = 0.0  # per-GB charges on requests' data (a storage class that bills them)
    notes: tuple[str, ...] = ()  # the workload's cost model's own lines under the estimate (its prices)

    @property
    def total(self) -> float:
        return (self.lambda_compute + self.lambda_requests + self.sqs_requests + self.s3_gets + self.s3_puts
                + self.s3_data)  # fmt: skip


def estimate(
    messages: int, memory_mb: int, object_size: int, gets_each: int, architecture: str = "x86_64"
) -> Estimate:
    """AWS cost of `messages` downloads of `object_size` bytes at ASSUMED_MIB_PER_S each, each
    download sending `gets_each` GetObject requests (its strategy's `gets(object_size)`)."""
    seconds_each = object_size / (ASSUMED_MIB_PER_S * 1024**2)
    return priced(messages, memory_mb, seconds_each, architecture, s3_gets=messages * gets_each * PRICES["s3_get"])


def priced(messages: int, memory_mb: int, seconds_each: float, architecture: str, s3_gets: float,
           s3_puts: float = 0.0, s3_data: float = 0.0, notes: tuple[str, ...] = ()) -> Estimate:  # fmt: skip
    """The Estimate of `messages` invocations of `seconds_each` at `memory_mb`, with a workload's
    S3 charges (its cost model's, computed from its prices) and the lines that explain them."""
    gb_seconds = messages * seconds_each * memory_mb / 1024
    return Estimate(
        messages=messages,
        architecture=architecture,
        seconds_each=seconds_each,
        gb_seconds=gb_seconds,
        lambda_compute=gb_seconds * _gb_second_price(architecture),
        lambda_requests=messages * PRICES["lambda_request"],
        sqs_requests=messages * SQS_REQUESTS_PER_MESSAGE * PRICES["sqs_request"],
        s3_gets=s3_gets,
        s3_puts=s3_puts,
        s3_data=s3_data,
        notes=notes,
    )


def refusal(messages: int, largest_run: int, usd: float, confirmed: bool) -> str | None:
    """Why a run (or a sweep, with its totals) must not be sent, or None: a run of more than
    MAX_MESSAGES always, more than CONFIRM_MESSAGES messages or CONFIRM_USD dollars without --yes."""
    if largest_run > MAX_MESSAGES:
        return f"refusing to send {largest_run:,} messages: at most {MAX_MESSAGES:,} per run, even with --yes"
    if (messages > CONFIRM_MESSAGES or usd > CONFIRM_USD) and not confirmed:
        return (f"refusing to send {messages:,} messages (${usd:,.2f} on AWS) without --yes: "
                f"more than {CONFIRM_MESSAGES:,} messages or ${CONFIRM_USD:.0f}")  # fmt: skip
    return None


def describe(est: Estimate) -> list[str]:
    """The estimate in lines that fit 80 columns: total and parts, assumptions, prices, then the
    workload's cost model's own lines (its notes)."""
    requests = est.lambda_requests + est.sqs_requests + est.s3_gets + est.s3_puts + est.s3_data
    return [
        f"estimated AWS cost ${est.total:,.2f}: Lambda ${est.lambda_compute:,.2f} "
        f"({est.gb_seconds:,.0f} GB-s) + requests ${requests:,.2f}",
        f"  at {ASSUMED_MIB_PER_S} MiB/s per download; {PRICES_REGION} prices ({PRICES_DATE}): "
        "drivers/fanout/costs.py",
        f"  {price_list(est.architecture)}",
        *est.notes,
    ]


def price_list(architecture: str) -> str:
    """The prices the estimate uses: per GB-second, and per million requests."""
    return (
        f"Lambda ${_gb_second_price(architecture):.10f}/GB-s, ${PRICES['lambda_request'] * 1e6:.2f}/M "
        f"requests; SQS ${PRICES['sqs_request'] * 1e6:.2f}/M; S3 GET ${PRICES['s3_get'] * 1e6:.2f}/M"
    )


def _gb_second_price(architecture: str) -> float:
    return PRICES["lambda_gb_second"].get(architecture, PRICES["lambda_gb_second"]["x86_64"])
