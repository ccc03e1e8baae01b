"""Any Python function runs unmodified: the event, context, environment, boto3 and /tmp it sees."""

import hashlib
import io
import json
import urllib.request
import uuid
import zipfile

from fanout.common import aws
from tests.harness.host_testing import REGION, allow

THIRD_PARTY = """
import json, os
import boto3

s3 = boto3.client("s3")  # default client: must reach the emulator

def handler(event, context):
    with open("/tmp/scratch.txt", "w") as f:
        f.write(event["Records"][0]["body"])
    with open("/tmp/scratch.txt") as f:
        body = f.read()
    report = {
        "event": event,
        "env": {k: os.environ.get(k) for k in WANTED},
        "cwd": os.getcwd(),
        "context": {k: getattr(context, k) for k in CONTEXT},
        "remaining_ms": context.get_remaining_time_in_millis(),
    }
    print("third-party", os.environ["GREETING"])
    s3.put_object(Bucket=os.environ["OUT_BUCKET"], Key=context.aws_request_id, Body=json.dumps(report))
    return {"ok": body}

WANTED = ["GREETING", "OUT_BUCKET", "AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_VERSION",
          "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
          "AWS_REGION", "AWS_DEFAULT_REGION", "_HANDLER", "LAMBDA_TASK_ROOT"]
CONTEXT = ["function_name", "function_version", "invoked_function_arn", "memory_limit_in_mb",
           "aws_request_id", "log_group_name", "log_stream_name"]
"""


def test_third_party_handler_runs_unmodified(deploy, emulator):
    s3 = aws.client("s3", REGION, emulator)
    bucket = "third-party-out"
    s3.create_bucket(Bucket=bucket)
    fn = deploy({"app/main.py": THIRD_PARTY}, handler="app/main.handler", timeout=5,
                environment={"GREETING": "hello", "OUT_BUCKET": bucket},
                allowed=[allow("s3:PutObject", f"arn:aws:s3:::{bucket}/*")])
    fn.send([{"seq": 1}], MessageAttributes={"kind": {"DataType": "String", "StringValue": "test"}})

    summary = fn.host()

    assert summary.succeeded == 1 and summary.messages_deleted == 1
    (key,) = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    report = json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())
    (stream,) = fn.streams()
    arn = aws.client("lambda", REGION, emulator).get_function(FunctionName=fn.name)["Configuration"]["FunctionArn"]
    assert report["env"] == {
        "GREETING": "hello", "OUT_BUCKET": bucket, "AWS_LAMBDA_FUNCTION_NAME": fn.name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
        "AWS_LAMBDA_LOG_GROUP_NAME": fn.log_group, "AWS_LAMBDA_LOG_STREAM_NAME": stream,
        "AWS_REGION": REGION, "AWS_DEFAULT_REGION": REGION, "_HANDLER": "app/main.handler",
        "LAMBDA_TASK_ROOT": report["cwd"],
    }
    assert report["context"] == {
        "function_name": fn.name, "function_version": "$LATEST", "invoked_function_arn": arn,
        "memory_limit_in_mb": "256", "aws_request_id": key, "log_group_name": fn.log_group,
        "log_stream_name": stream,
    }
    assert 0 < report["remaining_ms"] <= 5000
    assert any(m == "third-party hello\n" for _, m in fn.streams()[stream])

    (record,) = report["event"]["Records"]
    queue_arn = aws.client("sqs", REGION, emulator).get_queue_attributes(
        QueueUrl=fn.queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert set(record) == {"messageId", "receiptHandle", "body", "attributes", "messageAttributes",
                           "md5OfBody", "eventSource", "eventSourceARN", "awsRegion"}
    assert (record["eventSource"], record["eventSourceARN"], record["awsRegion"]) == ("aws:sqs", queue_arn, REGION)
    assert record["md5OfBody"] == hashlib.md5(record["body"].encode()).hexdigest()
    assert {"ApproximateReceiveCount", "SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp"} <= set(
        record["attributes"])
    assert all(isinstance(v, str) for v in record["attributes"].values())
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert record["messageAttributes"] == {"kind": {"stringValue": "test", "stringListValues": [],
                                                    "binaryListValues": [], "dataType": "String"}}


def test_code_location_serves_the_deployed_zip(deploy, emulator):
    files = {"handler.py": "def handler(event, context):\n    return None\n"}
    fn = deploy(files)

    location = aws.client("lambda", REGION, emulator).get_function(FunctionName=fn.name)["Code"]["Location"]

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(location) as response:
        package = zipfile.ZipFile(io.BytesIO(response.read()))
    assert {name: package.read(name).decode() for name in package.namelist()} == files


CLIENT_SETTINGS = """
import json, os
import boto3
import botocore.loaders

files_read = []  # JSON files botocore reads from disk in this environment
_load_file = botocore.loaders.JSONFileLoader.load_file


def counting_load_file(self, file_path, *args, **kwargs):
    files_read.append(file_path)
    return _load_file(self, file_path, *args, **kwargs)


botocore.loaders.JSONFileLoader.load_file = counting_load_file
s3 = boto3.client("s3")
s3_files_read = list(files_read)
glue = boto3.client("glue")  # a service the fork server did not load


def handler(event, context):
    s3.create_bucket(Bucket=os.environ["BUCKET"],
                     CreateBucketConfiguration={"LocationConstraint": s3.meta.region_name})
    print(json.dumps({
        "clients": {name: [c.meta.region_name, c.meta.endpoint_url] for name, c in (("s3", s3), ("glue", glue))},
        "caller": boto3.client("sts").get_caller_identity()["Arn"],
        "s3_files_read": s3_files_read,
        "glue_files_read": len(files_read) - len(s3_files_read),
    }))
"""


def test_default_clients_take_the_environment_settings(deploy, emulator):
    region = "eu-west-2"  # neither the host's nor the one the fork server's preloading used
    bucket = f"settings-{uuid.uuid4().hex[:8]}"
    fn = deploy(CLIENT_SETTINGS, region=region, environment={"BUCKET": bucket},
                allowed=[allow("s3:CreateBucket", f"arn:aws:s3:::{bucket}")])
    fn.send([{"seq": 1}])

    summary = fn.host()

    assert summary.succeeded == 1
    (line,) = [m for events in fn.streams().values() for _, m in events if m.startswith("{")]
    report = json.loads(line)
    assert report["clients"] == {"s3": [region, emulator], "glue": [region, emulator]}
    # Lambda's credentials: a session of the function's role named after the function (the
    # host's own are the emulator's test ones, which belong to no role).
    assert report["caller"] == f"arn:aws:sts::123456789012:assumed-role/{fn.name}/{fn.name}"
    s3 = aws.client("s3", region, emulator)
    assert s3.get_bucket_location(Bucket=bucket)["LocationConstraint"] == region
    # The preloaded service data is reused; other services are still read from disk and work.
    assert report["s3_files_read"] == [] and report["glue_files_read"] > 0
