"""Helpers for the host tests: zip small functions, read back the logs the host wrote."""

import io
import json
import re
import textwrap
import zipfile
from dataclasses import dataclass

from fanout import aws
from fanout.host import config as function_config
from fanout.host import run

REGION = "us-east-1"
START = re.compile(r"^START RequestId: ([0-9a-f-]{36}) Version: \$LATEST\n$")
END = re.compile(r"^END RequestId: ([0-9a-f-]{36})\n$")
REPORT = re.compile(
    r"^REPORT RequestId: ([0-9a-f-]{36})\tDuration: \d+\.\d\d ms\tBilled Duration: \d+ ms\t"
    r"Memory Size: (\d+) MB\tMax Memory Used: \d+ MB\t(Init Duration: \d+\.\d\d ms\t)?\n$")


def zip_of(files: dict) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, textwrap.dedent(text))
    return buffer.getvalue()


@dataclass
class Deployed:
    name: str
    endpoint: str
    queue_url: str
    dlq_url: str
    log_group: str
    region: str = REGION

    def client(self, service):
        return aws.client(service, self.region, self.endpoint)

    def send(self, bodies, **kwargs):
        sqs = self.client("sqs")
        for body in bodies:
            sqs.send_message(QueueUrl=self.queue_url, MessageBody=json.dumps(body), **kwargs)

    def host(self, **kwargs):
        kwargs.setdefault("idle_seconds", 0.5)
        return run(function_config.load(self.name, self.endpoint, self.region), **kwargs)

    def drain(self, url) -> list[dict]:
        """Every message left in a queue (bodies decoded), removing them."""
        sqs, found = self.client("sqs"), []
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
            found += [json.loads(m["Body"]) for m in messages]
            for m in messages:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return found

    def streams(self) -> dict[str, list[tuple[int, str]]]:
        """Log stream name -> [(timestamp ms, message)] in stored order."""
        logs, result = self.client("logs"), {}
        for page in logs.get_paginator("describe_log_streams").paginate(logGroupName=self.log_group):
            for stream in page["logStreams"]:
                name = stream["logStreamName"]
                events = logs.get_log_events(logGroupName=self.log_group, logStreamName=name,
                                             startFromHead=True)["events"]
                result[name] = [(e["timestamp"], e["message"]) for e in events]
        return result


def intervals(streams) -> list[tuple[int, int]]:
    """(START, END) timestamps of every invocation, from the platform lines."""
    spans = []
    for events in streams.values():
        starts = {}
        for ts, message in events:
            if m := START.match(message):
                starts[m.group(1)] = ts
            elif m := END.match(message):
                spans.append((starts.pop(m.group(1)), ts))
    return spans


def peak_concurrency(spans) -> int:
    """Most invocations between START and END at once; an END at the same ms as a START counts first."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    return peak


