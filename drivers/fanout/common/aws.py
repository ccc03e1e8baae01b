"""boto3 clients for either backend: the local emulator is only a different endpoint.

On AWS the normal credential chain applies (AWS_PROFILE, environment, SSO...); a profile that
does not exist is a one-line error. With an endpoint (the embedded emulator, or another one such
as LocalStack) fixed test credentials are used, so that real credentials are never sent to it,
from a session that reads none of the user's AWS setup: an AWS_PROFILE naming a missing profile,
or a broken ~/.aws/config, must not stop a local run.
"""

import functools
import os
import threading
from typing import Any

import boto3
import botocore.session
from botocore.client import BaseClient  # no types of its own: Any to mypy, named for the reader
from botocore.config import Config
from botocore.exceptions import ProfileNotFound

from fanout.common.errors import FanoutError

TEST_CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test"}
# botocore's session variables that read the user's setup, each as (config file key, environment
# variables, default, converter): no variable and an empty file instead.
_NO_USER_SETUP = {
    "profile": (None, None, None, None),
    "config_file": (None, None, os.devnull, None),
    "credentials_file": (None, None, os.devnull, None),
}
_session_lock = threading.Lock()  # a boto3 session is not thread-safe; drivers make clients in threads


def client(service: str, region: str, endpoint: str = "", **config: Any) -> BaseClient:  # Config's keywords
    """A client for `service`; `config` goes to botocore's Config (retries, pool size...)."""
    if endpoint:
        if service == "s3":
            config["s3"] = {"addressing_style": "path"}
        with _session_lock:
            return _endpoint_session().client(
                service, region_name=region, endpoint_url=endpoint, config=Config(**config), **TEST_CREDENTIALS
            )
    try:
        return boto3.client(service, region_name=region, config=Config(**config) if config else None)
    except ProfileNotFound as exc:
        raise FanoutError(f"{exc}: set AWS_PROFILE to a profile of your AWS configuration, or unset it") from None


@functools.cache
def _endpoint_session() -> boto3.Session:
    """One session for every endpoint client (a session loads the service models once)."""
    return boto3.Session(botocore_session=botocore.session.Session(session_vars=_NO_USER_SETUP))
