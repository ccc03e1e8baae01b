"""The download strategies: the one definition of their names, typed parameters and code.

A strategy is a name plus typed parameters written as text (`ranged connections=8
chunk_size=8MiB`); everything else derives from the STRATEGIES table below, and adding a
strategy is one `Strategy(...)` entry. Text, canonical form and parameters: docs/strategies.md.
Hand-written parsing: a few lines for `name key=value...`, and the zip may not import the
drivers' size parser. Stdlib plus boto3 only (it runs in the Lambda runtime).
"""

import math
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

import boto3
from boto3.s3.transfer import ProgressCallbackInvoker, TransferConfig, create_transfer_manager
from botocore.exceptions import MissingDependencyException
from s3transfer.utils import S3_RETRYABLE_DOWNLOAD_ERRORS

from units import GiB, KiB, MiB, TiB, format_size, parse_count, parse_size

LIST_SEPARATOR = ";"
MAX_CONNECTIONS = 64  # the most parallel GETs a strategy may ask for; the client's pool holds them
MAX_REQUESTS = 100_000  # repeated: the most GETs one message may send (the function's timeout bounds it too)
READ_SIZE = TransferConfig().io_chunksize  # ranged reads bodies in the transfer manager's pieces (256 KiB)
DOWNLOAD_ATTEMPTS = TransferConfig().num_download_attempts  # and asks for a broken body again as often


class StrategyError(ValueError):
    """A strategy text that is not valid; the message is one line naming the bad part."""


@dataclass(frozen=True)
class Param:
    """One typed parameter: `kind` is "count" (a whole number) or "size" (bytes, units allowed)."""

    name: str
    kind: str
    default: int
    low: int
    high: int
    help: str

    def parse(self, text: str) -> int:
        value = parse_size(text) if self.kind == "size" else parse_count(text)
        if value is None:
            raise StrategyError(f"{self.name}={text!r} is not {self.allowed()}")
        if not self.low <= value <= self.high:
            raise StrategyError(f"{self.name}={text!r} is out of range: expected {self.allowed()}")
        return value

    def format(self, value: int) -> str:
        return format_size(value) if self.kind == "size" else str(value)

    def allowed(self) -> str:
        what = "a size" if self.kind == "size" else "a whole number"
        return f"{what} from {self.format(self.low)} to {self.format(self.high)}"


