"""Why the local backend refuses `--storage express` (docs/storage.md): the emulator cannot serve
a directory bucket to the SDK. The SDK opens a session itself (CreateSession, `GET
<endpoint>/<bucket>?session`) before any object call, and moto has no answer with credentials.

These tests fail when a moto upgrade learns CreateSession: teaching the emulator would then be a
small patch, and the refusal in fanout.workloads.latency.storage should be revisited.
"""

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from fanout.common.aws import TEST_CREDENTIALS

REGION = "us-east-1"
ZONE = "use1-az4"


@pytest.fixture
def directory_bucket_name(unique):
    return f"{unique}--{ZONE}--x-s3"


def s3_client(emulator, **s3_config):
    return boto3.client("s3", region_name=REGION, endpoint_url=emulator, **TEST_CREDENTIALS,
                        config=Config(s3={"addressing_style": "path", **s3_config}))  # fmt: skip


def session_requests(s3) -> list[str]:
    """URLs of the CreateSession requests the client sends from now on."""
    sent: list[str] = []
    s3.meta.events.register("before-send.s3.CreateSession", lambda request, **_: sent.append(request.url))
    return sent


def test_the_sdk_asks_the_endpoint_for_a_session_which_the_emulator_does_not_know(emulator, directory_bucket_name):
    s3 = s3_client(emulator)
    sent = session_requests(s3)
    with pytest.raises(ClientError) as raised:
        s3.put_object(Bucket=directory_bucket_name, Key="latency/x", Body=b"x")
    assert raised.value.operation_name == "CreateSession"
    assert sent and set(sent) == {f"{emulator}/{directory_bucket_name}?session"}


def test_an_existing_directory_bucket_gets_no_session_credentials(emulator, directory_bucket_name):
    # moto accepts the directory-bucket configuration (it stores an ordinary bucket)...
    setup = s3_client(emulator, disable_s3_express_session_auth=True)
    setup.create_bucket(
        Bucket=directory_bucket_name,
        CreateBucketConfiguration={"Location": {"Type": "AvailabilityZone", "Name": ZONE},
                                   "Bucket": {"Type": "Directory", "DataRedundancy": "SingleAvailabilityZone"}},
    )  # fmt: skip
    # ...but answers the session request as a listing: no credentials to sign object calls with.
    s3 = s3_client(emulator)
    assert "Credentials" not in s3.create_session(Bucket=directory_bucket_name)
    with pytest.raises(KeyError, match="Credentials"):
        s3.put_object(Bucket=directory_bucket_name, Key="latency/x", Body=b"x")
