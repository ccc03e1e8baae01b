"""Storage classes the latency workload measures, a deploy-level choice: `--storage "standard express"`.

"standard" is the stack's general purpose bucket; "express" adds an S3 Express One Zone directory
bucket in one availability zone (`--express-az use1-az4`, infra/express.tf). The list of choices
is the function's (functions/downloader/latency.py, STORAGE_CLASSES: it checks every message
without the drivers), loaded from its file as fanout.strategies does; infra/variables.tf repeats
it (tests/infra/test_storage_validation.py keeps the two equal). Why the local backend refuses
express: docs/storage.md.
"""

import re

from fanout import function_modules
from fanout.errors import UsageError

# Sorted, as Terraform's set(string) and its `storage` output hold them: one order everywhere.
CLASSES = tuple(sorted(function_modules.load("latency").STORAGE_CLASSES))
DEFAULT = ("standard",)
# Zone IDs (use1-az4, apne1-az1) name the same physical zone in every account; zone names
# (us-east-1a) are mapped per account, and S3 names directory buckets by ID.
AZ_ID_PATTERN = re.compile(r"[a-z]{2,5}[0-9]{1,2}-az[0-9]{1,2}")


def choose(text: str, az_text: str) -> tuple[tuple[str, ...], str]:
    """(classes, zone ID) from --storage and --express-az as given; UsageError on a bad one."""
    classes = parse(text)
    return classes, express_az(az_text, classes)


def parse(text: str) -> tuple[str, ...]:
    """Storage classes from space-separated text, in CLASSES order, each once."""
    given = text.split()
    if not given:
        raise UsageError(f"invalid --storage {text!r}: expected one or more of {', '.join(CLASSES)}")
    for name in given:
        if name not in CLASSES:
            raise UsageError(f"invalid storage class {name!r} in --storage {text!r}: expected {' or '.join(CLASSES)}")
    return tuple(name for name in CLASSES if name in given)


def express_az(text: str, classes: tuple[str, ...]) -> str:
    """The directory bucket's zone ID: required with express, refused without it."""
    if "express" not in classes:
        if text:
            raise UsageError(f"invalid --express-az {text!r}: it places the express bucket; add express to --storage")
        return ""
    if not text:
        raise UsageError(
            "invalid --express-az '': storage class express needs the availability zone ID of its "
            "directory bucket, such as use1-az4"
        )
    if not AZ_ID_PATTERN.fullmatch(text):
        raise UsageError(
            f"invalid --express-az {text!r}: expected an availability zone ID such as use1-az4 "
            "(not a zone name such as us-east-1a)"
        )
    return text


def check_backend(classes: tuple[str, ...], backend: str) -> None:
    """Refuse express where it cannot be deployed: the local backend's emulator."""
    if "express" in classes and backend == "local":
        raise UsageError(
            "invalid storage class 'express' with --backend local: the embedded emulator (moto) has no "
            "directory buckets and no CreateSession, so express runs only on AWS (docs/storage.md)"
        )
