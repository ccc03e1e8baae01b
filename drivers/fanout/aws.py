"""boto3 clients for either backend: the local emulator is only a different endpoint.

On AWS the normal credential chain applies (AWS_PROFILE, environment, SSO...). With an endpoint
(the embedded emulator, or another one such as LocalStack) fixed test credentials are used so
that real credentials are never sent to it.
"""

import boto3
from botocore.config import Config

TEST_CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}


def client(service: str, region: str, endpoint: str = "", **config):
    """A client for `service`; `config` goes to botocore's Config (retries, pool size...)."""
    kwargs = {"region_name": region, "config": Config(**config) if config else None}
    if endpoint:
        kwargs.update(endpoint_url=endpoint, **TEST_CREDENTIALS)
        if service == "s3":
            kwargs["config"] = Config(s3={"addressing_style": "path"}, **config)
    return boto3.client(service, **kwargs)
