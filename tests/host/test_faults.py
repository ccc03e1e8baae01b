"""The fault layer (FANOUT_HOST_FAULTS): each kind does what it says inside the environment, is
logged once per injection, and a bad setting is one line naming the bad part."""

import json
import uuid

import pytest

from fanout.common.errors import UsageError
from fanout.local.host import faults
from tests.harness.host_testing import allow

READS_S3 = """
import json, os, time, boto3
from botocore.exceptions import ClientError

s3 = boto3.client("s3")

def handler(event, context):
    try:
        started = time.monotonic()
        body = s3.get_object(Bucket=os.environ["BUCKET"], Key="k")["Body"].read()
        print(json.dumps({"outcome": "ok", "bytes": len(body), "seconds": time.monotonic() - started}))
    except ClientError as exc:
        print(json.dumps({"outcome": exc.response["Error"]["Code"], "attempts": exc.response["ResponseMetadata"]["RetryAttempts"]}))
"""


@pytest.fixture
def bucket(deploy):
    fn = deploy("def handler(e, c): pass\n")
    name = f"b{uuid.uuid4().hex[:12]}"
    s3 = fn.client("s3")
    s3.create_bucket(Bucket=name)
    s3.put_object(Bucket=name, Key="k", Body=b"12345")
    return name


def reads(bucket: str) -> list[dict]:
    return [allow("s3:GetObject", f"arn:aws:s3:::{bucket}/k")]


def outcomes(fn) -> list[dict]:
    from .support import messages

    return [json.loads(m) for m in messages(fn) if m.startswith("{")]


@pytest.mark.parametrize("kind, code", [("s3_500", "InternalError"), ("s3_503", "SlowDown")])
def test_s3_errors_surface_without_retries(deploy, bucket, tmp_path, monkeypatch, kind, code):
    log = tmp_path / "faults.log"
    monkeypatch.setenv(faults.VARIABLE, f"{kind}=1,log={log}")
    fn = deploy(READS_S3, environment={"BUCKET": bucket}, allowed=reads(bucket), visibility=30)
    fn.send([{"seq": n} for n in range(3)])
    fn.host()
    assert outcomes(fn) == [{"outcome": code, "attempts": 0}] * 3
    assert log.read_text().split() == [kind] * 3


def test_crash_and_hang_end_the_invocation_as_the_platform_would(deploy, bucket, tmp_path, monkeypatch):
    log = tmp_path / "faults.log"
    monkeypatch.setenv(faults.VARIABLE, f"crash=0.5,hang=0.5,log={log}")
    fn = deploy(READS_S3, environment={"BUCKET": bucket}, allowed=reads(bucket), timeout=1, visibility=2, max_receive=1)
    fn.send([{"seq": n} for n in range(4)])
    summary = fn.host()
    injected = log.read_text().split()
    assert len(injected) == 4 and outcomes(fn) == []
    assert summary.errors == injected.count("crash") and summary.timeouts == injected.count("hang")


@pytest.mark.timing
def test_slow_answers_arrive(deploy, bucket, tmp_path, monkeypatch):
    """Late by the injected delay, whole: a lower bound on a clock, which load can only lengthen."""
    delay, log = 0.5, tmp_path / "f.log"
    monkeypatch.setenv(faults.VARIABLE, f"slow=1,slow_s={delay},log={log}")
    fn = deploy(READS_S3, environment={"BUCKET": bucket}, allowed=reads(bucket), visibility=30)
    fn.send([{"seq": 0}])
    fn.host()
    [outcome] = outcomes(fn)
    assert (outcome["outcome"], outcome["bytes"]) == ("ok", 5)
    assert outcome["seconds"] >= delay
    assert log.read_text().split() == ["slow"]


@pytest.mark.parametrize("setting", ["s3_500=2", "crash=x", "boom=0.1", "slow_s=-1", "s3_500=0.6,s3_503=0.6",
                                     "hang=\uff10.\uff11"])
def test_bad_settings_name_the_bad_part(monkeypatch, setting):
    monkeypatch.setenv(faults.VARIABLE, setting)
    with pytest.raises(UsageError, match=faults.VARIABLE) as failure:
        faults.from_environment()
    assert "\n" not in str(failure.value)
