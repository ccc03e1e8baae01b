"""Fixtures: deploy small functions (zip, queue with a DLQ, disabled SQS mapping) into the emulator."""

import functools

import pytest

from fanout.host import testing


@pytest.fixture(scope="session")
def role_arn(emulator):
    return testing.create_role(emulator, "host-tests")


@pytest.fixture
def deploy(emulator, role_arn):
    """deploy(code, **settings) -> Deployed: fanout.host.testing.deploy into the test emulator."""
    return functools.partial(testing.deploy, emulator, role_arn)
