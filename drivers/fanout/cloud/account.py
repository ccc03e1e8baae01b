"""AWS account checks before a deploy or a sweep creates anything: can the account run it?

Concurrency (Lambda GetAccountSettings: 100 must stay unreserved) and memory (a Service Quotas
memory quota, when the account lists one). A failing check names the quota, the value found and
how to raise it; nothing is deployed. Details: docs/aws.md, *Account limits that matter*.
"""

from botocore.exceptions import BotoCoreError, ClientError

from fanout.common import aws
from fanout.cloud import terraform
from fanout.common.errors import FanoutError

MIN_UNRESERVED = 100  # Lambda keeps at least this much concurrency unreserved per region
CONCURRENCY_QUOTA_CODE = "L-B99A9384"  # Service Quotas: Lambda "Concurrent executions"
RAISE_HOW = "Service Quotas console, or `aws service-quotas request-service-quota-increase --service-code lambda"


def check_stack(region: str, stack: str, max_concurrency: int, max_memory: int) -> list[str]:
    """`check` for stack `stack` on AWS in `region`: the reservation its deployed function (if any)
    holds counts as available; those of this machine's other stacks in the region (a user's
    stack beside a sweep's own) do not, and are named."""
    function = terraform.outputs("aws", stack).get("function_name")
    return check(aws.client("lambda", region), aws.client("service-quotas", region), function, max_concurrency,
                 max_memory, other_stacks(region, stack))  # fmt: skip


def other_stacks(region: str, stack: str) -> dict[str, int]:
    """The reserved concurrency of each stack but `stack` that this machine deployed to AWS in
    `region`, by name, as their outputs say."""
    found = {}
    for name in terraform.deployed("aws"):
        outputs = terraform.outputs("aws", name)
        if name != stack and outputs.get("region") == region:
            found[name] = int(outputs.get("concurrency") or 0)
    return found


def check(lambda_client, quotas_client, function_name: str | None, max_concurrency: int, max_memory: int,
          others: dict[str, int] | None = None) -> list[str]:  # fmt: skip
    """Notes on what was checked; FanoutError naming every check that fails. `others`: the
    reservations of the project's other stacks in the region (other_stacks), named."""
    notes, problems = [], []
    limits = lambda_client.get_account_settings()["AccountLimit"]
    held = _reserved(lambda_client, function_name)
    named = ", ".join(f"{name!r} {count:,}" for name, count in (others or {}).items())
    beside = f"; reserved by this project's other stacks here: {named}" if named else ""
    problem = concurrency_problem(limits["ConcurrentExecutions"], limits["UnreservedConcurrentExecutions"], held,
                                  max_concurrency)  # fmt: skip
    problems += [problem + beside] if problem else []
    notes.append(f"account concurrency {limits['ConcurrentExecutions']:,}, unreserved "
                 f"{limits['UnreservedConcurrentExecutions']:,} (this stack holds {held}{beside})")  # fmt: skip
    quota = memory_quota(quotas_client)
    if quota is None:
        notes.append("memory limit: not checked (Service Quotas lists no Lambda memory quota here); a capped "
                     "account refuses the deploy of a larger memory size")  # fmt: skip
    elif max_memory > quota["Value"]:
        problems.append(
            f"Lambda quota {quota['QuotaName']!r} ({quota['QuotaCode']}) is {quota['Value']:,.0f} MB, below the "
            f"largest MEMORY {max_memory:,} MB; raise it ({RAISE_HOW} --quota-code {quota['QuotaCode']} "
            f"--desired-value {max_memory}`) or drop the larger memory sizes"
        )
    else:
        notes.append(f"memory limit {quota['Value']:,.0f} MB ({quota['QuotaName']})")
    if problems:
        raise FanoutError("account check failed: " + "; ".join(problems))
    return notes


def concurrency_problem(limit: int, unreserved: int, held: int, wanted: int) -> str | None:
    """Why reserving `wanted` would leave less than MIN_UNRESERVED unreserved, or None."""
    left = unreserved + held - wanted
    if left >= MIN_UNRESERVED:
        return None
    needed = limit + MIN_UNRESERVED - left
    return (
        f"Lambda quota 'Concurrent executions' ({CONCURRENCY_QUOTA_CODE}) is {limit:,} with {unreserved:,} "
        f"unreserved; reserving the largest CONCURRENCY {wanted:,} would leave {left:,}, below the {MIN_UNRESERVED} "
        f"Lambda requires; raise it to at least {needed:,} ({RAISE_HOW} --quota-code {CONCURRENCY_QUOTA_CODE} "
        f"--desired-value {needed}`) or lower CONCURRENCY"
    )


def memory_quota(quotas_client) -> dict | None:
    """The Lambda quota whose name mentions memory, or None (none listed, or access denied)."""
    try:
        pages = quotas_client.get_paginator("list_service_quotas").paginate(ServiceCode="lambda")
        quotas = [quota for page in pages for quota in page["Quotas"]]
    except (ClientError, BotoCoreError):
        return None
    return next((quota for quota in quotas if "memory" in quota["QuotaName"].lower()), None)


def _reserved(lambda_client, function_name: str | None) -> int:
    """The reservation the stack's function holds now (0 when it does not exist)."""
    if not function_name:
        return 0
    try:
        return lambda_client.get_function_concurrency(FunctionName=function_name).get("ReservedConcurrentExecutions", 0)
    except lambda_client.exceptions.ResourceNotFoundException:
        return 0
