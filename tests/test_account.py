"""The AWS account checks a sweep makes before deploying, against AWS's answers as botocore's
Stubber plays them (real clients, real request validation, no network)."""

import boto3
import pytest
from botocore.stub import Stubber

from fanout.cloud import account
from fanout.common.errors import FanoutError

FUNCTION = "s3fanout-downloader"


def clients():
    session = boto3.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1")
    return session.client("lambda"), session.client("service-quotas")


def settings(limit: int, unreserved: int) -> dict:
    return {"AccountLimit": {"TotalCodeSize": 80530636800, "CodeSizeUnzipped": 262144000, "CodeSizeZipped": 52428800,
                             "ConcurrentExecutions": limit, "UnreservedConcurrentExecutions": unreserved},
            "AccountUsage": {"TotalCodeSize": 0, "FunctionCount": 1}}  # fmt: skip


def quota(name: str, code: str, value: float) -> dict:
    return {"ServiceCode": "lambda", "ServiceName": "AWS Lambda", "QuotaCode": code, "QuotaName": name,
            "Value": value, "Adjustable": True, "GlobalQuota": False}  # fmt: skip


def run_check(limit, unreserved, held, quotas, max_concurrency, max_memory, quotas_error=None):
    """account.check against stubbed answers: account settings, the stack's reservation (None: no
    such function), the Lambda quotas listed (or quotas_error)."""
    lam, sq = clients()
    with Stubber(lam) as lam_stub, Stubber(sq) as sq_stub:
        lam_stub.add_response("get_account_settings", settings(limit, unreserved), {})
        if held is None:
            lam_stub.add_client_error("get_function_concurrency", "ResourceNotFoundException", http_status_code=404,
                                      expected_params={"FunctionName": FUNCTION})  # fmt: skip
        else:
            lam_stub.add_response("get_function_concurrency", {"ReservedConcurrentExecutions": held},
                                  {"FunctionName": FUNCTION})  # fmt: skip
        if quotas_error:
            sq_stub.add_client_error("list_service_quotas", quotas_error, http_status_code=403)
        else:
            sq_stub.add_response("list_service_quotas", {"Quotas": quotas}, {"ServiceCode": "lambda"})
        try:
            return account.check(lam, sq, FUNCTION, max_concurrency, max_memory)
        finally:
            lam_stub.assert_no_pending_responses()


CONCURRENT = quota("Concurrent executions", account.CONCURRENCY_QUOTA_CODE, 1000.0)


def test_a_default_account_passes_a_reference_sweep():
    notes = run_check(1000, 1000, None, [CONCURRENT], max_concurrency=500, max_memory=2048)
    assert any("unreserved 1,000" in note for note in notes)
    assert any("memory limit: not checked" in note for note in notes)  # no memory quota listed


def test_a_concurrency_quota_too_low_names_it_the_value_and_how_to_raise_it():
    # A new account: 400 concurrent executions. 500 would leave -100 unreserved.
    with pytest.raises(FanoutError) as error:
        run_check(400, 400, None, [CONCURRENT], max_concurrency=500, max_memory=1024)
    message = str(error.value)
    assert len(message.splitlines()) == 1
    needed = 400 + account.MIN_UNRESERVED - (400 - 500)
    assert "'Concurrent executions'" in message and account.CONCURRENCY_QUOTA_CODE in message
    assert "is 400 with 400 unreserved" in message and "leave -100" in message
    assert f"--desired-value {needed}" in message and "request-service-quota-increase" in message


def test_the_stacks_own_reservation_counts_as_available():
    # 950 unreserved + 50 this stack's function holds (released by the redeploy) - 900 = 100: just enough.
    assert run_check(1000, 950, 50, [], max_concurrency=900, max_memory=1024)
    with pytest.raises(FanoutError, match="leave 99,"):
        run_check(1000, 949, 50, [], max_concurrency=900, max_memory=1024)


def test_a_memory_cap_names_the_quota_and_the_value_found():
    capped = quota("Function memory maximum", "L-MEMORY", 3008.0)
    with pytest.raises(FanoutError) as error:
        run_check(1000, 1000, None, [CONCURRENT, capped], max_concurrency=10, max_memory=10240)
    message = str(error.value)
    assert "'Function memory maximum' (L-MEMORY) is 3,008 MB" in message and "10,240 MB" in message
    assert "--quota-code L-MEMORY --desired-value 10240" in message
    assert run_check(1000, 1000, None, [CONCURRENT, capped], max_concurrency=10, max_memory=3008)


def test_both_failures_in_one_line():
    capped = quota("Function memory maximum", "L-MEMORY", 3008.0)
    with pytest.raises(FanoutError) as error:
        run_check(100, 100, None, [capped], max_concurrency=10, max_memory=4096)
    assert len(str(error.value).splitlines()) == 1
    assert "Concurrent executions" in str(error.value) and "L-MEMORY" in str(error.value)


def test_service_quotas_denied_skips_only_the_memory_check():
    notes = run_check(1000, 1000, None, [], max_concurrency=10, max_memory=10240, quotas_error="AccessDeniedException")
    assert any("memory limit: not checked" in note for note in notes)
