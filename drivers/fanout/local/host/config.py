"""What the host needs to know about a deployed function, read through the Lambda API.

Nothing is taken from Terraform or from our own conventions: the handler string, runtime,
environment, memory, timeout, reserved concurrency, the SQS event source mapping and the code
package all come from the emulator, so any Python function deployed there can be hosted.
"""

import hashlib
import io
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from botocore.exceptions import BotoCoreError, ClientError

from fanout.common import aws, paths
from fanout.common.errors import FanoutError, UsageError

# Unpacked packages kept in FANOUT_HOME/code, the most recently hosted first (unpacked_code).
PACKAGES_KEPT = 4


@dataclass(frozen=True)
class EventSource:
    """The function's SQS event source mapping (disabled in the emulator: the host plays it)."""

    queue_arn: str
    queue_url: str
    batch_size: int
    batching_window: int  # MaximumBatchingWindowInSeconds
    max_concurrency: int | None  # ScalingConfig.MaximumConcurrency
    report_batch_item_failures: bool


@dataclass(frozen=True)
class FunctionConfig:
    name: str
    arn: str
    role: str  # the execution role's ARN, which the host assumes for the function (credentials.py)
    region: str
    endpoint: str
    handler: str
    runtime: str
    environment: dict
    memory: int
    ephemeral_storage: int  # MB of /tmp
    timeout: int
    reserved_concurrency: int | None
    log_group: str
    code_location: str
    source: EventSource

    @property
    def version(self) -> str:
        return "$LATEST"

    def client(self, service: str, **config):
        return aws.client(service, self.region, self.endpoint, **config)

    def concurrency_limit(self) -> int | None:
        """min(reserved concurrency, ESM maximum concurrency); None when neither is set."""
        if self.reserved_concurrency == 0:
            raise UsageError(f"function {self.name!r} has reserved concurrency 0, so Lambda would throttle "
                             "every invocation; give it a reserved concurrency of 1 or more, or none")
        limits = [n for n in (self.reserved_concurrency, self.source.max_concurrency) if n is not None]
        return min(limits) if limits else None


def load(function_name: str, endpoint: str, region: str) -> FunctionConfig:
    """The function's configuration, or a one-line error naming what is missing or unreachable."""
    try:
        return _load(function_name, endpoint, region)
    except BotoCoreError as exc:  # no answer at all: a wrong or stopped endpoint, say
        raise FanoutError(f"cannot read function {function_name!r} from {endpoint or region}: "
                          f"{str(exc).splitlines()[0]}") from None


