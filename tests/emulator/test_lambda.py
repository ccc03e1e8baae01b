"""Lambda through the emulator: what the local function host reads from the Lambda API."""

import io
import json
import urllib.request
import zipfile

import pytest

NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def zip_bytes(source: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("handler.py", source)
    return buffer.getvalue()


@pytest.fixture
def function(client, unique):
    """(name, deployed zip) of a fresh function."""
    role = client("iam").create_role(RoleName=unique, AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    code = zip_bytes("def lambda_handler(event, context):\n    return 1\n")
    client("lambda").create_function(
        FunctionName=unique, Runtime="python3.12", Role=role,
        Handler="handler.lambda_handler", Code={"ZipFile": code},
    )
    return unique, code


def download(url: str) -> bytes:
    with NO_PROXY.open(url, timeout=10) as response:
        return response.read()


def test_code_location_downloads_the_deployed_zip(client, function):
    name, code = function
    lam = client("lambda")
    assert download(lam.get_function(FunctionName=name)["Code"]["Location"]) == code
    new_code = zip_bytes("def lambda_handler(event, context):\n    return 2\n")
    lam.update_function_code(FunctionName=name, ZipFile=new_code, Publish=True)
    assert download(lam.get_function(FunctionName=name)["Code"]["Location"]) == new_code
    version = lam.get_function(FunctionName=name, Qualifier="1")
    assert download(version["Code"]["Location"]) == new_code


def queue(sqs, name):
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def test_disabled_mapping_leaves_messages_in_the_queue(client, function, unique):
    sqs = client("sqs")
    dlq_url, dlq_arn = queue(sqs, f"{unique}-dlq")
    url = sqs.create_queue(
        QueueName=unique,
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 1})},
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    client("lambda").create_event_source_mapping(EventSourceArn=arn, FunctionName=function[0], Enabled=False)
    sent = {sqs.send_message(QueueUrl=url, MessageBody=str(seq))["MessageId"] for seq in range(3)}
    received = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["ApproximateReceiveCount"]
    )["Messages"]
    assert {m["MessageId"] for m in received} == sent
    assert {m["Attributes"]["ApproximateReceiveCount"] for m in received} == {"1"}
    assert "Messages" not in sqs.receive_message(QueueUrl=dlq_url)


def test_mapping_settings_read_back(client, function, unique):
    lam = client("lambda")
    _, arn = queue(client("sqs"), unique)
    settings = {
        "BatchSize": 7,
        "ScalingConfig": {"MaximumConcurrency": 3},
        "FunctionResponseTypes": ["ReportBatchItemFailures"],
    }
    uuid = lam.create_event_source_mapping(
        EventSourceArn=arn, FunctionName=function[0], Enabled=False, **settings
    )["UUID"]
    for mapping in (
        lam.get_event_source_mapping(UUID=uuid),
        *lam.list_event_source_mappings(FunctionName=function[0])["EventSourceMappings"],
    ):
        assert {key: mapping.get(key) for key in settings} == settings
        assert mapping["State"] == "Disabled"


@pytest.mark.parametrize("created_with", ["name", "arn"])
def test_mappings_are_listed_by_function_name_and_arn(client, function, unique, created_with):
    lam = client("lambda")
    name = function[0]
    arn = lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]
    _, queue_arn = queue(client("sqs"), unique)
    uuid = lam.create_event_source_mapping(
        EventSourceArn=queue_arn, FunctionName={"name": name, "arn": arn}[created_with], Enabled=False
    )["UUID"]
    for function_name in (name, arn):
        listed = lam.list_event_source_mappings(FunctionName=function_name)["EventSourceMappings"]
        assert [m["UUID"] for m in listed] == [uuid]


@pytest.mark.parametrize("reserved", [11, 0])
def test_reserved_concurrency_reads_back(client, function, reserved):
    lam = client("lambda")
    lam.put_function_concurrency(FunctionName=function[0], ReservedConcurrentExecutions=reserved)
    assert lam.get_function_concurrency(FunctionName=function[0])["ReservedConcurrentExecutions"] == reserved
    assert lam.get_function(FunctionName=function[0])["Concurrency"] == {"ReservedConcurrentExecutions": reserved}


def test_unreserved_concurrency_is_not_reported(client, function):
    lam = client("lambda")
    lam.put_function_concurrency(FunctionName=function[0], ReservedConcurrentExecutions=0)
    lam.delete_function_concurrency(FunctionName=function[0])
    assert "Concurrency" not in lam.get_function(FunctionName=function[0])
