"""S3 bucket policies through the emulator: the stack's TLS-only policy must not lock it out."""

import json

import pytest
from botocore.exceptions import ClientError


def deny(bucket, condition=None):
    statement = {
        "Effect": "Deny",
        "Principal": "*",
        "Action": "s3:*",
        "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
    }
    if condition:
        statement["Condition"] = condition
    return json.dumps({"Version": "2012-10-17", "Statement": [statement]})


@pytest.fixture
def bucket(client, unique):
    s3 = client("s3")
    s3.create_bucket(Bucket=unique)
    s3.put_object(Bucket=unique, Key="object", Body=b"payload")
    return s3, unique


def test_deny_insecure_transport_leaves_the_sdk_working(bucket):
    s3, name = bucket
    s3.put_bucket_policy(Bucket=name, Policy=deny(name, {"Bool": {"aws:SecureTransport": "false"}}))
    s3.put_object(Bucket=name, Key="second", Body=b"more")
    assert s3.head_object(Bucket=name, Key="object")["ContentLength"] == len(b"payload")
    assert s3.get_object(Bucket=name, Key="second")["Body"].read() == b"more"


@pytest.mark.parametrize("condition", [None, {"Bool": {"aws:SecureTransport": "true"}}])
def test_other_deny_statements_still_apply(bucket, condition):
    s3, name = bucket
    s3.put_bucket_policy(Bucket=name, Policy=deny(name, condition))
    with pytest.raises(ClientError) as error:
        s3.head_object(Bucket=name, Key="object")
    assert error.value.response["Error"]["Code"] == "403"
