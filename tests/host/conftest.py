"""Fixtures: deploy small functions (zip, queue with a DLQ, disabled SQS mapping) into the emulator."""

import functools

import pytest

from tests.harness import host_testing as testing


@pytest.fixture(scope="session")
def role_arn(emulator):
    return testing.create_role(emulator, "host-tests")


@pytest.fixture
def deploy(emulator, role_arn):
    """deploy(code, **settings) -> Deployed: tests.harness.host_testing.deploy into the test emulator."""
    return functools.partial(testing.deploy, emulator, role_arn)
