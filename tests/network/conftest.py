"""Fixtures: an object in the test emulator, and model files."""

import os
import uuid
from types import SimpleNamespace

import pytest

from fanout.common import aws
from fanout.local import network
from fanout.local.network import model


@pytest.fixture(scope="module")
def big_object(emulator):
    """A 16 MiB object (two 8 MiB parts for the transfer manager)."""
    s3 = aws.client("s3", "us-east-1", emulator)
    bucket = f"net-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    size = 16 * 2**20
    s3.put_object(Bucket=bucket, Key="object", Body=os.urandom(size))
    return SimpleNamespace(bucket=bucket, key="object", size=size)


MIB = 2**20
# A model whose one connection spends the bucket (tests/network/test_hosted.py, test_truth.py):
# burst 8 MiB spent at the 32 MB/s one connection carries, then 16 MB/s: the burst lasts
# 8 MiB / (32 - 16) MB/s = 0.52 s and the 32 MiB object's tail about 1 s.
BURST_MODEL = {"burst": "8MiB", "peak_mb_per_s": 64, "sustained_mb_per_s": 16, "connection_mb_per_s": 32,
               "first_byte_ms": 20}
BURST_OBJECT_SIZE = 32 * MIB


def model_of(name: str, **values) -> network.NetworkModel:
    return network.NetworkModel(name, 1.0, model.parameters(values, name))
