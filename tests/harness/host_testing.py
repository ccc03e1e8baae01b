"""Deploy small functions into an emulator and read back what the host did: for the host's tests
and its benchmark, which must not depend on each other.

A deployed function comes with its queue, a dead-letter queue and a disabled SQS event source
mapping, as the deploy stage leaves them; the platform lines the host wrote to the log group
give the invocations' START-to-END intervals.
"""

import io
import json
import re
import textwrap
import uuid
import zipfile
from dataclasses import dataclass

from fanout.common import aws
from fanout.local.host import config as function_config
from fanout.local.host import run

REGION = "us-east-1"
START = re.compile(r"^START RequestId: ([0-9a-f-]{36}) Version: \$LATEST\n$")
END = re.compile(r"^END RequestId: ([0-9a-f-]{36})\n$")
REPORT = re.compile(
    r"^REPORT RequestId: (?P<id>[0-9a-f-]{36})\tDuration: (?P<duration>\d+\.\d\d) ms\t"
    r"Billed Duration: \d+ ms\tMemory Size: (?P<memory>\d+) MB\tMax Memory Used: (?P<max_memory>\d+) MB\t"
    r"(?:Init Duration: (?P<init>\d+\.\d\d) ms\t)?\n$")


def zip_of(files: dict, modes: dict | None = None) -> bytes:
    """A zip of {name: source} (dedented), with the unix modes given for some names."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            entry = zipfile.ZipInfo(name)
            entry.external_attr = (0o100000 | (modes or {}).get(name, 0o644)) << 16
            archive.writestr(entry, textwrap.dedent(text))
    return buffer.getvalue()


def create_role(endpoint: str, name: str, statements: list[dict] | None = None) -> str:
    """The ARN of a new role Lambda may assume, allowed `statements` (none: the role may do
    nothing, and the emulator holds the function's calls to that)."""
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                     "Principal": {"Service": "lambda.amazonaws.com"}}]}
    iam = aws.client("iam", REGION, endpoint)
    arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    if statements:
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", **st} for st in statements]}
        iam.put_role_policy(RoleName=name, PolicyName="least-privilege", PolicyDocument=json.dumps(policy))
    return arn


def allow(actions, resources) -> dict:
    """One Allow statement. The emulator matches S3 actions against the bucket's or object's ARN
    and every other service's against "*" (moto knows no other resource), so a statement for
    SQS or Logs names "*"; `{name}` in a resource stands for the function's name."""
    return {"Action": actions, "Resource": resources}


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

    def send_batches(self, count: int) -> None:
        """`count` messages {"seq": n}, ten per call."""
        sqs = self.client("sqs")
        for first in range(0, count, 10):
            seqs = range(first, min(count, first + 10))
            entries = [{"Id": str(i), "MessageBody": json.dumps({"seq": i})} for i in seqs]
            sqs.send_message_batch(QueueUrl=self.queue_url, Entries=entries)

    def config(self) -> function_config.FunctionConfig:
        return function_config.load(self.name, self.endpoint, self.region)

    def host(self, **kwargs):
        kwargs.setdefault("idle_seconds", 0.5)
        return run(self.config(), **kwargs)

    def drain(self, url) -> list[dict]:
        """Every message left in a queue (bodies decoded), removing them."""
        sqs, found = self.client("sqs"), []
        while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages"):
            found += [json.loads(m["Body"]) for m in messages]
            for m in messages:
                sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        return found

    def streams(self) -> dict[str, list[tuple[int, str]]]:
        """Log stream name -> [(timestamp ms, message)] in stored order, every page of them."""
        logs, result = self.client("logs"), {}
        for page in logs.get_paginator("describe_log_streams").paginate(logGroupName=self.log_group):
            for stream in page["logStreams"]:
                result[stream["logStreamName"]] = self._events(logs, stream["logStreamName"])
        return result

    def _events(self, logs, stream: str) -> list[tuple[int, str]]:
        """GetLogEvents pages until the forward token comes back unchanged (the end, per the API)."""
        events, token, kwargs = [], None, {}
        while True:
            page = logs.get_log_events(logGroupName=self.log_group, logStreamName=stream, startFromHead=True,
                                       **kwargs)
            events += [(e["timestamp"], e["message"]) for e in page["events"]]
            if page["nextForwardToken"] == token:
                return events
            token = page["nextForwardToken"]
            kwargs = {"nextToken": token}


def deploy(endpoint: str, role_arn: str, code, *, handler="handler.handler", batch_size=1, reserved=None,
           max_concurrency=None, timeout=3, memory=256, visibility=1, max_receive=2, report_failures=False,
           environment=None, mapping=True, region=REGION, modes=None, allowed=()) -> Deployed:
    """A function from `code` (zip bytes, {name: source} or one handler.py source), its queue with
    a dead-letter queue after `max_receive` receives, and a disabled SQS mapping. With `allowed`
    (statements of allow()) it runs under a role of its own allowed exactly those, else under
    `role_arn`."""
    name = f"fn-{uuid.uuid4().hex[:12]}"
    if allowed:
        statements = [{**st, "Resource": _named(st["Resource"], name)} for st in allowed]
        role_arn = create_role(endpoint, name, statements)
    if isinstance(code, bytes):
        package = code
    else:
        package = zip_of(code if isinstance(code, dict) else {"handler.py": code}, modes)
    sqs, lam = aws.client("sqs", region, endpoint), aws.client("lambda", region, endpoint)
    dlq_url = sqs.create_queue(QueueName=f"{name}-dlq")["QueueUrl"]
    redrive = json.dumps({"deadLetterTargetArn": _queue_arn(sqs, dlq_url), "maxReceiveCount": max_receive})
    queue_url = sqs.create_queue(QueueName=name, Attributes={
        "VisibilityTimeout": str(visibility), "RedrivePolicy": redrive})["QueueUrl"]
    lam.create_function(FunctionName=name, Runtime="python3.12", Role=role_arn, Handler=handler,
                        Code={"ZipFile": package}, Timeout=timeout, MemorySize=memory,
                        Environment={"Variables": environment or {}})
    if mapping:
        extra = {"ScalingConfig": {"MaximumConcurrency": max_concurrency}} if max_concurrency else {}
        lam.create_event_source_mapping(
            FunctionName=name, EventSourceArn=_queue_arn(sqs, queue_url), BatchSize=batch_size, Enabled=False,
            FunctionResponseTypes=["ReportBatchItemFailures"] if report_failures else [], **extra)
    if reserved is not None:
        lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=reserved)
    return Deployed(name, endpoint, queue_url, dlq_url, f"/aws/lambda/{name}", region)


def _named(resources, name: str):
    return [r.format(name=name) for r in resources] if isinstance(resources, list) else resources.format(name=name)


def _queue_arn(sqs, url: str) -> str:
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


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


