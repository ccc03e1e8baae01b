"""Who created a stack, and which stack a sweep or study runs on.

A sweep redeploys its stack at every cell and may destroy it at the end (--destroy-after), so
it never runs on a stack the user deployed by hand: without --stack it takes the sweeps' own
stack of its region (SWEEP_STACK), and it refuses in one line to redeploy any stack that
`fanout deploy` created. The first apply records its creator in the stack's state (infra/owner.tf,
the `terraform_data.created_by` resource), which later applies keep; a stack deployed before that
record is taken to be the user's. Details: docs/sweep.md, *Whose stack*.
"""

from fanout.cloud import terraform
from fanout.common.errors import UsageError

DEPLOY, SWEEP = "deploy", "sweep"  # infra/variables.tf's created_by validation lists the same two
VARIABLE = "created_by"
SWEEP_STACK = "s3fanout-sweep-{region}"  # at most 15 + 14 characters: within a stack name's 30


def sweep_stack(region: str) -> str:
    """The sweeps' and studies' own stack in `region`."""
    return SWEEP_STACK.format(region=region)


def created_by(backend: str, stack: str) -> str | None:
    """What created the deployed stack, DEPLOY or SWEEP; None when nothing is deployed."""
    if not terraform.has_state(backend, stack):
        return None
    record = terraform.resource(backend, stack, "terraform_data", VARIABLE) or {}
    return (record.get("output") or {}).get("value") or DEPLOY  # a dynamic value: {"value", "type"}


def check_sweep_may_deploy(backend: str, stack: str, region: str) -> None:
    """Refuse a sweep (or study) on a stack `fanout deploy` created, in one line saying what to
    do instead; nothing deployed, or a sweep's own, passes."""
    if created_by(backend, stack) not in (None, SWEEP):
        raise UsageError(
            f"stack {stack!r} on the {backend} backend was deployed by `make deploy`, not by a sweep or study; they "
            f"redeploy their stack at every cell and may destroy it: leave STACK unset (their own stack, "
            f"{sweep_stack(region)}), or name one that no `make deploy` created"
        )