def _load(function_name: str, endpoint: str, region: str) -> FunctionConfig:
    lam = aws.client("lambda", region, endpoint)
    try:
        function = lam.get_function(FunctionName=function_name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "ResourceNotFoundException":
            raise UsageError(f"no function {function_name!r} is deployed at {endpoint or region}") from None
        raise
    conf = function["Configuration"]
    runtime = conf.get("Runtime") or ""
    if not runtime.startswith("python"):
        raise UsageError(f"function {function_name!r} has runtime {runtime or conf.get('PackageType')!r}; "
                         "the local host runs python3.x zip functions only")
    return FunctionConfig(
        name=conf["FunctionName"],
        arn=conf["FunctionArn"],
        role=conf["Role"],
        region=region,
        endpoint=endpoint,
        handler=conf["Handler"],
        runtime=runtime,
        environment=conf.get("Environment", {}).get("Variables", {}),
        memory=conf.get("MemorySize", 128),
        ephemeral_storage=conf.get("EphemeralStorage", {}).get("Size", 512),
        timeout=conf.get("Timeout", 3),
        reserved_concurrency=function.get("Concurrency", {}).get("ReservedConcurrentExecutions"),
        log_group=conf.get("LoggingConfig", {}).get("LogGroup") or f"/aws/lambda/{conf['FunctionName']}",
        code_location=function.get("Code", {}).get("Location", ""),
        source=_event_source(lam, function_name, region, endpoint),
    )


def _event_source(lam, function_name: str, region: str, endpoint: str) -> EventSource:
    mappings = lam.list_event_source_mappings(FunctionName=function_name)["EventSourceMappings"]
    sqs_mappings = [m for m in mappings if m["EventSourceArn"].split(":")[2] == "sqs"]
    if len(sqs_mappings) != 1:
        found = "no" if not sqs_mappings else str(len(sqs_mappings))
        raise UsageError(f"function {function_name!r} has {found} SQS event source mappings; "
                         "the host consumes exactly one")
    mapping = sqs_mappings[0]
    queue_arn = mapping["EventSourceArn"]
    _, _, _, _, account, queue_name = queue_arn.split(":")
    sqs = aws.client("sqs", region, endpoint)
    try:
        queue_url = sqs.get_queue_url(QueueName=queue_name, QueueOwnerAWSAccountId=account)["QueueUrl"]
    except ClientError:
        raise FanoutError(f"the queue {queue_arn} of function {function_name!r} does not exist") from None
    return EventSource(
        queue_arn=queue_arn,
        queue_url=queue_url,
        batch_size=mapping.get("BatchSize", 10),
        batching_window=mapping.get("MaximumBatchingWindowInSeconds") or 0,
        max_concurrency=(mapping.get("ScalingConfig") or {}).get("MaximumConcurrency"),
        report_batch_item_failures="ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or []),
    )


def unpack_code(config: FunctionConfig, task_root: Path) -> None:
    """Download the deployed package from GetFunction's Code.Location and link `task_root` to its
    unpacked tree (unpacked_code)."""
    # The emulator is on this machine: a proxy from the environment must not be used for it.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({})) if config.endpoint else \
        urllib.request.build_opener()
    try:
        with opener.open(config.code_location, timeout=60) as response:
            package = response.read()
    except (urllib.error.URLError, ValueError) as exc:
        raise FanoutError(f"cannot download the code of function {config.name!r} "
                          f"from {config.code_location!r}: {exc}") from None
    task_root.symlink_to(unpacked_code(config.name, package))


def unpacked_code(function_name: str, package: bytes) -> Path:
    """The package's tree under FANOUT_HOME/code, named by its SHA-256 and unzipped only by the
    first host run of those bytes: a sweep or a test session hosts the same package again and
    again, and unzipping the SDK it bundles (thousands of files) cost each run a second or so of
    file-system work. The environments cannot change it: each mounts its task root read-only
    (sandbox.isolate). Only the PACKAGES_KEPT most recently hosted are kept."""
    root = paths.home() / "code"
    tree = root / hashlib.sha256(package).hexdigest()
    if not tree.is_dir():
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=root))
        try:
            _extract(zipfile.ZipFile(io.BytesIO(package)), scratch)
            scratch.rename(tree)  # atomic; a host run unpacking the same bytes at once may win
        except zipfile.BadZipFile:
            raise FanoutError(f"the code package of function {function_name!r} is not a zip file") from None
        except OSError:
            if not tree.is_dir():
                raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    now = time.time_ns()  # explicit: a file system's own clock may tick coarser than two calls
    os.utime(tree, ns=(now, now))  # hosted now: the last to be evicted
    for old in sorted(root.iterdir(), key=lambda path: path.stat().st_mtime, reverse=True)[PACKAGES_KEPT:]:
        shutil.rmtree(old, ignore_errors=True)
    return tree


def _extract(package: zipfile.ZipFile, task_root: Path) -> None:
    """Unzip with each entry's unix mode, as Lambda does (extractall drops them: a script packaged
    executable must stay executable). Entries made elsewhere carry no mode and keep the default."""
    extracted = [(package.extract(entry, task_root), entry) for entry in package.infolist()]
    for path, entry in extracted:  # after extracting: a read-only directory's files come later
        mode = entry.external_attr >> 16 & 0o777
        if mode:
            os.chmod(path, mode)
