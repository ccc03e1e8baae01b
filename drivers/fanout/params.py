"""Deploy parameters, checked before Terraform runs.

Every bad value is rejected here with one line naming the value and what is allowed, so that a
typo never leaves a half-created stack behind (and never creates a state directory). The limits
are the ones AWS enforces; infra/variables.tf repeats them so the module is safe on its own.
"""

import math
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from fanout import numbers, package, strategies, workloads
from fanout.errors import UsageError
from fanout.sizes import format_size, parse_size

CONCURRENCY_RANGE = (1, 1000)  # reserved concurrency; the ESM's maximum_concurrency tops out at 1000
MEMORY_RANGE = (128, 10240)  # Lambda memory, MB
ARCHITECTURES = ("x86_64", "arm64")
# Lambda's function timeout, seconds. The queue's visibility timeout is 6x it (infra/sqs.tf), so
# a message that keeps failing reaches the DLQ after max_receive_count x 6 x this: 2.5 h at the
# default. Tests and the demo deploy a short one so that the failure path ends in minutes.
FUNCTION_TIMEOUT_RANGE = (1, 900)
DEFAULT_FUNCTION_TIMEOUT = 300

# The bucket name is "<stack>-<account id>-<region>" and must fit in S3's 63 characters.
STACK_PATTERN = re.compile(r"[a-z](?:[a-z0-9-]{0,28}[a-z0-9])?")
STACK_ALLOWED = "1-30 lowercase letters, digits or hyphens, starting with a letter, not ending with a hyphen"
REGION_PATTERN = re.compile(r"[a-z]{2}(?:-[a-z]+)+-\d+")

# download_file writes the object to /tmp (Lambda ephemeral storage, at most 10240 MB) and
# infra/lambda.tf sizes /tmp as the object plus this headroom.
MAX_EPHEMERAL_MIB = 10240
TMP_HEADROOM_MIB = 64
# S3's largest object: a multipart upload of at most 10,000 parts of at most 5 GiB (48.8 TiB).
MAX_OBJECT_SIZE = 10_000 * 5 * 2**30
# The queue mapping's maximum_concurrency cannot go below this (infra/lambda.tf).
MAPPING_MIN_CONCURRENCY = 2
# KEYS: copies of the test object under prefixes of their own (infra/variables.tf `keys`).
KEYS_RANGE = (1, 100)


# The deploy inputs' command-line flags: (flag, default, what it is). Deploy takes one value of
# each, the sweep one or more.
FLAGS = (
    ("--concurrency", "10", "reserved concurrency, 1-1000"),
    ("--memory", "1024", "function memory in MB, 128-10240"),
    ("--object-size", "256MiB", "test object size, e.g. 64MiB, 1GB"),
    ("--architecture", "x86_64", "x86_64 or arm64"),
    ("--strategy", strategies.DEFAULT, f"download strategy, e.g. 'stream' or 'ranged connections=8' "
                                       f"(one of {', '.join(strategies.STRATEGIES)}; --mode is its old name)"),
)


def add_arguments(parser, lists: bool = False) -> None:
    """The flags of FLAGS; with `lists`, each takes one or more values (a sweep's axes), separated
    by spaces, strategies (which contain spaces) by ';'."""
    for flag, default, text in FLAGS:
        separator = f"'{strategies.definition.LIST_SEPARATOR}'" if flag == "--strategy" else "spaces"
        more = f"; one or more, separated by {separator}" if lists else ""
        names = (flag, "--mode") if flag == "--strategy" else (flag,)
        parser.add_argument(*names, default=default, help=f"{text} (default {default}{more})")


@dataclass(frozen=True)
class DeployParams:
    """Validated inputs of `fanout deploy` / `fanout plan`."""

    stack: str
    region: str
    concurrency: int
    memory: int
    object_size: int
    architecture: str
    strategy: str  # canonical text of the default strategy (messages that name none)
    function_timeout: int = DEFAULT_FUNCTION_TIMEOUT
    # Sizes of the other test objects the bucket keeps (a sweep over object sizes uploads each
    # once): the function's role may read each of them, and nothing else.
    kept_object_sizes: tuple[int, ...] = ()
    # Changing it changes the function's configuration, so Lambda starts fresh execution
    # environments (the sweep's fresh environments between cells on the same deployment).
    environment_epoch: str = ""
    # The registered workloads' deploy-level options (fanout.workloads.deploy_options; latency:
    # storage, express_az), by name; one absent deploys its default.
    workload_options: dict = field(default_factory=dict)
    sdk: str = package.DEFAULT_SDK  # fanout.package.SDKS: the zip's pinned boto3, or the runtime's
    keys: int = 1  # copies of the test object, each under its own prefix; the function reads seq mod keys

    def object_sizes(self) -> list[int]:
        """Every test object the stack keeps, this one included, smallest first."""
        return sorted({self.object_size, *self.kept_object_sizes})

    def variables(self, endpoint: str, zip_path, backend: str = "local") -> dict:
        """Input variables of infra/ for this deployment.

        Only the local backend's endpoint is the embedded emulator; another endpoint on the AWS
        backend (LocalStack...) gets the same resources as AWS.
        """
        return {
            "stack": self.stack,
            "region": self.region,
            "endpoint": endpoint,
            "endpoint_in_environment": bool(endpoint),  # terraform.environment sets AWS_ENDPOINT_URL
            "embedded_emulator": backend == "local",
            "zip_path": str(zip_path),
            "concurrency": self.concurrency,
            "memory": self.memory,
            "object_size": self.object_size,
            "architecture": self.architecture,
            "default_strategy": self.strategy,
            "timeout": self.function_timeout,
            "test_object_sizes": self.object_sizes(),
            "environment_epoch": self.environment_epoch,
            "sdk": self.sdk,
            "keys": self.keys,
            **workloads.terraform_variables(self.workload_options),
        }


