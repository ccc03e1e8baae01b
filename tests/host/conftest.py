"""Fixtures: deploy small functions (zip, queue with a DLQ, disabled SQS mapping) into the emulator."""

import json
import uuid

import pytest

from fanout import aws

from .support import REGION, Deployed, zip_of


@pytest.fixture(scope="session")
def role_arn(emulator):
    iam = aws.client("iam", REGION, emulator)
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                     "Principal": {"Service": "lambda.amazonaws.com"}}]}
    return iam.create_role(RoleName="host-tests", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]


@pytest.fixture
def deploy(emulator, role_arn):
    """deploy(zip bytes, files or source, **settings) -> Deployed: a function, its queue, DLQ and a
    disabled ESM."""

    def _deploy(code, *, handler="handler.handler", batch_size=1, reserved=None, max_concurrency=None,
                timeout=3, visibility=1, max_receive=2, report_failures=False, environment=None,
                mapping=True, region=REGION):
        name = f"fn-{uuid.uuid4().hex[:12]}"
        if isinstance(code, bytes):
            package = code
        else:
            package = zip_of(code if isinstance(code, dict) else {"handler.py": code})
        sqs, lam = aws.client("sqs", region, emulator), aws.client("lambda", region, emulator)
        dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
        dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        redrive = json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": max_receive})
        queue_url = sqs.create_queue(QueueName=name, Attributes={
            "VisibilityTimeout": str(visibility), "RedrivePolicy": redrive})["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        lam.create_function(FunctionName=name, Runtime="python3.12", Role=role_arn, Handler=handler,
                            Code={"ZipFile": package}, Timeout=timeout, MemorySize=256,
                            Environment={"Variables": environment or {}})
        if mapping:
            extra = {"ScalingConfig": {"MaximumConcurrency": max_concurrency}} if max_concurrency else {}
            lam.create_event_source_mapping(
                FunctionName=name, EventSourceArn=queue_arn, BatchSize=batch_size, Enabled=False,
                FunctionResponseTypes=["ReportBatchItemFailures"] if report_failures else [], **extra)
        if reserved:
            lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=reserved)
        return Deployed(name, emulator, queue_url, dlq_url, f"/aws/lambda/{name}", region)

    return _deploy
