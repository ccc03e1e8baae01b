"""The latency workload's cost model: what its PUT, GET and DELETE rounds cost per storage class.

fanout.cloud.costs holds the generic mechanics (Lambda, SQS and S3 Standard prices, `priced`, the
thresholds); the storage classes' own request figures and Express One Zone's prices are this
workload's, so they live here. Written by hand: no library prices AWS requests.
"""

from fanout.cloud import costs

# Each PUT and GET takes the assumed small request's latency plus its bytes at costs.ASSUMED_MIB_PER_S.
ASSUMED_REQUEST_SECONDS = costs.ASSUMED_REQUEST_SECONDS
# S3 Express One Zone (the `express` class), us-east-1: the figures of the worked examples in AWS's
# S3 FAQ (Express One Zone billing), read 2026-11; they are the prices after AWS's April 2025
# reduction. The pricing page's own table could not be read (unconfirmed there). Requests per
# 1,000: PUT $0.00113, GET $0.00003, DELETE free; per GB of each request's data: upload $0.0032,
# retrieval $0.0006. The examples divide KB by 1,048,576: GB = 2^30 bytes. Storage
# ($0.11/GB-month) is left out: each object lives for a few calls.
EXPRESS_PRICES = {
    "get": 0.00003 / 1e3,
    "put": 0.00113 / 1e3,
    "delete": 0.0,
    "upload_gb": 0.0032,  # PUT data
    "retrieval_gb": 0.0006,  # GET data
}
# Bytes of each Express request that the per-GB charges skip. 512 KiB under the launch prices
# (2023: PUT $0.0025/1,000, GET $0.0002/1,000, upload $0.008/GB, retrieval $0.0015/GB); since the
# April 2025 reduction the charges apply to every byte, as the FAQ's example of 10 KB requests
# charges them. Kept as a constant so that the formula says which rule it applies.
EXPRESS_FREE_BYTES_PER_REQUEST = 0
EXPRESS_GB = 2**30


# Log bytes of one record (a timed PUT or GET), at most; a test holds a real record under it.
LOG_BYTES_PER_RECORD = 1_100


def estimate(messages: int, deployment: costs.Deployment, sizes: list[int], reps: int,
             storage: tuple[str, ...]) -> costs.Estimate:  # fmt: skip
    """AWS cost of `messages` latency messages, each making `reps` PUT+GET+DELETE rounds per size
    in `sizes` and storage class in `storage`: each PUT and GET takes ASSUMED_REQUEST_SECONDS
    plus its bytes at ASSUMED_MIB_PER_S, and is priced at its class's request prices (Express
    One Zone's add a per-GB charge on its data, express_data_price)."""
    per_round = [2 * ASSUMED_REQUEST_SECONDS + 2 * size / (costs.ASSUMED_MIB_PER_S * 2**20) for size in sizes]
    rounds = messages * reps  # per size and class
    prices = {name: request_prices(name) for name in storage}
    gets = rounds * len(sizes) * sum(get for get, _ in prices.values())
    puts = rounds * len(sizes) * sum(put for _, put in prices.values())
    data = rounds * sum(express_data_price(size) for size in sizes) if "express" in storage else 0.0
    records_each = 2 * reps * len(sizes) * len(storage)  # a PUT and a GET per round
    return costs.priced(messages, deployment, reps * len(storage) * sum(per_round), s3_gets=gets, s3_puts=puts,
                        s3_data=data, notes=notes(storage), log_bytes_each=records_each * LOG_BYTES_PER_RECORD)  # fmt: skip


def express_data_price(size: int) -> float:
    """Express One Zone's per-GB charges for one PUT and one GET of `size` bytes: upload and
    retrieval, each on the request's bytes beyond EXPRESS_FREE_BYTES_PER_REQUEST."""
    charged_gb = max(0, size - EXPRESS_FREE_BYTES_PER_REQUEST) / EXPRESS_GB
    return charged_gb * (EXPRESS_PRICES["upload_gb"] + EXPRESS_PRICES["retrieval_gb"])


def request_prices(storage: str) -> tuple[float, float]:
    """A storage class's price of one GET, and of one PUT with its DELETE."""
    if storage == "express":
        return EXPRESS_PRICES["get"], EXPRESS_PRICES["put"] + EXPRESS_PRICES["delete"]
    return costs.PRICES["s3_get"], costs.PRICES["s3_put"] + costs.PRICES["s3_delete"]


def notes(storage: tuple[str, ...]) -> tuple[str, ...]:
    """What fire prints under the estimate: the request time assumed, S3 Standard's PUT price, and
    Express One Zone's prices (and that they are unconfirmed) when the run measures express."""
    lines = [f"  and {ASSUMED_REQUEST_SECONDS * 1000:g} ms per request; S3 Standard PUT "
             f"${costs.PRICES['s3_put'] * 1e6:.2f}/M, DELETE free"]  # fmt: skip
    free = EXPRESS_FREE_BYTES_PER_REQUEST
    if "express" in storage:
        lines += [
            f"  S3 Express One Zone: PUT ${EXPRESS_PRICES['put'] * 1e6:.2f}/M, GET "
            f"${EXPRESS_PRICES['get'] * 1e6:.2f}/M, DELETE free; per GB (2^30 B)",
            f"  upload ${EXPRESS_PRICES['upload_gb']}, retrieval ${EXPRESS_PRICES['retrieval_gb']} of "
            + ("every byte" if not free else f"each request's bytes beyond {free:,}"),
            "  (the S3 FAQ's examples, 2025 prices; not confirmed on the pricing page)",
        ]
    return tuple(lines)
