"""Storage classes the latency workload measures, a deploy-level choice: `--storage "standard express"`.

The list of choices is the function's (latency.py's STORAGE_CLASSES), loaded from its file; the
latency driver's deploy-level hooks call the functions here, so the generic modules never
import this one. Choices, zones and why the local backend refuses express: docs/storage.md.
"""

import re

from fanout.common import function_modules
from fanout.local import backends
from fanout.common.errors import UsageError
from fanout.workloads.base import DeployPlace, Given

# Sorted, as Terraform's set(string) and its `storage` output hold them: one order everywhere.
CLASSES = tuple(sorted(function_modules.load("latency").STORAGE_CLASSES))
DEFAULT = ("standard",)
# Zone IDs (use1-az4, apne1-az1) name the same physical zone in every account; zone names
# (us-east-1a) are mapped per account, and S3 names directory buckets by ID.
AZ_ID_PATTERN = re.compile(r"[a-z]{2,5}[0-9]{1,2}-az[0-9]{1,2}")
# The zone IDs where S3 Express One Zone can place a directory bucket, by region: the table of
# https://docs.aws.amazon.com/AmazonS3/latest/userguide/s3-express-Endpoints.html as read on
# 2026-11-25. AWS adds zones over time: a region or zone it lists now but this table lacks is
# refused with a line saying to add it here.
EXPRESS_ZONES = {
    "us-east-1": ("use1-az4", "use1-az5", "use1-az6"),
    "us-east-2": ("use2-az1", "use2-az2"),
    "us-west-2": ("usw2-az1", "usw2-az3", "usw2-az4"),
    "ap-south-1": ("aps1-az1", "aps1-az3"),
    "ap-northeast-1": ("apne1-az1", "apne1-az4"),
    "eu-west-1": ("euw1-az1", "euw1-az3"),
    "eu-north-1": ("eun1-az1", "eun1-az2", "eun1-az3"),
}
EXPRESS_ZONES_SOURCE = "AWS's S3 Express One Zone zone list of 2026-11-25, EXPRESS_ZONES in drivers/fanout/workloads/latency/storage.py"
# The deploy-level options (--storage, --express-az; Make STORAGE, EXPRESS_AZ), by argparse name.
DEPLOY_OPTIONS = ("storage", "express_az")


def add_deploy_arguments(parser) -> None:
    """--storage and --express-az, of deploy, plan and sweep."""
    default = " ".join(DEFAULT)
    parser.add_argument("--storage", help=f"storage classes the latency workload measures, space separated: "
                        f"{' and/or '.join(CLASSES)} (default: deploy and plan keep the deployed stack's, "
                        f"else {default}; docs/storage.md)")
    parser.add_argument("--express-az", help="availability zone ID of the express directory bucket, "
                        "such as use1-az4; required with --storage express")


def deploy_options(given: Given, place: DeployPlace) -> dict:
    """The classes and zone ID given (absent: the default), checked before anything is created:
    the backend first, so that the local backend refuses express before asking for its zone ID."""
    classes = parse(given.get("storage", " ".join(DEFAULT)))
    check_backend(classes, place.backend)
    zone = express_az(given.get("express_az", ""), classes)
    if zone:
        check_zone_in_region(zone, place.region)
    return {"storage": list(classes), "express_az": zone}


def kept_options(outputs: dict, given: Given) -> dict:
    """What a redeploy keeps of the deployed classes and zone ID (as the flags write them), for
    those not in `given`; the deployed zone ID is dropped when the given classes drop express."""
    fields = stack_fields(outputs)
    kept = {"storage": " ".join(fields["storage"]), "express_az": fields["express_az"]}
    if "express" not in given.get("storage", kept["storage"]).split():
        kept["express_az"] = ""
    return {name: text for name, text in kept.items() if name not in given}


def terraform_variables(options: dict) -> dict:
    """infra/'s `storage` and `express_az`; without the options (a sweep recorded before them), the default."""
    return {"storage": list(options.get("storage", DEFAULT)), "express_az": options.get("express_az", "")}


def stack_fields(outputs: dict) -> dict:
    """The stack's `storage`, `express_bucket` and `express_az` outputs. Stacks deployed before
    these outputs existed had only the standard bucket: the defaults describe them."""
    return {"storage": list(outputs.get("storage", DEFAULT)), "express_bucket": outputs.get("express_bucket", ""),
            "express_az": outputs.get("express_az", "")}  # fmt: skip


def deployed(stack) -> list[str]:
    """The storage classes `stack` (fanout.cloud.stack.Stack) was deployed with."""
    return stack_fields(stack.workload_outputs)["storage"]


def deploy_summary(stack) -> list[str]:
    """deploy's line: the classes, with the directory bucket's place."""
    fields = stack_fields(stack.workload_outputs)
    where = f": s3://{fields['express_bucket']} in {fields['express_az']}" if fields["express_bucket"] else ""
    return [f"storage   {' '.join(fields['storage'])}{where}"]


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


def check_zone_in_region(zone: str, region: str) -> None:
    """Refuse a zone ID where S3 Express One Zone has no directory buckets (or another region's):
    AWS would refuse only when creating the bucket, after the rest of the stack exists."""
    zones = EXPRESS_ZONES.get(region)
    if zones is None:
        raise UsageError(f"invalid --region {region!r} with storage class express: S3 Express One Zone is known in "
                         f"{', '.join(EXPRESS_ZONES)} ({EXPRESS_ZONES_SOURCE}; add a region AWS lists since)")
    if zone not in zones:
        raise UsageError(f"invalid --express-az {zone!r}: directory buckets in {region} are in zone IDs "
                         f"{', '.join(zones)} ({EXPRESS_ZONES_SOURCE})")


def check_backend(classes: tuple[str, ...], backend: str) -> None:
    """Refuse express where it cannot be deployed: the local backend's emulator."""
    if "express" in classes and backends.get(backend).embedded_emulator:
        raise UsageError(
            "invalid storage class 'express' with --backend local: the embedded emulator (moto) has no "
            "directory buckets and no CreateSession, so express runs only on AWS (docs/storage.md)"
        )
