"""The seqread objects a stack declares: `JOB_FILES="4x64MiB 16x1GiB"` keeps jobs 0-3 of
64 MiB and jobs 0-15 of 1 GiB, in the stack's bucket and the remote one, and the function's role
may read exactly those (infra/seqread.tf). A declaration maps file size -> jobs.

The role's inline policies are limited in size (docs/aws.md), and every object is an ARN per
bucket in it, so a declaration whose ARNs would not fit beside the other statements' usual share
is refused here, with the arithmetic, before Terraform runs. That share is a reserve, not the
stack's own count: with many KEYS or object sizes only infra/iam.tf's check of the whole policy,
at plan, refuses it (before anything changes).
"""

import functools

from botocore import loaders, regions
from botocore.exceptions import UnknownRegionError

from fanout.common import function_modules
from fanout.common.errors import UsageError

definition = function_modules.load("seqread")
units = function_modules.load("units")

OPTION = "job_files"  # the deploy-level option (--job-files, Make JOB_FILES)
OUTPUT = "seqread_objects"  # infra/'s variable and the stack's output
NONE = "none"
# The default run's objects, so that `make fire WORKLOAD=seqread` runs on a stack deployed without it.
DEFAULT = {definition.DEFAULT_FILE_SIZE: definition.DEFAULT_JOBS}
# IAM: a role's inline policies together, whitespace not counted (docs/aws.md, IAM quotas).
ROLE_POLICY_CHARS = 10_240
# What the role's other statements keep: about 2,300 characters with a 30-character stack name,
# express, the remote bucket and eight object sizes (infra/mock-tests/aws.tftest.hcl checks they fit).
OTHER_STATEMENTS_CHARS = 2_560
SEQREAD_POLICY_CHARS = ROLE_POLICY_CHARS - OTHER_STATEMENTS_CHARS
ACCOUNT_ID_CHARS = 12  # the account ID in every bucket name (infra/names.tf)


def parse(text: str) -> dict[int, int]:
    """The declaration in `text`: JOBSxFILE_SIZE words (a size given twice keeps its most jobs),
    or none; UsageError naming the bad word."""
    words = text.split()
    if words == [NONE]:
        return {}
    try:
        if not words:
            raise definition.ParamError("nothing declared")
        return union(*(_word(word) for word in words))
    except definition.ParamError as exc:
        raise UsageError(f"invalid JOB_FILES {text!r}: {exc}; expected JOBSxFILE_SIZE words such as "
                         f"'4x64MiB 16x1GiB', or {NONE}") from None  # fmt: skip


def _word(word: str) -> dict[int, int]:
    jobs, x, size = word.partition("x")
    if not x:
        raise definition.ParamError(f"{word!r} is not JOBSxFILE_SIZE")
    return {definition.parse_file_size(size): definition.parse_jobs(jobs)}


def text(declared: dict[int, int]) -> str:
    """The declaration as JOB_FILES writes it, smallest size first (none: `none`)."""
    return " ".join(f"{jobs}x{units.format_size(size)}" for size, jobs in sorted(declared.items())) or NONE


def union(*declarations: dict[int, int]) -> dict[int, int]:
    """Every object of each declaration: per size, the most jobs."""
    merged: dict[int, int] = {}
    for declared in declarations:
        for size, jobs in declared.items():
            merged[size] = max(jobs, merged.get(size, 0))
    return merged


def needed(fields: dict) -> dict[int, int]:
    """What a run's message fields (Params.fields()) read."""
    return {fields["file_size"]: fields["jobs"]}


def covers(declared: dict[int, int], fields: dict) -> bool:
    return declared.get(fields["file_size"], 0) >= fields["jobs"]


def keys(declared: dict[int, int]) -> list[str]:
    """The declared objects' keys, the function's (seqread.object_key)."""
    return [definition.object_key(size, job) for size, jobs in sorted(declared.items()) for job in range(jobs)]


def from_output(output: dict) -> dict[int, int]:
    """The stack output (Terraform's map: size as text -> jobs) as a declaration."""
    return {int(size): int(jobs) for size, jobs in output.items()}


def to_variable(declared: dict[int, int]) -> dict[str, int]:
    """The declaration as infra/'s `seqread_objects` map (Terraform's map keys are strings)."""
    return {str(size): jobs for size, jobs in sorted(declared.items())}


def policy_chars(declared: dict[int, int], stack: str, regions: list[str]) -> int:
    """Characters the declared objects' ARNs take in the role's policy, one bucket per region of
    `regions` (the stack's first), as jsonencode writes their list: quoted, comma separated, in
    brackets (none: no statement). A
    bucket is named "<stack>-<account ID>-<region>" (infra/names.tf), its ARN in the stack's
    region's partition."""
    partition = _partition(regions[0])
    bucket_chars = [len(stack) + 1 + ACCOUNT_ID_CHARS + 1 + len(region) for region in regions]
    arns = [len(f"arn:{partition}:s3:::") + chars + 1 + len(key) for chars in bucket_chars for key in keys(declared)]
    return sum(arns) + 3 * len(arns) + 1 if arns else 0


@functools.cache
def _resolver() -> regions.EndpointResolver:
    """botocore's endpoint data, read without a session (which would need the AWS profile)."""
    return regions.EndpointResolver(loaders.create_loader().load_data("endpoints"))


def _partition(region: str) -> str:
    """The partition of `region`; of a region botocore does not know, the longest partition
    name, a bound."""
    resolver = _resolver()
    try:
        return resolver.get_partition_for_region(region)
    except UnknownRegionError:
        return max(resolver.get_available_partitions(), key=len)


def check_policy(declared: dict[int, int], stack: str, regions: list[str], given: str) -> None:
    """Refuse, with the arithmetic, a declaration whose ARNs exceed SEQREAD_POLICY_CHARS;
    `given` says where it came from (JOB_FILES, a sweep's JOBS x FILE_SIZE)."""
    chars = policy_chars(declared, stack, regions)
    if chars <= SEQREAD_POLICY_CHARS:
        return
    objects, buckets = len(keys(declared)), len(regions)
    fit = SEQREAD_POLICY_CHARS * objects // chars
    raise UsageError(f"invalid {given} {text(declared)!r}: {objects} objects x {buckets} bucket(s) = "
                     f"{objects * buckets} ARNs of {chars:,} characters in the role's policy, over the "
                     f"{SEQREAD_POLICY_CHARS:,} seqread may take (IAM allows {ROLE_POLICY_CHARS:,} per role, "
                     f"{OTHER_STATEMENTS_CHARS:,} kept for its other statements; docs/aws.md): about {fit} objects "
                     "fit here; declare fewer jobs or file sizes")  # fmt: skip
