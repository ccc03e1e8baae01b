"""Fixtures for the function's tests: fresh imports of its modules, a test object, invocations.

The handler keeps its state at module level (client, logger, environment id) exactly as Lambda
initialises it once per execution environment; importing it afresh is a new environment.
"""

import os
import uuid
from types import SimpleNamespace

import boto3
import pytest

from .support import load_function_module

# Over the transfer manager's 8 MiB multipart threshold (so download_file uses parallel ranged
# GETs) and not a multiple of any chunk size.
OBJECT_SIZE = 8 * 1024 * 1024 + 12345


@pytest.fixture
def load_measure(monkeypatch):
    return lambda: load_function_module("measure", monkeypatch)


@pytest.fixture(scope="session")
def test_object(emulator):
    """A random object in the emulator (bucket, key, size), shared by the session."""
    s3 = boto3.client(
        "s3", endpoint_url=emulator, region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test"
    )
    bucket = f"fn-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="test-object", Body=os.urandom(OBJECT_SIZE))
    return SimpleNamespace(bucket=bucket, key="test-object", size=OBJECT_SIZE)


@pytest.fixture
def s3(emulator):
    """A client of the emulator, as a workload's core gets the handler's."""
    return boto3.client("s3", endpoint_url=emulator, region_name="us-east-1", aws_access_key_id="test",
                        aws_secret_access_key="test")  # fmt: skip


@pytest.fixture
def function_env(monkeypatch, emulator, test_object, tmp_path):
    """The environment Terraform gives the function, pointed at the emulator; returns it for edits."""
    for name in ("AWS_PROFILE", "POWERTOOLS_DEV", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"):
        monkeypatch.delenv(name, raising=False)
    env = {
        "AWS_ENDPOINT_URL": emulator,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "FANOUT_BUCKET": test_object.bucket,
        "FANOUT_KEY": test_object.key,
        "FANOUT_EXPECTED_SIZE": str(test_object.size),
        "DOWNLOAD_DEFAULT_STRATEGY": "download_file",
        "FANOUT_CONCURRENCY_LIMIT": "7",
        # A service name per test: Powertools configures a logger once per name and binds it to
        # the sys.stdout of that moment, which capsys replaces for each test.
        "POWERTOOLS_SERVICE_NAME": f"s3-fanout-test-{uuid.uuid4().hex[:8]}",
        "POWERTOOLS_LOG_LEVEL": "INFO",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # download_file's scratch files go here, so a test can see that nothing is left behind.
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    return env


@pytest.fixture
def load_handler(function_env, monkeypatch):
    """Import the handler as a new execution environment (call after adjusting function_env)."""

    def load():
        for name, value in function_env.items():
            monkeypatch.setenv(name, value)
        return load_function_module("handler", monkeypatch)

    return load