@dataclass(frozen=True)
class Strategy:
    """A registered strategy. `download(s3, bucket, key, values, progress, target)` reads the
    whole object, calls `progress(n)` as bytes arrive, and writes them to `target.fileobj`
    (or to the file `target.path` when it downloads to disk)."""

    name: str
    help: str
    params: tuple[Param, ...]
    download: Callable
    splits: bool = True  # reads in parts of chunk_size (above `threshold`, or above one chunk)
    heads: int = 0  # HeadObject requests before the GETs (the transfer manager's, to learn the size)
    aws_only: bool = False  # crt: its client cannot be pointed at another endpoint (see _crt)
    own_http: bool = False  # crt: its client resolves and connects itself (no botocore events, no pin)
    reads: str = ""  # the parameter that says how many times a message reads the whole object ("": once)

    def param(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        known = ", ".join(p.name for p in self.params) or "none"
        raise StrategyError(f"{self.name} has no parameter {name!r}: its parameters are {known}")


@dataclass(frozen=True)
class Choice:
    """A strategy with a value for each of its parameters; str() is its canonical text."""

    strategy: Strategy
    values: tuple[tuple[str, int], ...]

    @property
    def name(self) -> str:
        return self.strategy.name

    def value(self, name: str) -> int:
        return dict(self.values)[name]

    def __str__(self) -> str:
        parts = [f"{name}={self.strategy.param(name).format(value)}" for name, value in self.values]
        return " ".join([self.name, *parts])

    def fields(self) -> dict:
        """The record fields: `strategy` (canonical text), `strategy_name`, `strategy_<param>`."""
        return {"strategy": str(self), "strategy_name": self.name,
                **{f"strategy_{name}": value for name, value in self.values}}  # fmt: skip

    def download(self, s3, bucket: str, key: str, progress, target) -> None:
        self.strategy.download(s3, bucket, key, dict(self.values), progress, target)

    def heads(self, size: int) -> int:
        """HeadObject requests a download of `size` bytes sends (the drivers' cost estimate)."""
        return self.strategy.heads

    def reads(self) -> int:
        """How many times one message reads the whole object (its bytes are that many times its size)."""
        return self.value(self.strategy.reads) if self.strategy.reads else 1

    def gets(self, size: int) -> int:
        """GetObject requests to read an object of `size` bytes (the drivers' cost estimate)."""
        values = dict(self.values)
        if not self.strategy.splits:
            return self.reads()
        if size <= values.get("threshold", values["chunk_size"]):
            return 1
        return math.ceil(size / values["chunk_size"])


def parse(text: str) -> Choice:
    """The strategy in `text` (`name key=value ...`), defaults filled in; StrategyError if bad."""
    words = str(text).split()
    if not words:
        raise StrategyError(f"empty strategy {text!r}: expected one of {', '.join(STRATEGIES)}")
    name, *assignments = words
    if name not in STRATEGIES:
        raise StrategyError(f"unknown strategy {name!r} in {text!r}: expected one of {', '.join(STRATEGIES)}")
    strategy = STRATEGIES[name]
    given: dict[str, int] = {}
    for assignment in assignments:
        key, equals, value = assignment.partition("=")
        param = _param(strategy, key, text)
        if not equals or not value:
            raise StrategyError(f"invalid strategy {text!r}: expected {key}=VALUE, {param.allowed()}")
        if key in given:
            raise StrategyError(f"invalid strategy {text!r}: {key} is given twice")
        try:
            given[key] = param.parse(value)
        except StrategyError as exc:
            raise StrategyError(f"invalid strategy {text!r}: {exc}") from None
    return Choice(strategy, tuple((p.name, given.get(p.name, p.default)) for p in strategy.params))


def parse_list(text: str) -> list[Choice]:
    """Strategies separated by ';' (`stream; ranged connections=4`), in order, duplicates kept out."""
    choices: list[Choice] = []
    for item in str(text).split(LIST_SEPARATOR):
        choice = parse(item)
        if str(choice) in map(str, choices):
            raise StrategyError(f"strategy {str(choice)!r} is listed twice in {text!r}")
        choices.append(choice)
    return choices


def _param(strategy: Strategy, key: str, text: str) -> Param:
    try:
        return strategy.param(key)
    except StrategyError as exc:
        raise StrategyError(f"invalid strategy {text!r}: {exc}") from None


# ---- the strategies ----------------------------------------------------------------------------


def _download_file(s3, bucket, key, values, progress, target):
    config = TransferConfig(max_concurrency=values["max_concurrency"], multipart_chunksize=values["chunk_size"],
                            multipart_threshold=values["threshold"])  # fmt: skip
    s3.download_file(bucket, key, target.path, Callback=progress, Config=config)


def _stream(s3, bucket, key, values, progress, target):
    body = s3.get_object(Bucket=bucket, Key=key)["Body"]
    for chunk in body.iter_chunks(values["chunk_size"]):
        target.fileobj.write(chunk)
        progress(len(chunk))


def _ranged(s3, bucket, key, values, progress, target):
    """The transfer manager's download_fileobj, by hand: a HeadObject, then one ranged GET per
    chunk on `connections` threads, each body read in READ_SIZE pieces. s3transfer hands every
    piece to its IO thread as a task (a future, a semaphore, a copy of botocore's context, two
    debug messages formatted), about as much CPU as reading the piece: the strategy measured
    the client's CPU, not S3 (docs/strategies.md, "Speed of the measurement")."""
    size = s3.head_object(Bucket=bucket, Key=key)["ContentLength"]
    chunk = values["chunk_size"]
    sink = _OffsetWriter(target.fileobj)
    if size <= chunk:  # as the transfer manager with threshold = chunk_size: one GET, no Range
        _read_part(s3, bucket, key, 0, None, progress, sink)
        return
    parts = [(first, f"bytes={first}-{min(first + chunk, size) - 1}") for first in range(0, size, chunk)]
    with ThreadPoolExecutor(values["connections"]) as pool:
        _wait_all(pool, [pool.submit(_read_part, s3, bucket, key, first, byte_range, progress, sink)
                         for first, byte_range in parts])  # fmt: skip


def _wait_all(pool: ThreadPoolExecutor, futures: list) -> None:
    """Every future's end; the first failure cancels those not started and fails the download, as
    s3transfer's does."""
    try:
        for future in futures:
            future.result()
    except BaseException:
        pool.shutdown(cancel_futures=True)
        raise


def _read_part(s3, bucket, key, first: int, byte_range: str | None, progress, sink) -> None:
    """One GET, its body written at `first` on; a body that breaks off is asked for again, whole,
    as s3transfer does (its retryable errors and attempts), its bytes taken back from progress."""
    ranged = {"Range": byte_range} if byte_range else {}
    for attempt in range(1, DOWNLOAD_ATTEMPTS + 1):
        offset = first
        try:
            for piece in s3.get_object(Bucket=bucket, Key=key, **ranged)["Body"].iter_chunks(READ_SIZE):
                sink.write(offset, piece)
                offset += len(piece)
                progress(len(piece))
            return
        except S3_RETRYABLE_DOWNLOAD_ERRORS:
            progress(first - offset)
            if attempt == DOWNLOAD_ATTEMPTS:
                raise


def _repeated(s3, bucket, key, values, progress, target):
    """The whole object GET `requests` times, `in_flight` at a time, each GET on a new connection:
    ab's `-n requests -c in_flight` without keep-alive. Each GET asks the server to close its
    connection after the answer (`Connection: close`, which an HTTP/1.1 server must honour: RFC
    9112, section 9.6); http.client then hands the socket to the response and urllib3 connects
    anew for the next GET. So the GETs go through the function's own client, with its signing,
    response checksums, retries, the pin (each new connection resolves the name again, which the
    pin answers) and the per-request log (requests, connections, endpoint_ip), rather than a
    client per GET (building one costs milliseconds of CPU that ab does not spend, inside the
    timing) or urllib3 beside botocore (unsigned, and unseen by the request log)."""
    sink = _OffsetWriter(target.fileobj)
    with listening(s3, {"before-send.s3.GetObject": _close_after}), ThreadPoolExecutor(values["in_flight"]) as pool:
        _wait_all(pool, [pool.submit(_read_part, s3, bucket, key, 0, None, progress, sink)
                         for _ in range(values["requests"])])  # fmt: skip


def _close_after(request, **_) -> None:
    """Ask the server to close the connection once it has answered (set after signing: a proxy
    may drop a hop-by-hop header, which must not break the signature)."""
    request.headers["Connection"] = "close"


@contextmanager
def listening(s3, hooks: dict):
    """`hooks` (botocore event -> handler) registered on `s3` while in the block. One environment
    runs one invocation at a time, so every request the client sends then is the message's."""
    hook_id = f"fanout-{uuid.uuid4().hex}"
    for event, hook in hooks.items():
        s3.meta.events.register(event, hook, unique_id=f"{hook_id}-{event}")
    try:
        yield
    finally:
        for event in hooks:
            s3.meta.events.unregister(event, unique_id=f"{hook_id}-{event}")


class _OffsetWriter:
    """Writes pieces of parallel GETs at their offsets in one file object (seek and write held together)."""

    def __init__(self, fileobj):
        self.fileobj = fileobj
        self._lock = threading.Lock()

    def write(self, offset: int, data: bytes) -> None:
        with self._lock:
            self.fileobj.seek(offset)
            self.fileobj.write(data)


def _crt(s3, bucket, key, values, progress, target):
    """Refuses rather than measure something else: boto3 silently falls back to the classic
    transfer manager when awscrt is missing or too old, when another process holds the CRT
    client, or (before 1.42) when "crt" is not a known choice."""
    check_crt_endpoint(s3.meta.endpoint_url)
    try:
        manager = create_transfer_manager(s3, crt_config(values))
    except MissingDependencyException as exc:
        raise CrtUnavailable(f"crt needs awscrt in the function's zip: {exc}") from None
    with manager:
        if type(manager).__name__ != "CRTTransferManager":
            raise CrtUnavailable(f"boto3 {boto3.__version__} gave {type(manager).__name__}, not the CRT client")
        subscribers = [ProgressCallbackInvoker(progress)]
        manager.download(bucket, key, target.fileobj, subscribers=subscribers).result()


def crt_config(values: dict) -> TransferConfig:
    """crt's TransferConfig: only the options boto3 accepts with "crt" (connections=0: unset)."""
    options = {"preferred_transfer_client": "crt", "multipart_chunksize": values["chunk_size"]}
    if values["connections"]:
        options["max_concurrency"] = values["connections"]
    return TransferConfig(**options)


def check_crt_endpoint(endpoint_url: str) -> None:
    """boto3's CRT path builds its own client from the region alone and ignores endpoint_url
    (boto/boto3#4839, still so in 1.44): pointed at an emulator it would read from AWS instead."""
    host = urlsplit(endpoint_url).hostname or ""
    if not (host.endswith(".amazonaws.com") or host.endswith(".amazonaws.com.cn")):
        raise CrtUnavailable(f"crt cannot use the endpoint {endpoint_url}: boto3's CRT client ignores custom endpoints")


class CrtUnavailable(Exception):
    """The crt strategy cannot run here (custom endpoint, no awscrt, or a boto3 without CRT)."""


class Discard:
    """A seekable sink that drops what is written: parallel parts are written at their offsets
    straight into it, with no reordering buffer."""

    def write(self, data) -> int:
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        return 0

    def tell(self) -> int:
        return 0

    def seekable(self) -> bool:
        return True


@dataclass(frozen=True)
class Target:
    """Where a download puts the bytes: `fileobj` for in-memory strategies, `path` on disk."""

    fileobj: object
    path: str


CHUNK = Param("chunk_size", "size", 8 * MiB, 256 * KiB, GiB, "bytes per ranged GET (part)")
STRATEGIES = {
    strategy.name: strategy
    for strategy in (
        Strategy(
            "download_file", "boto3's transfer manager to a file in /tmp (parallel ranged GETs above threshold)",
            (Param("max_concurrency", "count", 10, 1, MAX_CONNECTIONS, "parallel GETs (threads)"), CHUNK,
             Param("threshold", "size", 8 * MiB, 1, 5 * TiB, "objects larger than this are split in chunks")),
            _download_file,
            heads=1,
        ),
        Strategy(
            "stream", "one GET, its body read in fixed chunks and discarded (one connection)",
            (Param("chunk_size", "size", 256 * KiB, KiB, 64 * MiB, "bytes per read of the body"),),
            _stream,
            splits=False,
        ),
        Strategy(
            "ranged", "parallel ranged GETs into memory, discarded (download_fileobj's GETs, read by hand)",
            (Param("connections", "count", 8, 1, MAX_CONNECTIONS, "parallel GETs (threads, one connection each)"),
             CHUNK),
            _ranged,
            heads=1,
        ),
        Strategy(
            "crt", "the AWS CRT transfer client (awscrt), to memory and discarded; AWS endpoints only",
            (Param("connections", "count", 0, 0, MAX_CONNECTIONS, "concurrent connections; 0: CRT sizes them itself"),
             Param("chunk_size", "size", 8 * MiB, 5 * MiB, GiB, "part size of CRT's ranged GETs")),
            _crt,
            aws_only=True,
            own_http=True,
        ),
        Strategy(
            "repeated", "the whole object GET many times, some at once, each on a new connection (ab, no keep-alive)",
            (Param("requests", "count", 100, 1, MAX_REQUESTS, "GETs of the whole object per message (ab -n)"),
             Param("in_flight", "count", 10, 1, MAX_CONNECTIONS, "GETs at once, each on a new connection (ab -c)")),
            _repeated,
            splits=False,
            reads="requests",
        ),
    )
}
DEFAULT = "download_file"
