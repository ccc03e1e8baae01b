"""Lambda entry point: SQS batch in, each message run by its workload, its records logged.

Thin on purpose: the work and the numbers are in the workloads' modules (workloads.py lists
them, and is the only module here that names one); what every invocation shares is in
invocation.py. What lives here is what must live once per execution environment (client,
logger, environment id) and the SQS batch protocol.
"""

import os
from typing import TYPE_CHECKING

import boto3
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response

import endpoints
import envelope
import invocation
import workloads

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
    from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()  # JSON lines on stdout; service and level from POWERTOOLS_* variables
# AWS_ENDPOINT_URL points it at the emulator on the local backend; see invocation.client_config.
s3 = boto3.client("s3", config=invocation.client_config(workloads.CONNECTIONS))
endpoints.instrument(s3)  # records carry the address each request reached
environment = invocation.Environment()
# When every message fails, return them all in batchItemFailures rather than raising
# BatchProcessingError: SQS redelivers exactly the same messages either way, but a function
# error would also count as a Lambda error and make the event source mapping back off, which
# would distort the concurrency a failure-path experiment measures.
processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)


class MessageFailed(Exception):
    """Tells the batch processor to report the message; the details are already logged."""


def lambda_handler(event: dict, context: "LambdaContext") -> "PartialItemFailureResponse":
    settings = invocation.Settings.from_env(os.environ)
    workload_settings = workloads.settings_from_env(os.environ)
    memory = context.memory_limit_in_mb or os.environ["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"]
    invocation_fields = environment.invocation_fields(context.aws_request_id, int(memory), settings.concurrency_limit)

    def record_handler(record: "SQSRecord") -> None:
        fields: envelope.Delivery = {
            "message_id": record.message_id,
            "receive_count": int(record.attributes.approximate_receive_count),
            **invocation_fields,
        }
        records = workloads.run_message(s3, workload_settings, record.body, fields)
        for line in records[:-1]:
            logger.info(f"{line['event']} complete", extra=line)
        last = records[-1]
        if last["outcome"] == "error":
            logger.error(f"{last['workload']} failed: {last['error_type']}", extra=last)
            raise MessageFailed(last["error_message"])
        logger.info(f"{last['event']} complete", extra=last)

    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)
