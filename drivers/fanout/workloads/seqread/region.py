"""The other region, a deploy-level choice: `--remote-region us-west-2` (Make REMOTE_REGION) adds a
second bucket there (infra/seqread.tf) that `FROM=remote` reads; the function stays in the
stack's region. `none` removes it again; not given, a redeploy keeps the deployed stack's.

The region names known are botocore's for S3 (its endpoint data: the SDK's own list, so a region
the SDK cannot reach is refused before anything is created).
"""

from fanout.cloud import params
from fanout.common.errors import UsageError

NONE = "none"


def parse(text: str, stack_region: str) -> str:
    """The remote region ('' for none): a region botocore knows for S3, not the stack's own."""
    if text in ("", NONE):
        return ""
    regions = params.known_regions()
    if text not in regions:
        raise UsageError(f"invalid REMOTE_REGION {text!r}: expected {NONE} or an S3 region botocore knows, such as "
                         f"us-west-2 ({len(regions)} known: {regions[0]} .. {regions[-1]})")
    if text == stack_region:
        raise UsageError(f"invalid REMOTE_REGION {text!r}: it is the stack's own region; expected another one")
    return text


def stack_fields(outputs: dict) -> dict:
    """The stack's `remote_region` and `remote_bucket` outputs (empty: none, or a stack from before)."""
    return {"remote_region": outputs.get("remote_region", ""), "remote_bucket": outputs.get("remote_bucket", "")}
