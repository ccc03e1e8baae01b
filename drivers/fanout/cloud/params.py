"""Deploy parameters, checked before Terraform runs.

Every bad value is rejected here with one line naming the value and what is allowed, so that a
typo never leaves a half-created stack behind (and never creates a state directory). The limits
are the ones AWS enforces; infra/variables.tf repeats them so the module is safe on its own.
"""

import argparse
import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from fanout.common import numerals as numbers
from fanout.cloud import package
from fanout.common.backend import Backend
from fanout.common.errors import UsageError
from fanout.common.sizes import format_size, parse_size

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
# S3 refuses bucket names that start with these, and the stack name starts every bucket name
# (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html). Its reserved
# suffixes (-s3alias, --ol-s3, .mrap, --x-s3, --table-s3) cannot arise: the account ID and the
# region, or the directory bucket's own --<zone id>--x-s3, end every name.
BUCKET_FORBIDDEN_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
# infra/'s variables that say where resources are (a provider's region), by their Make names. Terraform
# refreshes and deletes what a stack holds through the region it is given now: a deployed stack
# keeps them (placement_change). Adding a remote region moves nothing: without one, the remote
# provider holds no resource.
PLACEMENT = {"region": "REGION", "remote_region": "REMOTE_REGION"}

# download_file writes the object to /tmp (Lambda ephemeral storage, at most 10240 MB) and
# infra/lambda.tf sizes /tmp as the object plus this headroom.
MAX_EPHEMERAL_MIB = 10240
TMP_HEADROOM_MIB = 64
# What the function holds besides a message's own data: the Python runtime with boto3 and
# Powertools, typically 80-90 MB of "Max Memory Used" in Lambda's REPORT lines for a function
# like this one (not measured by this project), with a little room. Every workload's memory check.
MEMORY_HEADROOM_MIB = 100
MIN_EPHEMERAL_MIB = 512
AUTO_EPHEMERAL = "auto"  # EPHEMERAL_STORAGE's default: /tmp sized from the object (ephemeral_mib)
# S3's largest object: a multipart upload of at most 10,000 parts of at most 5 GiB (48.8 TiB).
MAX_OBJECT_SIZE = 10_000 * 5 * 2**30
# The queue mapping's maximum_concurrency cannot go below this (infra/lambda.tf).
MAPPING_MIN_CONCURRENCY = 2
# Between the values of a sweep's list (fanout.stages.sweep_axes): spaces, or commas.
LIST_SEPARATORS = re.compile(r"[\s,]+")
# KEYS: copies of the test object under prefixes of their own (infra/variables.tf `keys`).
KEYS_RANGE = (1, 100)


@dataclass(frozen=True)
class Input:
    """A deploy input every stack has: its argparse name, Make variable, default (as text), what
    it is, and the stack output (infra/outputs.tf) that holds its deployed value."""

    name: str
    make: str
    default: str
    text: str
    output: str

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


# The one definition of the deploy inputs every stack has and their defaults. deploy and plan
# take one value of each (one not given keeps the deployed stack's, or on a first deploy takes
# this default); a sweep takes lists of the AXES; fire refuses one that differs from the stack's.
# A workload's own deploy-level options are its driver's (Driver.DEPLOY_OPTIONS).
INPUTS = (
    Input("concurrency", "CONCURRENCY", "10", "reserved concurrency, 1-1000", "concurrency"),
    Input("memory", "MEMORY", "1024", "function memory in MB, 128-10240", "memory"),
    Input("object_size", "OBJECT_SIZE", "256MiB", "test object size, e.g. 64MiB, 1GB", "object_size"),
    Input("architecture", "ARCH", "x86_64", "x86_64 or arm64", "architecture"),
    Input("region", "REGION", "us-east-1", "AWS region", "region"),
    Input("function_timeout", "FUNCTION_TIMEOUT", str(DEFAULT_FUNCTION_TIMEOUT),
          "function timeout in seconds, 1-900; the queue's visibility timeout is 6x it", "timeout"),
    Input("ephemeral_storage", "EPHEMERAL_STORAGE", AUTO_EPHEMERAL,
          f"/tmp in MB, {MIN_EPHEMERAL_MIB}-{MAX_EPHEMERAL_MIB}, or {AUTO_EPHEMERAL}: the object plus "
          f"{TMP_HEADROOM_MIB} MiB", "ephemeral_storage"),
)  # fmt: skip
AXES = tuple(item.name for item in INPUTS[:4])
DEFAULTS = {item.name: item.default for item in INPUTS}


