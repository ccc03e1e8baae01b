"""SQS through the emulator: what the local backend relies on behaves as on AWS."""

import json
import time

import pytest
from botocore.exceptions import ClientError

COUNTERS = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


@pytest.fixture
def sqs(client):
    return client("sqs")


def attribute(sqs, url, name):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[name])["Attributes"][name]


def counters(sqs, url, names=COUNTERS):
    found = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(names))["Attributes"]
    return {name: int(found[name]) for name in COUNTERS}


def queue_with_dlq(sqs, name, max_receive_count, policy_text=None):
    dlq = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    policy = {"deadLetterTargetArn": attribute(sqs, dlq, "QueueArn"), "maxReceiveCount": max_receive_count}
    text = policy_text(policy) if policy_text else json.dumps(policy)
    url = sqs.create_queue(QueueName=name, Attributes={"RedrivePolicy": text})["QueueUrl"]
    return url, dlq, policy


def receive(sqs, url, **kwargs):
    kwargs.setdefault("MessageSystemAttributeNames", ["ApproximateReceiveCount"])
    return sqs.receive_message(QueueUrl=url, **kwargs).get("Messages", [])


@pytest.mark.parametrize("policy_text", [json.dumps, lambda p: json.dumps({**p, "maxReceiveCount": "5"})])
def test_redrive_policy_comes_back_compact_with_a_numeric_count(sqs, unique, policy_text):
    url, _, policy = queue_with_dlq(sqs, unique, 5, policy_text)
    returned = attribute(sqs, url, "RedrivePolicy")
    assert returned == json.dumps(policy, separators=(",", ":"))
    all_attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert all_attributes["RedrivePolicy"] == returned


def test_counters_separate_visible_in_flight_and_delayed(sqs, unique):
    url = sqs.create_queue(QueueName=unique)["QueueUrl"]
    for seq in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=str(seq))
    sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=60)
    assert len(receive(sqs, url, MaxNumberOfMessages=1, VisibilityTimeout=60)) == 1
    expected = {
        "ApproximateNumberOfMessages": 2,
        "ApproximateNumberOfMessagesNotVisible": 1,
        "ApproximateNumberOfMessagesDelayed": 1,
    }
    assert counters(sqs, url) == expected
    assert counters(sqs, url, ["All"]) == expected


def test_visibility_timeout_hides_then_returns_with_higher_receive_count(sqs, unique):
    url = sqs.create_queue(QueueName=unique)["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="once")
    first = receive(sqs, url, VisibilityTimeout=1)
    assert first[0]["Attributes"]["ApproximateReceiveCount"] == "1"
    assert receive(sqs, url) == []
    time.sleep(1.2)
    second = receive(sqs, url)
    assert second[0]["MessageId"] == first[0]["MessageId"]
    assert second[0]["Attributes"]["ApproximateReceiveCount"] == "2"


def test_delayed_message_is_received_only_after_its_delay(sqs, unique):
    url = sqs.create_queue(QueueName=unique)["QueueUrl"]
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "later", "DelaySeconds": 1}])
    assert receive(sqs, url) == []
    time.sleep(1.2)
    assert [m["Body"] for m in receive(sqs, url)] == ["later"]


def test_message_moves_to_dlq_after_max_receive_count(sqs, unique):
    max_receive_count = 2
    url, dlq, _ = queue_with_dlq(sqs, unique, max_receive_count)
    sqs.send_message(QueueUrl=url, MessageBody="poison")
    for count in range(1, max_receive_count + 1):
        (message,) = receive(sqs, url, VisibilityTimeout=0)
        assert message["Attributes"]["ApproximateReceiveCount"] == str(count)
    assert receive(sqs, url, VisibilityTimeout=0) == []
    assert [m["Body"] for m in receive(sqs, dlq)] == ["poison"]
    assert counters(sqs, url)["ApproximateNumberOfMessages"] == 0


def test_delete_removes_once_tolerates_repeats_and_rejects_unknown_handles(sqs, unique):
    url = sqs.create_queue(QueueName=unique)["QueueUrl"]
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": str(i)} for i in range(3)])
    messages = receive(sqs, url, MaxNumberOfMessages=10)
    entries = [{"Id": m["MessageId"], "ReceiptHandle": m["ReceiptHandle"]} for m in messages[:2]]
    assert len(sqs.delete_message_batch(QueueUrl=url, Entries=entries)["Successful"]) == 2
    sqs.delete_message(QueueUrl=url, ReceiptHandle=messages[0]["ReceiptHandle"])  # again: fine
    assert sum(counters(sqs, url).values()) == len(messages) - 2
    with pytest.raises(ClientError) as error:
        sqs.delete_message(QueueUrl=url, ReceiptHandle="not-a-handle")
    assert error.value.response["Error"]["Code"] == "ReceiptHandleIsInvalid"
