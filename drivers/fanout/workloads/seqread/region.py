"""The other region, a deploy-level choice: `--remote-region us-west-2` (Make REMOTE_REGION) adds a
second bucket there (infra/seqread.tf) that `FROM=remote` reads; the function stays in the
stack's region. `none` removes it again; not given, a redeploy keeps the deployed stack's.

The region names known are botocore's for S3 (its endpoint data: the SDK's own list, so a region
the SDK cannot reach is refused before anything is created).
"""

import boto3

from fanout.common.errors import UsageError

DEPLOY_OPTIONS = ("remote_region",)
NONE = "none"


def known_regions() -> list[str]:
    """The S3 regions of botocore's endpoint data (aws partition)."""
    return boto3.session.Session().get_available_regions("s3")


def add_deploy_arguments(parser) -> None:
    parser.add_argument("--remote-region", help="seqread: region of a second bucket that FROM=remote reads, such as "
                        f"us-west-2 ({NONE}: no second bucket; default: the deployed stack's, else {NONE})")


def parse(text: str, stack_region: str) -> str:
    """The remote region ('' for none): a region botocore knows for S3, not the stack's own."""
    if text in ("", NONE):
        return ""
    regions = known_regions()
    if text not in regions:
        raise UsageError(f"invalid REMOTE_REGION {text!r}: expected {NONE} or an S3 region botocore knows, such as "
                         f"us-west-2 ({len(regions)} known: {regions[0]} .. {regions[-1]})")
    if text == stack_region:
        raise UsageError(f"invalid REMOTE_REGION {text!r}: it is the stack's own region; expected another one")
    return text


def deploy_options(args, backend: str) -> dict:
    return {"remote_region": parse(args.remote_region or "", args.region)}


def kept_options(outputs: dict, given: dict) -> dict:
    return {} if "remote_region" in given else {"remote_region": stack_fields(outputs)["remote_region"] or NONE}


def terraform_variables(options: dict) -> dict:
    return {"remote_region": options.get("remote_region", "")}


def stack_fields(outputs: dict) -> dict:
    """The stack's `remote_region` and `remote_bucket` outputs (empty: none, or a stack from before)."""
    return {"remote_region": outputs.get("remote_region", ""), "remote_bucket": outputs.get("remote_bucket", "")}


def deploy_summary(stack) -> list[str]:
    fields = stack_fields(stack.workload_outputs)
    return [f"remote    s3://{fields['remote_bucket']} in {fields['remote_region']}"] if fields["remote_bucket"] else []