def add_arguments(parser, lists: bool = False) -> None:
    """The flags of INPUTS, None when not given; with `lists` (a sweep), each of the AXES takes
    one or more values, separated by spaces."""
    for item in INPUTS:
        more = "; one or more, separated by spaces" if lists and item.name in AXES else ""
        default = item.default if lists else f"the deployed stack's, else {item.default}"
        parser.add_argument(item.flag, dest=item.name, help=f"{item.text} (default {default}{more})")


def add_fire_checks(parser: argparse.ArgumentParser, deploy_only: tuple[str, ...]) -> None:
    """fire's flags of the inputs set at deploy (INPUTS and `deploy_only`, the workloads'
    deploy-only options): a run uses the stack's value, so one given that differs is refused
    (fire_mismatches)."""
    flags = [(item.flag, item.name, item.make) for item in INPUTS]
    flags += [("--" + name.replace("_", "-"), name, name.upper()) for name in deploy_only]
    for flag, name, make in flags:
        parser.add_argument(flag, dest=name, help=f"set at deploy ({make}): refused unless it is the deployed "
                            "stack's value")  # fmt: skip


def given(texts: Mapping[str, str | None]) -> dict:
    """The inputs among `texts` (a command line's flags, by argparse name; None: not given)."""
    return {item.name: texts[item.name] for item in INPUTS if texts.get(item.name) is not None}


def deployed_texts(outputs: dict) -> dict:
    """A deployed stack's inputs (from its outputs), as text its flags accept."""
    return {item.name: str(outputs[item.output]) for item in INPUTS if item.output in outputs}


@dataclass(frozen=True)
class DeployParams:
    """Validated inputs of `fanout deploy` / `fanout plan`."""

    stack: str
    region: str
    concurrency: int
    memory: int
    object_size: int
    architecture: str
    function_timeout: int = DEFAULT_FUNCTION_TIMEOUT
    ephemeral_storage: int | None = None  # /tmp in MB; None: sized from the object (ephemeral_mib)
    # Sizes of the other test objects the bucket keeps (a sweep over object sizes uploads each
    # once): the function's role may read each of them, and nothing else.
    kept_object_sizes: tuple[int, ...] = ()
    # Changing it changes the function's configuration, so Lambda starts fresh execution
    # environments (the sweep's fresh environments between cells on the same deployment).
    environment_epoch: str = ""
    # The registered workloads' deploy-level options (fanout.workloads.registry.deploy_options; download:
    # the stack's default strategy; latency: storage, express_az), by name; one absent deploys its
    # default. `workload_variables`: infra/'s variables for them (the registry's terraform_variables),
    # which the stages give with them.
    workload_options: dict = field(default_factory=dict)
    workload_variables: dict = field(default_factory=dict)
    sdk: str = package.DEFAULT_SDK  # fanout.cloud.package.SDKS: the zip's pinned boto3, or the runtime's
    keys: int = 1  # copies of the test object, each under its own prefix; the function reads seq mod keys

    def object_sizes(self) -> list[int]:
        """Every test object the stack keeps, this one included, smallest first."""
        return sorted({self.object_size, *self.kept_object_sizes})

    def variables(self, endpoint: str, zip_path, backend: Backend) -> dict:
        """Input variables of infra/ for this deployment on `backend`.

        Only the local backend's endpoint is the embedded emulator; another endpoint on the AWS
        backend (LocalStack...) gets the same resources as AWS.
        """
        return {
            "stack": self.stack,
            "region": self.region,
            "endpoint": endpoint,
            "endpoint_in_environment": bool(endpoint),  # terraform.environment sets AWS_ENDPOINT_URL
            "embedded_emulator": backend.embedded_emulator,
            "zip_path": str(zip_path),
            "concurrency": self.concurrency,
            "memory": self.memory,
            "object_size": self.object_size,
            "architecture": self.architecture,
            "timeout": self.function_timeout,
            "ephemeral_storage": self.ephemeral_storage,
            "test_object_sizes": self.object_sizes(),
            "environment_epoch": self.environment_epoch,
            "sdk": self.sdk,
            "keys": self.keys,
            **self.workload_variables,
        }


