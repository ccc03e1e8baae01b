"""Fixtures: an object in the test emulator, and model files."""

import os
import uuid
from types import SimpleNamespace

import pytest

from fanout import aws, network
from fanout.network import model


@pytest.fixture(scope="module")
def big_object(emulator):
    """A 16 MiB object (two 8 MiB parts for the transfer manager)."""
    s3 = aws.client("s3", "us-east-1", emulator)
    bucket = f"net-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    size = 16 * 2**20
    s3.put_object(Bucket=bucket, Key="object", Body=os.urandom(size))
    return SimpleNamespace(bucket=bucket, key="object", size=size)


def model_of(name: str, **values) -> network.NetworkModel:
    return network.NetworkModel(name, 1.0, model.parameters(values, name))
