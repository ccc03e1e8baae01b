"""The function's role through the emulator: its session credentials are held to its policy,
every other caller keeps full access."""

import json

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from tests.emulator.conftest import REGION

TRUST = {"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}


@pytest.fixture
def role_s3(client, unique):
    """(role's S3 client, default S3 client, bucket): the role may only GetObject on `object` and
    `missing` (which does not exist)."""
    s3 = client("s3")
    s3.create_bucket(Bucket=unique)
    s3.put_object(Bucket=unique, Key="object", Body=b"payload")
    iam = client("iam")
    role = iam.create_role(RoleName=unique, AssumeRolePolicyDocument=json.dumps(TRUST))["Role"]
    policy = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:GetObject",
         "Resource": [f"arn:aws:s3:::{unique}/object", f"arn:aws:s3:::{unique}/missing"]}]}
    iam.put_role_policy(RoleName=unique, PolicyName="least-privilege", PolicyDocument=json.dumps(policy))
    credentials = client("sts").assume_role(RoleArn=role["Arn"], RoleSessionName="function")["Credentials"]
    role_client = boto3.client(
        "s3", region_name=REGION, endpoint_url=s3.meta.endpoint_url,
        config=Config(s3={"addressing_style": "path"}),
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
    )
    return role_client, s3, unique


def code(call, **params):
    with pytest.raises(ClientError) as error:
        call(**params)
    return error.value.response["Error"]["Code"]


def test_the_role_may_only_what_its_policy_allows(role_s3):
    role, _, bucket = role_s3
    assert role.get_object(Bucket=bucket, Key="object")["Body"].read() == b"payload"
    assert code(role.put_object, Bucket=bucket, Key="object", Body=b"other") == "AccessDenied"
    assert code(role.delete_object, Bucket=bucket, Key="object") == "AccessDenied"


def test_a_missing_key_is_403_to_a_role_that_may_not_list_the_bucket(role_s3):
    role, _, bucket = role_s3
    assert code(role.get_object, Bucket=bucket, Key="missing") == "AccessDenied"
    assert code(role.head_object, Bucket=bucket, Key="missing") == "403"


def test_a_missing_key_is_404_to_a_role_that_may_list_the_bucket(client, role_s3):
    role, _, bucket = role_s3
    listing = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}"}]}
    client("iam").put_role_policy(RoleName=bucket, PolicyName="list", PolicyDocument=json.dumps(listing))
    assert code(role.get_object, Bucket=bucket, Key="missing") == "NoSuchKey"
    assert code(role.head_object, Bucket=bucket, Key="missing") == "404"


def test_a_copy_needs_the_right_to_read_its_source(client, role_s3):
    role, s3, bucket = role_s3
    s3.put_object(Bucket=bucket, Key="secret", Body=b"not the role's")
    writes = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/copies/*"}]}
    client("iam").put_role_policy(RoleName=bucket, PolicyName="write", PolicyDocument=json.dumps(writes))
    role.copy_object(Bucket=bucket, Key="copies/object", CopySource={"Bucket": bucket, "Key": "object"})
    assert code(role.copy_object, Bucket=bucket, Key="copies/secret",
                CopySource={"Bucket": bucket, "Key": "secret"}) == "AccessDenied"
    upload = role.create_multipart_upload(Bucket=bucket, Key="copies/parts")["UploadId"]
    assert code(role.upload_part_copy, Bucket=bucket, Key="copies/parts", UploadId=upload, PartNumber=1,
                CopySource={"Bucket": bucket, "Key": "secret"}) == "AccessDenied"
    role.upload_part_copy(Bucket=bucket, Key="copies/parts", UploadId=upload, PartNumber=1,
                          CopySource={"Bucket": bucket, "Key": "object"})


def test_other_callers_keep_full_access(role_s3):
    _, s3, bucket = role_s3
    s3.put_object(Bucket=bucket, Key="object", Body=b"other")
    assert s3.get_object(Bucket=bucket, Key="object")["Body"].read() == b"other"
    assert code(s3.get_object, Bucket=bucket, Key="missing") == "NoSuchKey"
    assert code(s3.head_object, Bucket=bucket, Key="missing") == "404"


def test_a_batch_delete_is_authorized_key_by_key(client, role_s3):
    """The transfer workload's clean-up deletes its objects in one DeleteObjects: a role granted
    s3:DeleteObject under a prefix deletes a batch there (moto checked the bucket itself and refused
    every key), and a batch with a key outside it is refused."""
    role, s3, bucket = role_s3
    for key in ("run/a", "run/b", "kept"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    deletes = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": "s3:DeleteObject", "Resource": f"arn:aws:s3:::{bucket}/run/*"}]}
    client("iam").put_role_policy(RoleName=bucket, PolicyName="deletes", PolicyDocument=json.dumps(deletes))
    refused = role.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "run/a"}, {"Key": "kept"}]})
    assert {error["Key"] for error in refused.get("Errors", [])} >= {"kept"}
    done = role.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "run/a"}, {"Key": "run/b"}]})
    assert sorted(item["Key"] for item in done["Deleted"]) == ["run/a", "run/b"] and not done.get("Errors")
    assert [item["Key"] for item in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["kept", "object"]
