"""Against an endpoint the user's AWS setup stays out of the way: with AWS_PROFILE naming a
profile that does not exist, a local plan works and clients reach the emulator. And an endpoint
on the AWS backend (the README's LocalStack recipe) plans what AWS gets, not the embedded
emulator's variant.
"""

import json

import pytest

from fanout import insights
from fanout.common import aws, paths
from fanout.cloud import terraform

from .test_stack import fanout

STACK = "endpoint-test"
REGION = "us-east-1"
INPUTS = ["--stack", STACK, "--concurrency", "1", "--memory", "128", "--object-size", "1MiB", "--region", REGION]
SAVED_QUERY = "aws_cloudwatch_query_definition.saved["


@pytest.fixture(autouse=True)
def missing_profile(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_PROFILE", "nope")


def test_a_local_plan_ignores_a_missing_profile_and_warns_about_concurrency_1(emulator, capfd):
    assert fanout("plan", "--backend", "local", *INPUTS) == 0
    out, err = capfd.readouterr()
    assert "fanout: warning: concurrency 1 " in err
    assert "aws_lambda_event_source_mapping.requests will be created" in out
    assert SAVED_QUERY not in out  # moto has no PutQueryDefinition


def test_endpoint_clients_ignore_a_missing_profile(emulator):
    sqs = aws.client("sqs", REGION, emulator)
    url = sqs.create_queue(QueueName=f"{STACK}-probe")["QueueUrl"]
    assert url in sqs.list_queues(QueueNamePrefix=STACK)["QueueUrls"]
    sqs.delete_queue(QueueUrl=url)


def test_another_endpoint_on_the_aws_backend_plans_what_aws_gets(emulator, capfd):
    assert fanout("plan", "--backend", "aws", "--endpoint", emulator, *INPUTS) == 0
    out = capfd.readouterr().out
    assert SAVED_QUERY in out
    # every saved query, the generic ones and each workload folder's, under its name as before
    assert [name for name in insights.saved_queries() if f'{SAVED_QUERY}"{name}.logsinsights"]' not in out] == []
    planned = json.loads((paths.stack_dir("aws", STACK) / terraform.PLAN_INPUTS_FILE).read_text())
    assert (planned["endpoint"], planned["embedded_emulator"]) == (emulator, False)
