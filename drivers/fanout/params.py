"""Deploy parameters, checked before Terraform runs.

Every bad value is rejected here with one line naming the value and what is allowed, so that a
typo never leaves a half-created stack behind (and never creates a state directory). The limits
are the ones AWS enforces; infra/variables.tf repeats them so the module is safe on its own.
"""

import math
import re
from dataclasses import dataclass

from fanout.errors import UsageError
from fanout.sizes import parse_size

CONCURRENCY_RANGE = (1, 1000)  # reserved concurrency; the ESM's maximum_concurrency tops out at 1000
MEMORY_RANGE = (128, 10240)  # Lambda memory, MB
ARCHITECTURES = ("x86_64", "arm64")
MODES = ("download_file", "stream")

# The bucket name is "<stack>-<account id>-<region>" and must fit in S3's 63 characters.
STACK_PATTERN = re.compile(r"[a-z](?:[a-z0-9-]{0,28}[a-z0-9])?")
STACK_ALLOWED = "1-30 lowercase letters, digits or hyphens, starting with a letter, not ending with a hyphen"
REGION_PATTERN = re.compile(r"[a-z]{2}(?:-[a-z]+)+-\d+")

# download_file writes the object to /tmp (Lambda ephemeral storage, at most 10240 MB) and
# infra/lambda.tf sizes /tmp as the object plus this headroom.
MAX_EPHEMERAL_MIB = 10240
TMP_HEADROOM_MIB = 64


@dataclass(frozen=True)
class DeployParams:
    """Validated inputs of `fanout deploy` / `fanout plan`."""

    stack: str
    region: str
    concurrency: int
    memory: int
    object_size: int
    architecture: str
    mode: str

    def variables(self, endpoint: str, zip_path) -> dict:
        """Input variables of infra/ for this deployment."""
        return {
            "stack": self.stack,
            "region": self.region,
            "endpoint": endpoint,
            "zip_path": str(zip_path),
            "concurrency": self.concurrency,
            "memory": self.memory,
            "object_size": self.object_size,
            "architecture": self.architecture,
            "download_mode": self.mode,
        }


def from_args(args) -> DeployParams:
    """Validate the command line of deploy/plan; raises UsageError on the first bad value."""
    params = DeployParams(
        stack=stack_name(args.stack),
        region=region(args.region),
        concurrency=integer("concurrency", args.concurrency, *CONCURRENCY_RANGE),
        memory=integer("memory (MB)", args.memory, *MEMORY_RANGE),
        object_size=parse_size(args.object_size),
        architecture=choice("architecture", args.architecture, ARCHITECTURES),
        mode=choice("mode", args.mode, MODES),
    )
    check_fits_tmp(params.object_size, params.mode)
    return params


def stack_name(text: str) -> str:
    if not STACK_PATTERN.fullmatch(text):
        raise UsageError(f"invalid stack name {text!r}: expected {STACK_ALLOWED}")
    return text


def region(text: str) -> str:
    if not REGION_PATTERN.fullmatch(text):
        raise UsageError(f"invalid region {text!r}: expected an AWS region name such as us-east-1")
    return text


def integer(name: str, text, low: int, high: int) -> int:
    try:
        value = int(str(text), 10)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise UsageError(f"invalid {name} {text!r}: expected a whole number from {low} to {high}")
    return value


def choice(name: str, text: str, allowed: tuple) -> str:
    if text not in allowed:
        raise UsageError(f"invalid {name} {text!r}: expected one of {', '.join(allowed)}")
    return text


def check_fits_tmp(object_size: int, mode: str) -> None:
    """download_file needs the whole object in /tmp; stream mode has no such limit."""
    needed = math.ceil(object_size / 2**20) + TMP_HEADROOM_MIB
    if mode == "download_file" and needed > MAX_EPHEMERAL_MIB:
        limit = MAX_EPHEMERAL_MIB - TMP_HEADROOM_MIB
        raise UsageError(
            f"object size {object_size} bytes does not fit in Lambda's /tmp in download_file mode "
            f"(at most {limit} MiB plus {TMP_HEADROOM_MIB} MiB headroom); use --mode stream"
        )
