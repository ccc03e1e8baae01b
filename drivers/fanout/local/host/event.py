"""SQS messages -> the event Lambda's SQS event source mapping sends, and the reply it expects."""

import base64

from fanout.local.host.config import EventSource

# The system attributes Lambda copies into each record (FIFO and tracing ones when present).
RECORD_ATTRIBUTES = (
    "ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp",
    "SequenceNumber", "MessageGroupId", "MessageDeduplicationId", "AWSTraceHeader",
)


def sqs_event(messages: list[dict], source: EventSource, region: str) -> dict:
    """{"Records": [...]} for one batch of ReceiveMessage results."""
    return {"Records": [_record(m, source.queue_arn, region) for m in messages]}


def _record(message: dict, queue_arn: str, region: str) -> dict:
    attributes = message.get("Attributes", {})
    return {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": {k: str(attributes[k]) for k in RECORD_ATTRIBUTES if k in attributes},
        "messageAttributes": {
            name: _message_attribute(value) for name, value in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message["MD5OfBody"],
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }


def _message_attribute(value: dict) -> dict:
    """The API's {"StringValue", "DataType"} becomes the event's camelCase form, binary as base64."""
    attribute = {"stringListValues": [], "binaryListValues": [], "dataType": value["DataType"]}
    if "StringValue" in value:
        attribute["stringValue"] = value["StringValue"]
    if "BinaryValue" in value:
        attribute["binaryValue"] = base64.b64encode(value["BinaryValue"]).decode()
    return attribute


def failed_message_ids(response, message_ids: list[str], report_failures: bool) -> list[str]:
    """Which messages of a successful invocation stay on the queue.

    Without ReportBatchItemFailures a return means the whole batch succeeded. With it, a null
    or empty reply (or an empty/null list) is full success, each listed itemIdentifier fails,
    and a malformed reply or an identifier not in the batch fails the whole batch, as on AWS.
    """
    if not report_failures or not response:
        return []
    if not isinstance(response, dict):
        return list(message_ids)
    failures = response.get("batchItemFailures") or []
    if not isinstance(failures, list):
        return list(message_ids)
    failed = []
    for item in failures:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not isinstance(identifier, str) or identifier not in message_ids:
            return list(message_ids)
        failed.append(identifier)
    return [m for m in message_ids if m in failed]