@dataclass(frozen=True)
class DeployGiven:
    """A deploy's (or plan's) command line, parsed at the stage: the stack, its backend, and the
    inputs given as text by name (INPUTS', sdk and keys; those not given absent)."""

    stack: str
    backend: str
    texts: Mapping[str, str]

    def region(self, deployed: dict) -> str:
        """The region the stack goes to: given, else the deployed stack's (`deployed`: its
        outputs), else the default; as text (parse checks it)."""
        return resolved_texts(self.texts, deployed)["region"]


@dataclass(frozen=True)
class WorkloadDeploy:
    """The workloads' deploy-level options for one deploy, checked, and infra/'s variables for
    them: the stages get both from the registry (fanout.workloads.registry)."""

    options: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)


def resolved_texts(given_texts: Mapping[str, str | None], deployed: dict) -> dict:
    """Every input as text: given, else the deployed stack's (`deployed`: its outputs, {}: none),
    else its default."""
    return {**DEFAULTS, **deployed_texts(deployed), **given(given_texts)}


def from_given(given_inputs: DeployGiven, deployed: dict, workload: WorkloadDeploy) -> DeployParams:
    """Validate the command line of deploy/plan; raises UsageError on the first bad value. An
    input not given keeps its value in `deployed` (the stack's outputs, {}: none), else its
    default; `workload`: the workloads' options, checked by the stage likewise."""
    texts = resolved_texts(given_inputs.texts, deployed)
    sdk, keys = _zip_and_copies(given_inputs.texts, deployed)
    return parse(given_inputs.stack, texts["region"], texts["concurrency"], texts["memory"], texts["object_size"],
                 texts["architecture"], texts["function_timeout"], workload, sdk, keys,
                 texts["ephemeral_storage"])  # fmt: skip


def _zip_and_copies(texts: Mapping[str, str], deployed: dict) -> tuple:
    """SDK and KEYS (deploy's and plan's own flags, not a sweep's): given, else the deployed
    stack's (the stack output `sdk`, the number of `object_keys`), else the defaults."""
    sdk = texts.get("sdk") or deployed.get("sdk") or package.DEFAULT_SDK
    keys = texts.get("keys") or (len(deployed["object_keys"]) if deployed.get("object_keys") else 1)
    return sdk, keys


def changes(old: DeployParams, new: DeployParams) -> list[str]:
    """One line per input whose value differs, `name: old -> new`."""
    before, after = _shown(old), _shown(new)
    return [f"{name.replace('_', ' ')}: {before.get(name)} -> {after[name]}" for name in after
            if before.get(name) != after[name]]  # fmt: skip


def fire_mismatches(stack: str, at_fire: Mapping[str, str], makes: Mapping[str, str], before: DeployParams,
                    after: DeployParams) -> list[str]:
    """fire's inputs set at deploy (add_fire_checks: `at_fire`, those given, by name; `makes`,
    their Make variables) that differ from the deployed stack's, one line each: the run uses the
    stack's value, so the one given must not pass silently. `before`: the deployed stack's
    inputs; `after`: the same with `at_fire` given."""
    shown_before, shown_after = _shown(before), _shown(after)
    return [f"{makes[name]}={shown_after[name]} is set at deploy: stack {stack!r} has {shown_before[name]}"
            for name in makes if name in at_fire and shown_before[name] != shown_after[name]]  # fmt: skip


