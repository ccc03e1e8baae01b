"""What a run would cost on AWS: the one table of prices, and the estimate fire prints.

The estimate guards against typing one zero too many: `fanout fire` refuses a run above
CONFIRM_MESSAGES messages or CONFIRM_USD dollars unless given --yes, and refuses one above
MAX_MESSAGES even with --yes. It prints this estimate, with the prices and assumptions behind
it, on every fire at AWS and whenever it refuses a run. `fanout sweep` applies the same
thresholds to the sweep's totals, before anything is deployed.
"""

import math
from dataclasses import dataclass
from typing import Any

from fanout import insights
from fanout.common import ramp

# On-demand list prices in USD for us-east-1 (N. Virginia), as published on the AWS pricing
# pages in 2025 (Lambda, SQS, S3 and CloudWatch pricing pages). Other regions differ (some by
# 10-40%), free tiers and savings plans are ignored.
# A workload's own storage's prices live with its cost model (latency's Express One Zone prices:
# fanout.workloads.latency.costs), which builds on these with `priced`.
PRICES_REGION = "us-east-1"
PRICES_DATE = "2025"
PRICES: dict[str, Any] = {  # USD; lambda_gb_second by architecture
    "lambda_gb_second": {"x86_64": 0.0000166667, "arm64": 0.0000133334},
    "lambda_request": 0.20 / 1e6,
    "sqs_request": 0.40 / 1e6,  # standard queue, per 64 KiB chunk of a request
    "s3_get": 0.0004 / 1e3,  # S3 Standard GET; same-region transfer to Lambda is free
    "s3_put": 0.005 / 1e3,  # S3 Standard PUT
    "s3_delete": 0.0,  # DELETE requests are free
    "s3_head": 0.0004 / 1e3,  # HEAD: priced as GET
    # /tmp above the free 512 MB, per GB-second of billed duration (both architectures)
    "lambda_ephemeral_gb_second": 0.0000000309,
    "logs_ingestion_gb": 0.50,  # CloudWatch Logs standard ingestion
    "insights_scan_gb": 0.005,  # Logs Insights, per GB scanned
}
FREE_EPHEMERAL_MIB = 512
# Assumed per-function S3 throughput: the published sustained figure for one Lambda function.
ASSUMED_MIB_PER_S = 75
# Assumed latency of one small S3 request: the ~27 ms median of 1 KiB GETs on S3 Standard in one
# published study; a request's bytes come on top at ASSUMED_MIB_PER_S.
ASSUMED_REQUEST_SECONDS = 0.027
# SQS requests per message: its share of a 10-message SendMessageBatch, one receive, one delete.
SQS_REQUESTS_PER_MESSAGE = 0.1 + 1 + 1
# Assumed INIT phase of a cold start (Python runtime importing boto3 and Powertools). Lambda bills
# INIT of zip functions on managed runtimes since 2025-08-01 (AWS Compute blog, "AWS Lambda
# standardizes billing for INIT phase"); every environment of a run starts cold once.
ASSUMED_INIT_SECONDS = 1.0
# Log bytes one message adds to the log group, at most: a download record with its capped
# per-request lists (about 3 KB), its share of START/END/REPORT lines and the Powertools keys;
# a test holds a real record under it. GB here is 10^9 bytes, the larger count of the two.
LOG_BYTES_PER_MESSAGE = 6_000
# Logs Insights queries that scan a run's logs (each is billed for the whole log group's events
# in its window, whatever its filter keeps): the saved queries one `fanout report` runs
# (fanout.workloads.download.report.build; a test counts them); on AWS, every WAIT_POLL_SECONDS,
# wait's count, one query per slice of SEQS_PER_QUERY seqs (insights.seq_slices), each scanning on
# average half of the run's logs (they grow while it runs); and wait's one look at the platform's
# errors at its end (stages/wait.py; a test counts both).
REPORT_QUERIES = 8
WAIT_POLL_SECONDS = 10.0
WAIT_END_QUERIES = 1

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
    s3_heads: float = 0.0
    cold_starts: int = 0
    lambda_init: float = 0.0  # the INIT phase of the cold starts
    lambda_ephemeral: float = 0.0  # /tmp above FREE_EPHEMERAL_MIB
    log_gb: float = 0.0
    logs_ingestion: float = 0.0
    insights_scans: float = 0.0
    run_seconds: float = 0.0  # wall time of the run, the mapping's ramp included (fanout.common.ramp)
    notes: tuple[str, ...] = ()  # the workload's cost model's own lines under the estimate (its prices)

    @property
    def requests(self) -> float:
        return self.lambda_requests + self.sqs_requests + self.s3_gets + self.s3_heads + self.s3_puts + self.s3_data

    @property
    def logs(self) -> float:
        return self.logs_ingestion + self.insights_scans

    @property
    def total(self) -> float:
        return self.lambda_compute + self.lambda_init + self.lambda_ephemeral + self.requests + self.logs


@dataclass(frozen=True)
class Deployment:
    """What a run's price depends on besides its messages: the function's memory, architecture,
    reserved concurrency (the mapping's target, and how many environments start cold) and /tmp."""

    memory_mb: int
    concurrency: int
    architecture: str = "x86_64"
    ephemeral_mib: int = FREE_EPHEMERAL_MIB


