"""Fixtures of the emulator tests: clients of the session emulator, and moto patched in-process."""

import uuid

import pytest
from moto import backends
from moto.awslambda.models import LambdaBackend, LambdaFunction
from moto.awslambda.responses import LambdaResponse
from moto.core.authorization import ActionAuthenticatorMixin
from moto.moto_api._internal import urls as moto_api_urls
from moto.s3.models import FakeBucket
from moto.s3.responses import S3Response
from moto.sqs.models import Queue, SQSBackend

from fanout.common import aws
from fanout.local.emulator import patches

REGION = "us-east-1"


@pytest.fixture(scope="session")
def client(emulator):
    """client("sqs") -> a boto3 client of the session emulator, built the way the drivers do."""
    return lambda service: aws.client(service, REGION, emulator)


@pytest.fixture
def unique():
    """A fresh resource name: tests share one emulator."""
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture
def patched_moto():
    """The patches applied to moto in this process, and undone afterwards.

    Tests of the speed patches look at how much work one call does (how many passes over a
    queue, how many clock readings), which needs moto's objects at hand, not a server.
    """
    targets = (Queue, SQSBackend, LambdaBackend, LambdaFunction, LambdaResponse, FakeBucket, S3Response,
               backends, ActionAuthenticatorMixin)
    saved = {target: dict(vars(target)) for target in targets}
    saved_urls = dict(moto_api_urls.url_paths)
    patches.apply_all()
    yield
    for target, attributes in saved.items():
        for name in set(vars(target)) - set(attributes):
            delattr(target, name)
        for name, value in attributes.items():
            if vars(target).get(name) is not value:
                setattr(target, name, value)
    moto_api_urls.url_paths.clear()
    moto_api_urls.url_paths.update(saved_urls)


@pytest.fixture
def get_patch(monkeypatch):
    """patches.gets_send_the_key_as_read, to apply in-process; monkeypatch puts stock moto back
    afterwards."""
    for name in ("get_object", "key_response"):
        monkeypatch.setattr(S3Response, name, getattr(S3Response, name))
    return patches.gets_send_the_key_as_read
