"""What every invocation shares, whatever the workload: settings, environment fields, the client."""

from pathlib import Path

import boto3
import botocore
import pytest
import s3transfer

from .support import load_function_module


@pytest.fixture
def invocation(monkeypatch):
    return load_function_module("invocation", monkeypatch)


def test_environment_cold_start_once_per_environment(invocation):
    first, second = invocation.Environment(), invocation.Environment()
    calls = [first.invocation_fields(f"req-{i}", 512, 3) for i in range(3)]
    calls.append(second.invocation_fields("req-x", 512, 3))
    assert [c["cold_start"] for c in calls] == [True, False, False, True]
    assert calls[0]["env_id"] == calls[2]["env_id"] != calls[3]["env_id"]
    assert calls[1] == {
        "request_id": "req-1", "env_id": first.env_id, "cold_start": False, "memory_size": 512, "concurrency_limit": 3,
        **first.sdk,
    }  # fmt: skip


def test_sdk_fields_name_the_modules_imported_and_where_from(invocation, tmp_path, monkeypatch):
    """Versions of the modules loaded (not of whatever metadata lies around), awscrt null when
    it is not installed, and `runtime` for a boto3 outside the function's directory."""
    fields = invocation.Environment().sdk
    assert (fields["boto3_version"], fields["botocore_version"], fields["s3transfer_version"]) == (
        boto3.__version__, botocore.__version__, s3transfer.__version__)
    assert fields["sdk_source"] == "runtime"  # the tests' boto3 is the venv's
    assert fields["awscrt_version"] is None  # the drivers' venv has no awscrt (the zip has)
    monkeypatch.setattr(invocation, "TASK_ROOT", Path(boto3.__file__).resolve().parent.parent)
    assert invocation.sdk_fields()["sdk_source"] == "bundled"


def test_settings_read_the_concurrency_limit_and_name_a_bad_one(invocation):
    assert invocation.Settings.from_env({"FANOUT_CONCURRENCY_LIMIT": "17"}).concurrency_limit == 17
    with pytest.raises(KeyError, match="FANOUT_CONCURRENCY_LIMIT"):
        invocation.Settings.from_env({})
    with pytest.raises(ValueError, match="FANOUT_CONCURRENCY_LIMIT='many' is not a whole number"):
        invocation.Settings.from_env({"FANOUT_CONCURRENCY_LIMIT": "many"})


def test_client_config_pools_the_connections_asked_for(invocation):
    assert [invocation.client_config(n).max_pool_connections for n in (1, 64)] == [1, 64]