def estimate(messages: int, deployment: Deployment, object_size: int, gets_each: int, heads_each: int = 0,
             seconds_each: float | None = None) -> Estimate:
    """AWS cost of `messages` downloads of `object_size` bytes at ASSUMED_MIB_PER_S each (or of
    `seconds_each` when the strategy says: repeated's many GETs), each download sending
    `gets_each` GetObject and `heads_each` HeadObject requests (its strategy's)."""
    seconds_each = object_size / (ASSUMED_MIB_PER_S * 1024**2) if seconds_each is None else seconds_each
    return priced(messages, deployment, seconds_each, s3_gets=messages * gets_each * PRICES["s3_get"],
                  s3_heads=messages * heads_each * PRICES["s3_head"])  # fmt: skip


def priced(messages: int, deployment: Deployment, seconds_each: float, s3_gets: float, s3_puts: float = 0.0,
           s3_data: float = 0.0, s3_heads: float = 0.0, notes: tuple[str, ...] = (),
           log_bytes_each: int = LOG_BYTES_PER_MESSAGE) -> Estimate:  # fmt: skip
    """The Estimate of `messages` invocations of `seconds_each` on `deployment`, with a workload's
    S3 charges (its cost model's, computed from its prices) and the lines that explain them; and
    what every run adds: the cold starts' INIT, /tmp beyond the free part, the log bytes
    (`log_bytes_each` per message) ingested and scanned by wait and report."""
    gb = deployment.memory_mb / 1024
    cold_starts = min(deployment.concurrency, messages)
    billed_seconds = messages * seconds_each + cold_starts * ASSUMED_INIT_SECONDS
    run_seconds = ramp.run_seconds(messages * seconds_each, deployment.concurrency)
    log_gb = messages * log_bytes_each / 1e9
    scans = insights_scans(messages, run_seconds)
    extra_tmp_gb = max(0, deployment.ephemeral_mib - FREE_EPHEMERAL_MIB) / 1024
    return Estimate(
        messages=messages,
        architecture=deployment.architecture,
        seconds_each=seconds_each,
        gb_seconds=messages * seconds_each * gb,
        lambda_compute=messages * seconds_each * gb * gb_second_price(deployment.architecture),
        lambda_requests=messages * PRICES["lambda_request"],
        sqs_requests=messages * SQS_REQUESTS_PER_MESSAGE * PRICES["sqs_request"],
        s3_gets=s3_gets,
        s3_puts=s3_puts,
        s3_data=s3_data,
        s3_heads=s3_heads,
        cold_starts=cold_starts,
        lambda_init=cold_starts * ASSUMED_INIT_SECONDS * gb * gb_second_price(deployment.architecture),
        lambda_ephemeral=billed_seconds * extra_tmp_gb * PRICES["lambda_ephemeral_gb_second"],
        log_gb=log_gb,
        logs_ingestion=log_gb * PRICES["logs_ingestion_gb"],
        insights_scans=scans * log_gb * PRICES["insights_scan_gb"],
        run_seconds=run_seconds,
        notes=notes,
    )


def insights_scans(messages: int, run_seconds: float) -> float:
    """How many times Logs Insights reads the whole of a run's logs: report's queries, wait's
    last one, and its count at every poll over half of them on average."""
    polls = math.ceil(run_seconds / WAIT_POLL_SECONDS)
    return REPORT_QUERIES + WAIT_END_QUERIES + polls * len(insights.seq_slices(messages)) / 2


def time_limit_problem(seconds: float, timeout: int, arithmetic: str, remedy: str) -> str | None:
    """Why a message predicted to take `seconds` (`arithmetic`: the prediction, at the assumed
    rates) cannot end within the function's `timeout` seconds, and `remedy`; None when it fits.
    Lambda ends a message past its timeout: its clean-up never runs and it is retried."""
    if seconds <= timeout:
        return None
    return f"{arithmetic} takes {seconds:.0f} s, over the function's timeout of {timeout} s: {remedy}"


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
    return [
        f"estimated AWS cost ${est.total:,.2f}: Lambda ${est.lambda_compute:,.2f} ({est.gb_seconds:,.0f} GB-s)"
        f" + INIT ${est.lambda_init:,.2f}",
        f"  + /tmp ${est.lambda_ephemeral:,.2f} + requests ${est.requests:,.2f} + logs ${est.logs:,.2f} "
        f"({est.log_gb:,.3f} GB written)",
        f"  at {ASSUMED_MIB_PER_S} MiB/s per download, {ASSUMED_INIT_SECONDS:g} s INIT x {est.cold_starts:,} cold "
        f"starts; ~{est.run_seconds / 60:,.1f} min to run",
        f"  (queue mapping ramp included); {PRICES_REGION} prices, {PRICES_DATE},",
        "  from drivers/fanout/cloud/costs.py:",
        *(f"  {line}" for line in price_list(est.architecture)),
        *est.notes,
    ]


def price_list(architecture: str) -> list[str]:
    """The prices the estimate uses, in two lines: per GB-second, per million requests, per GB."""
    return [
        f"Lambda ${gb_second_price(architecture):.10f}/GB-s, ${PRICES['lambda_request'] * 1e6:.2f}/M "
        f"requests; SQS ${PRICES['sqs_request'] * 1e6:.2f}/M; S3 GET/HEAD ${PRICES['s3_get'] * 1e6:.2f}/M",
        f"/tmp ${PRICES['lambda_ephemeral_gb_second']:.10f}/GB-s over {FREE_EPHEMERAL_MIB} MB; logs "
        f"${PRICES['logs_ingestion_gb']:.2f}/GB in, ${PRICES['insights_scan_gb']}/GB scanned",
    ]


def gb_second_price(architecture: str) -> float:
    return PRICES["lambda_gb_second"].get(architecture, PRICES["lambda_gb_second"]["x86_64"])
