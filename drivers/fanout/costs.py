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
PRICES_REGION = "us-east-1"
PRICES_DATE = "2025"
PRICES = {
    "lambda_gb_second": {"x86_64": 0.0000166667, "arm64": 0.0000133334},
    "lambda_request": 0.20 / 1e6,
    "sqs_request": 0.40 / 1e6,  # standard queue, per 64 KiB chunk of a request
    "s3_get": 0.0004 / 1e3,  # S3 Standard GET; same-region transfer to Lambda is free
    "s3_put": 0.005 / 1e3,  # S3 Standard PUT
    "s3_delete": 0.0,  # DELETE requests are free
    # S3 Express One Zone (the latency workload's `express` class), us-east-1: the figures of the
    # worked examples in AWS's S3 FAQ (Express One Zone billing), read 2026-11; they are the
    # prices after AWS's April 2025 reduction. The pricing page's own table could not be read
    # (unconfirmed there). Requests per 1,000: PUT $0.00113, GET $0.00003, DELETE free; per GB of
    # each request's data: upload $0.0032, retrieval $0.0006. The examples divide KB by 1,048,576:
    # GB = 2^30 bytes. Storage ($0.11/GB-month) is left out: each object lives for a few calls.
    "s3_express_get": 0.00003 / 1e3,
    "s3_express_put": 0.00113 / 1e3,
    "s3_express_delete": 0.0,
    "s3_express_upload_gb": 0.0032,  # PUT data
    "s3_express_retrieval_gb": 0.0006,  # GET data
}
# Bytes of each Express request that the per-GB charges skip. 512 KiB under the launch prices
# (2023: PUT $0.0025/1,000, GET $0.0002/1,000, upload $0.008/GB, retrieval $0.0015/GB); since the
# April 2025 reduction the charges apply to every byte, as the FAQ's example of 10 KB requests
# charges them. Kept as a constant so that the formula says which rule it applies.
EXPRESS_FREE_BYTES_PER_REQUEST = 0
EXPRESS_GB = 2**30

# Assumed per-function S3 throughput: the published sustained figure for one Lambda function.
ASSUMED_MIB_PER_S = 75
# Assumed latency of one small S3 request (the latency workload's estimate): the ~27 ms median of
# 1 KiB GETs on S3 Standard in one published study.
ASSUMED_REQUEST_SECONDS = 0.027
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
    s3_puts: float = 0.0  # and deletes (free): the latency workload's writes
    s3_data: float = 0.0  # Express One Zone's per-GB upload and retrieval charges
    storage: tuple[str, ...] = ()  # the latency workload's storage classes priced (describe lists Express's)

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
    return _priced(messages, memory_mb, seconds_each, architecture, s3_gets=messages * gets_each * PRICES["s3_get"])


def latency_estimate(messages: int, memory_mb: int, sizes: list[int], reps: int, storage: tuple[str, ...],
                     architecture: str = "x86_64") -> Estimate:  # fmt: skip
    """AWS cost of `messages` latency messages, each making `reps` PUT+GET+DELETE rounds per size
    in `sizes` and storage class in `storage`: each PUT and GET takes ASSUMED_REQUEST_SECONDS
    plus its bytes at ASSUMED_MIB_PER_S, and is priced at its class's request prices (Express
    One Zone's add a per-GB charge on its data, express_data_price)."""
    per_round = [2 * ASSUMED_REQUEST_SECONDS + 2 * size / (ASSUMED_MIB_PER_S * 2**20) for size in sizes]
    rounds = messages * reps  # per size and class
    prices = {name: _request_prices(name) for name in storage}
    gets = rounds * len(sizes) * sum(get for get, _ in prices.values())
    puts = rounds * len(sizes) * sum(put for _, put in prices.values())
    data = rounds * sum(express_data_price(size) for size in sizes) if "express" in storage else 0.0
    return _priced(messages, memory_mb, reps * len(storage) * sum(per_round), architecture, s3_gets=gets,
                   s3_puts=puts, s3_data=data, storage=tuple(storage))  # fmt: skip


def express_data_price(size: int) -> float:
    """Express One Zone's per-GB charges for one PUT and one GET of `size` bytes: upload and
    retrieval, each on the request's bytes beyond EXPRESS_FREE_BYTES_PER_REQUEST."""
    charged_gb = max(0, size - EXPRESS_FREE_BYTES_PER_REQUEST) / EXPRESS_GB
    return charged_gb * (PRICES["s3_express_upload_gb"] + PRICES["s3_express_retrieval_gb"])


def _request_prices(storage: str) -> tuple[float, float]:
    """A storage class's price of one GET, and of one PUT with its DELETE."""
    prefix = "s3_express" if storage == "express" else "s3"
    return PRICES[f"{prefix}_get"], PRICES[f"{prefix}_put"] + PRICES[f"{prefix}_delete"]


def _priced(messages: int, memory_mb: int, seconds_each: float, architecture: str, s3_gets: float,
            s3_puts: float = 0.0, s3_data: float = 0.0, storage: tuple[str, ...] = ()) -> Estimate:  # fmt: skip
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
        storage=storage,
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
    """The estimate in lines that fit 80 columns: total and parts, assumptions, prices (and the
    latency workload's request figures)."""
    requests = est.lambda_requests + est.sqs_requests + est.s3_gets + est.s3_puts + est.s3_data
    return [
        f"estimated AWS cost ${est.total:,.2f}: Lambda ${est.lambda_compute:,.2f} "
        f"({est.gb_seconds:,.0f} GB-s) + requests ${requests:,.2f}",
        f"  at {ASSUMED_MIB_PER_S} MiB/s per download; {PRICES_REGION} prices ({PRICES_DATE}): "
        "drivers/fanout/costs.py",
        f"  {price_list(est.architecture)}",
    ] + ([f"  and {ASSUMED_REQUEST_SECONDS * 1000:g} ms per request; S3 Standard PUT "
          f"${PRICES['s3_put'] * 1e6:.2f}/M, DELETE free"] if est.s3_puts else []) + (
        _express_lines() if "express" in est.storage else [])  # fmt: skip


def _express_lines() -> list[str]:
    """Express One Zone's prices, and where they come from (see PRICES)."""
    free = EXPRESS_FREE_BYTES_PER_REQUEST
    return [
        f"  S3 Express One Zone: PUT ${PRICES['s3_express_put'] * 1e6:.2f}/M, GET "
        f"${PRICES['s3_express_get'] * 1e6:.2f}/M, DELETE free; per GB (2^30 B)",
        f"  upload ${PRICES['s3_express_upload_gb']}, retrieval ${PRICES['s3_express_retrieval_gb']} of "
        + ("every byte" if not free else f"each request's bytes beyond {free:,}"),
        "  (the S3 FAQ's examples, 2025 prices; not confirmed on the pricing page)",
    ]


def price_list(architecture: str) -> str:
    """The prices the estimate uses: per GB-second, and per million requests."""
    return (
        f"Lambda ${_gb_second_price(architecture):.10f}/GB-s, ${PRICES['lambda_request'] * 1e6:.2f}/M "
        f"requests; SQS ${PRICES['sqs_request'] * 1e6:.2f}/M; S3 GET ${PRICES['s3_get'] * 1e6:.2f}/M"
    )


def _gb_second_price(architecture: str) -> float:
    return PRICES["lambda_gb_second"].get(architecture, PRICES["lambda_gb_second"]["x86_64"])