def fire_checked_makes(deploy_only: tuple[str, ...]) -> dict[str, str]:
    """The Make variables of fire's inputs set at deploy (INPUTS and the workloads' deploy-only
    options `deploy_only`), by name."""
    return {**{item.name: item.make for item in INPUTS}, **{name: name.upper() for name in deploy_only}}


def _shown(inputs: DeployParams) -> dict:
    """The inputs of `inputs` as text, by name (INPUTS' and the workloads' deploy options')."""
    shown = {item.name: str(getattr(inputs, item.name)) for item in INPUTS}
    shown["object_size"] = format_size(inputs.object_size)
    shown["ephemeral_storage"] = str(inputs.ephemeral_storage or AUTO_EPHEMERAL)
    shown |= {"sdk": inputs.sdk, "keys": str(inputs.keys)}
    for name, value in inputs.workload_options.items():
        text = " ".join(value) if isinstance(value, list) else str(value)
        shown[name] = text or "(none)"
    return shown


def parse(stack: str, region_name: str, concurrency, memory, size, architecture: str,
          function_timeout=DEFAULT_FUNCTION_TIMEOUT, workload: WorkloadDeploy | None = None,
          sdk: str = package.DEFAULT_SDK, keys="1", ephemeral_storage=AUTO_EPHEMERAL) -> DeployParams:  # fmt: skip
    """DeployParams from values as a user writes them (`workload`: the workloads' options as the
    registry checked them, none: the defaults); raises UsageError on the first bad one. What a
    workload cannot run on (the download workload's default strategy and /tmp) its driver's
    check_deployment refuses."""
    return DeployParams(
        stack=stack_name(stack),
        region=region(region_name),
        concurrency=one_value("concurrency", concurrency, concurrency_value),
        memory=one_value("memory (MB)", memory, memory_value),
        object_size=one_value("object size", size, object_size),
        architecture=one_value("architecture", architecture, architecture_value),
        function_timeout=function_timeout_value(function_timeout),
        ephemeral_storage=ephemeral_value(ephemeral_storage),
        workload_options=dict(workload.options if workload else {}),
        workload_variables=dict(workload.variables if workload else {}),
        sdk=package.check_sdk(sdk),
        keys=integer("keys", keys, *KEYS_RANGE),
    )


def list_values(flag: str, text: str, parse: Callable[[str], Any]) -> tuple:
    """A sweep axis's values (`text`: separated by spaces or commas), each read by `parse`, in
    order; UsageError naming `flag` when there is none or one is given twice (each is one cell)."""
    words = [word for word in LIST_SEPARATORS.split(text.strip()) if word]
    if not words:
        raise UsageError(f"invalid {flag} {text!r}: expected one or more values separated by spaces")
    values = tuple(parse(word) for word in words)
    repeated = sorted({word for word, value in zip(words, values) if values.count(value) > 1})
    if repeated:
        raise UsageError(f"invalid {flag} {text!r}: {', '.join(repeated)} given twice (each value is one cell)")
    return values


def concurrency_value(text) -> int:
    return integer("concurrency", text, *CONCURRENCY_RANGE)


def memory_value(text) -> int:
    return integer("memory (MB)", text, *MEMORY_RANGE)


def architecture_value(text: str) -> str:
    return choice("architecture", text, ARCHITECTURES)


def one_value(name: str, text, parse):
    """`parse(text)`, for an input deploy takes one value of. A list of values that would each be
    valid (`2,4`, `512 1024`) is a sweep's: refused as such, rather than as a malformed number."""
    words = [word for word in LIST_SEPARATORS.split(str(text).strip()) if word]
    if len(words) > 1 and all(_valid(parse, word) for word in words):
        raise UsageError(f"invalid {name} {text!r}: deploy takes one value; a list is for `make sweep`, its values "
                         f"separated by spaces ({' '.join(words)!r})")  # fmt: skip
    return parse(text)


