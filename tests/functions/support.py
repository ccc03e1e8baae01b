"""Helpers for the function's tests: fresh module imports, SQS events, Lambda contexts, log lines."""

import importlib.util
import itertools
import json
import sys
import uuid
from types import SimpleNamespace

from fanout.common import function_modules

FOLDERS = function_modules.folders()
MEMORY_SIZE = 1024
_fresh = itertools.count()


def load_function_module(name: str, monkeypatch):
    """Import the function's module <name> as a new module, as a new environment would."""
    for folder in reversed(FOLDERS):
        monkeypatch.syspath_prepend(str(folder))
    # The handler's own imports, fresh too.
    for imported in ("cputime", "measure", "workloads", "latency", "seqread", "transfer", "transfer_ops", "transfer_requests", "envelope", "invocation"):
        monkeypatch.delitem(sys.modules, imported, raising=False)
    spec = importlib.util.spec_from_file_location(f"{name}_{next(_fresh)}", function_modules.source(name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sqs_event(*bodies, receive_count: int = 1) -> dict:
    """An SQS event as the event source mapping delivers it."""
    records = []
    for body in bodies:
        text = body if isinstance(body, str) else json.dumps(body)
        records.append(
            {
                "messageId": str(uuid.uuid4()),
                "receiptHandle": uuid.uuid4().hex,
                "body": text,
                "attributes": {
                    "ApproximateReceiveCount": str(receive_count),
                    "SentTimestamp": "1700000000000",
                    "SenderId": "123456789012",
                    "ApproximateFirstReceiveTimestamp": "1700000000001",
                },
                "messageAttributes": {},
                "md5OfBody": "",
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:fanout-queue",
                "awsRegion": "us-east-1",
            }
        )
    return {"Records": records}


def lambda_context() -> SimpleNamespace:
    """The attributes of the runtime's context object that Powertools and the handler read."""
    return SimpleNamespace(
        function_name="fanout-downloader",
        function_version="$LATEST",
        invoked_function_arn="arn:aws:lambda:us-east-1:123456789012:function:fanout-downloader",
        memory_limit_in_mb=str(MEMORY_SIZE),  # the Python runtime passes a string
        aws_request_id=str(uuid.uuid4()),
    )


def log_records(capsys) -> list[dict]:
    """The JSON lines the function printed since the last call."""
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