def from_args(args) -> DeployParams:
    """Validate the command line of deploy/plan; raises UsageError on the first bad value."""
    return parse(args.stack, args.region, args.concurrency, args.memory, args.object_size, args.architecture,
                 args.strategy, args.function_timeout, workloads.deploy_options(args, args.backend),
                 args.sdk, args.keys)  # fmt: skip


def parse(stack: str, region_name: str, concurrency, memory, size, architecture: str, strategy,
          function_timeout=DEFAULT_FUNCTION_TIMEOUT, workload_options: dict | None = None,
          sdk: str = package.DEFAULT_SDK, keys="1") -> DeployParams:  # fmt: skip
    """DeployParams from values as a user writes them (`strategy` as text or a parsed Choice;
    `workload_options` as fanout.workloads.deploy_options checked them, none: the defaults);
    raises UsageError on the first bad one."""
    chosen = strategy if isinstance(strategy, strategies.Choice) else strategies.parse(strategy)
    params = DeployParams(
        stack=stack_name(stack),
        region=region(region_name),
        concurrency=concurrency_value(concurrency),
        memory=memory_value(memory),
        object_size=object_size(size),
        architecture=choice("architecture", architecture, ARCHITECTURES),
        strategy=str(chosen),
        function_timeout=function_timeout_value(function_timeout),
        workload_options=dict(workload_options or {}),
        sdk=package.check_sdk(sdk),
        keys=integer("keys", keys, *KEYS_RANGE),
    )
    check_fits_tmp(params.object_size, chosen.name)
    return params


def concurrency_value(text) -> int:
    return integer("concurrency", text, *CONCURRENCY_RANGE)


def memory_value(text) -> int:
    return integer("memory (MB)", text, *MEMORY_RANGE)


def function_timeout_value(text) -> int:
    return integer("function timeout (s)", text, *FUNCTION_TIMEOUT_RANGE)


def stack_name(text: str) -> str:
    if not STACK_PATTERN.fullmatch(text):
        raise UsageError(f"invalid stack name {text!r}: expected {STACK_ALLOWED}")
    return text


def region(text: str) -> str:
    if not REGION_PATTERN.fullmatch(text):
        raise UsageError(f"invalid region {text!r}: expected an AWS region name such as us-east-1")
    return text


def object_size(text: str) -> int:
    size = parse_size(text)
    if size > MAX_OBJECT_SIZE:
        raise UsageError(
            f"invalid object size {text!r}: S3's maximum object size is {MAX_OBJECT_SIZE} bytes "
            f"({format_size(MAX_OBJECT_SIZE)}, 10,000 parts of 5 GiB)"
        )
    return size


def endpoint(backend: str, text: str) -> str:
    """The --endpoint of the AWS backend: empty (AWS itself) or an emulator's http(s) URL."""
    if text and backend == "local":
        raise UsageError(
            f"invalid --endpoint {text!r} with --backend local: the local backend uses "
            "the embedded emulator; use --backend aws to target another endpoint"
        )
    url = urlsplit(text)
    if text and (url.scheme not in ("http", "https") or not url.netloc):
        raise UsageError(f"invalid --endpoint {text!r}: expected an http(s) URL such as http://localhost:4566")
    return text


def warnings(params: DeployParams) -> list[str]:
    """Allowed values that deserve a word before deploying."""
    if params.concurrency < MAPPING_MIN_CONCURRENCY:
        return [
            f"concurrency {params.concurrency} is below the queue mapping's minimum of "
            f"{MAPPING_MIN_CONCURRENCY}: on AWS it may start {MAPPING_MIN_CONCURRENCY} invocations, the "
            "function's limit throttles the extra ones, and a message throttled on every receive "
            "ends in the dead-letter queue"
        ]
    return []


def integer(name: str, text, low: int, high: int) -> int:
    value = numbers.whole(text)
    if value is None or not low <= value <= high:
        raise UsageError(f"invalid {name} {text!r}: expected a whole number from {low} to {high}")
    return value


def choice(name: str, text: str, allowed: tuple) -> str:
    if text not in allowed:
        raise UsageError(f"invalid {name} {text!r}: expected one of {', '.join(allowed)}")
    return text


def check_fits_tmp(object_size: int, strategy_name: str) -> None:
    """download_file needs the whole object in /tmp; the other strategies read into memory."""
    needed = math.ceil(object_size / 2**20) + TMP_HEADROOM_MIB
    if strategy_name == "download_file" and needed > MAX_EPHEMERAL_MIB:
        limit = MAX_EPHEMERAL_MIB - TMP_HEADROOM_MIB
        raise UsageError(
            f"object size {object_size} bytes does not fit in Lambda's /tmp with strategy download_file "
            f"(at most {limit} MiB plus {TMP_HEADROOM_MIB} MiB headroom); use STRATEGY=stream or ranged"
        )