def _valid(parse, text: str) -> bool:
    try:
        parse(text)
    except UsageError:
        return False
    return True


def function_timeout_value(text) -> int:
    return integer("function timeout (s)", text, *FUNCTION_TIMEOUT_RANGE)


def ephemeral_value(text) -> int | None:
    """EPHEMERAL_STORAGE: MB of /tmp, or None for auto (sized from the object by infra/lambda.tf)."""
    if str(text).strip().lower() == AUTO_EPHEMERAL:
        return None
    return integer(f"ephemeral storage (MB; or {AUTO_EPHEMERAL})", text, MIN_EPHEMERAL_MIB, MAX_EPHEMERAL_MIB)


def stack_name(text: str) -> str:
    if not STACK_PATTERN.fullmatch(text):
        raise UsageError(f"invalid stack name {text!r}: expected {STACK_ALLOWED}")
    forbidden = next((prefix for prefix in BUCKET_FORBIDDEN_PREFIXES if text.startswith(prefix)), None)
    if forbidden:
        raise UsageError(f"invalid stack name {text!r}: it starts the bucket names, and S3 forbids bucket names "
                         f"starting with {', '.join(BUCKET_FORBIDDEN_PREFIXES)}")
    return text


@functools.cache
def known_regions() -> tuple[str, ...]:
    """The S3 regions of botocore's endpoint data (aws partition): the SDK's own list, so a region it
    cannot reach is refused before anything is created (its name pattern alone accepts us-east-99).
    Read from its data files, not through a session: a session reads the AWS profile, and a profile
    that does not exist must not stop a local deploy. botocore is imported here: a command that
    only parses its flags needs none of it."""
    from botocore.loaders import create_loader
    from botocore.regions import EndpointResolver

    return tuple(EndpointResolver(create_loader().load_data("endpoints")).get_available_endpoints("s3"))


def region(text: str) -> str:
    regions = known_regions()
    if text not in regions:
        raise UsageError(f"invalid region {text!r}: expected an S3 region botocore knows, such as us-east-1 "
                         f"({len(regions)} known: {regions[0]} .. {regions[-1]})")  # fmt: skip
    return text


def placement_change(stack: str, recorded: dict, wanted: dict) -> str | None:
    """Why a deployed stack (`recorded`: the variables of its last apply) cannot take the
    `wanted` variables, or None: a region (PLACEMENT) that differs from the one its resources are
    in. Removing the remote region counts: the remote provider would fall back to the stack's
    region, and Terraform could then neither refresh nor delete the remote bucket."""
    for name, make in PLACEMENT.items():
        old, new = recorded.get(name, ""), wanted.get(name, "")
        if old and new != old:
            return (f"invalid {make} {new or 'none'!r}: stack {stack!r} is deployed with {make}={old}, where "
                    "Terraform keeps reaching its resources; destroy first or use another STACK")  # fmt: skip
    return None


def object_size(text: str) -> int:
    size = parse_size(text)
    if size > MAX_OBJECT_SIZE:
        raise UsageError(
            f"invalid object size {text!r}: S3's maximum object size is {MAX_OBJECT_SIZE} bytes "
            f"({format_size(MAX_OBJECT_SIZE)}, 10,000 parts of 5 GiB)"
        )
    return size


def endpoint(backend: Backend, text: str) -> str:
    """The --endpoint of the AWS backend: empty (AWS itself) or an emulator's http(s) URL."""
    if text and backend.embedded_emulator:
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


def ephemeral_mib(object_size: int) -> int:
    """The /tmp infra/lambda.tf gives the function for an object of `object_size` bytes (the
    object plus the headroom, whatever the default strategy: a message may ask for download_file)."""
    return min(MAX_EPHEMERAL_MIB, max(MIN_EPHEMERAL_MIB, math.ceil(object_size / 2**20) + TMP_HEADROOM_MIB))
