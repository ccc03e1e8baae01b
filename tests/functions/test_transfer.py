"""The transfer workload's core against the emulator: each operation's requests, bytes and
cleanup, FAN's shared upload, the abort on failure, and the parameters' rules."""

import io
import json
import time
import uuid
from types import SimpleNamespace

import boto3
import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from fanout.local.host import faults

from .support import lambda_context, load_function_module, log_records, sqs_event

MiB = 1024**2


@pytest.fixture
def transfer(monkeypatch):
    return load_function_module("transfer", monkeypatch)


@pytest.fixture
def ops(transfer):
    return transfer.transfer_ops


@pytest.fixture
def bucket(s3):
    name = f"tr-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    return name


def left_in(s3, bucket):
    """Objects and unfinished multipart uploads in the bucket."""
    objects = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    return objects + [u["Key"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def message(transfer, s3, bucket, seq=3, **fields):
    body = json.dumps({"run_id": "run-7", "seq": seq, "experiment_tag": "t", "workload": "transfer", **fields})
    return transfer.measure_message(s3, {"FANOUT_BUCKET": bucket}, body, {"memory_size": 1024})


def test_a_multipart_upload_counts_its_parts_and_leaves_nothing(transfer, s3, bucket):
    size = 12 * MiB + 5
    [record] = message(transfer, s3, bucket, operation="upload", size=size, threads=2, part_size=5 * MiB, threshold=8 * MiB)
    assert record["event"] == "transfer", record
    assert record["requests"] == {"CompleteMultipartUpload": 1, "CreateMultipartUpload": 1, "UploadPart": 3}
    assert sorted(n for _, _, n in record["parts"]) == [2 * MiB + 5, 5 * MiB, 5 * MiB]
    assert all(0 <= start < end <= record["seconds"] for start, end, _ in record["parts"])
    assert (record["bytes"], record["multipart"], record["part_count"]) == (size, True, 3)
    assert record["mb_per_s"] == pytest.approx(size / record["seconds"] / 1e6)
    assert (record["retries"], record["slowdowns"], record["files"], record["method"]) == (0, 0, 0, "-")
    assert left_in(s3, bucket) == []


def test_an_upload_below_the_threshold_is_one_put(transfer, s3, bucket):
    [record] = message(transfer, s3, bucket, operation="upload", size=MiB, threshold=8 * MiB)
    assert record["requests"] == {"PutObject": 1} and record["parts"][0][2] == MiB and not record["multipart"]
    assert left_in(s3, bucket) == []


@pytest.mark.parametrize(("direction", "client_per_object"), [("put", 0), ("get", 0), ("put", 1)])
def test_small_files_count_every_object_and_delete_them(transfer, s3, bucket, direction, client_per_object, monkeypatch):
    for name, value in (("AWS_ACCESS_KEY_ID", "test"), ("AWS_SECRET_ACCESS_KEY", "test")):
        monkeypatch.setenv(name, value)  # a new client's credentials, as Lambda's environment has them
    [record] = message(transfer, s3, bucket, operation="small-files", size=1000, files=7, threads=3, prefixes=3,
                       direction=direction, client_per_object=client_per_object)  # fmt: skip
    kind = "PutObject" if direction == "put" else "GetObject"
    assert record["requests"] == {kind: 7} and record["bytes"] == 7000
    assert record["objects_per_s"] == pytest.approx(7 / record["seconds"])
    assert 0 < record["request_seconds_p50"] <= record["request_seconds_p90"] <= record["request_seconds_p99"]
    assert left_in(s3, bucket) == []


@pytest.mark.parametrize(("method", "requests"), [
    ("copy-object", {"CopyObject": 1}),
    ("part-copy", {"CompleteMultipartUpload": 1, "CreateMultipartUpload": 1, "HeadObject": 1, "UploadPartCopy": 3}),
])  # fmt: skip
def test_a_server_side_copy_is_its_requests_only(transfer, s3, bucket, method, requests):
    [record] = message(transfer, s3, bucket, operation="copy", size=11 * MiB, part_size=5 * MiB, threads=3, method=method)
    assert record["requests"] == requests, record
    assert record["source_seconds"] > 0 and record["bytes"] == 11 * MiB
    assert left_in(s3, bucket) == []


def test_a_copy_through_the_function_downloads_then_uploads(transfer, s3, bucket, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    [record] = message(transfer, s3, bucket, operation="copy", size=3 * MiB, method="through-function")
    assert record["requests"]["PutObject"] == 1 and record["requests"]["GetObject"] >= 1
    assert record["download_seconds"] > 0 and record["upload_seconds"] > 0
    assert left_in(s3, bucket) == [] and list(tmp_path.iterdir()) == []


@pytest.fixture
def role_without_list_bucket(s3):
    """`s3` as the function's role sees S3: without s3:ListBucket, a GET of a missing key is
    answered 403 AccessDenied, not 404 NoSuchKey (GetObject API reference, "Permissions")."""
    plain = boto3.client("s3", endpoint_url=s3.meta.endpoint_url, region_name="us-east-1", aws_access_key_id="test",
                         aws_secret_access_key="test")  # fmt: skip

    def look(params, context, **_):
        try:
            plain.head_object(Bucket=params["Bucket"], Key=params["Key"])
        except ClientError:
            context["missing_key"] = True

    def forbid(context, **_):
        if context.get("missing_key"):
            return AWSResponse(None, 403, {}, None), {"Error": {"Code": "AccessDenied", "Message": "Access Denied"},
                                                      "ResponseMetadata": {"HTTPStatusCode": 403}}  # fmt: skip
        return None

    s3.meta.events.register("before-parameter-build.s3.GetObject", look)
    s3.meta.events.register("before-call.s3.GetObject", forbid)
    return s3


def test_the_role_sees_a_missing_key_as_forbidden(role_without_list_bucket, bucket):
    with pytest.raises(ClientError, match="AccessDenied"):
        role_without_list_bucket.get_object(Bucket=bucket, Key="missing")


def test_fan_messages_share_one_upload_and_the_last_completes_it(transfer, role_without_list_bucket, bucket):
    """Without s3:ListBucket; a size that is not a multiple of the part: the last part is its rest."""
    s3, size = role_without_list_bucket, 13 * MiB + 5
    fields = {"operation": "upload", "size": size, "part_size": 5 * MiB, "fan": 2, "threads": 2}
    [first] = message(transfer, s3, bucket, seq=4, **fields)
    assert (first["fan_member"], first["fan_completed"], first["part_count"]) == (0, False, 1), first
    assert left_in(s3, bucket)  # the group's upload waits for its other message
    [second] = message(transfer, s3, bucket, seq=5, **fields)
    assert (second["fan_member"], second["fan_completed"], second["part_count"]) == (1, True, 2), second
    assert [n for _, _, n in first["parts"]] == [5 * MiB] and first["bytes"] == 5 * MiB
    assert sorted(n for _, _, n in second["parts"]) == [3 * MiB + 5, 5 * MiB] and second["bytes"] == 8 * MiB + 5
    assert left_in(s3, bucket) == []


def stubbed_member(ops):
    client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    return client, Stubber(client)


ID_PUT = {"Bucket": "b", "Key": "g/upload-id", "Body": ANY, "IfNoneMatch": "*"}


def test_the_first_member_publishes_its_own_upload_and_reads_nothing(ops):
    client, stub = stubbed_member(ops)
    stub.add_response("create_multipart_upload", {"UploadId": "mine"}, {"Bucket": "b", "Key": "g/object"})
    stub.add_response("put_object", {}, ID_PUT)
    with stub:
        assert ops.shared_upload(client, "b", "g/object", "g/upload-id") == "mine"
    stub.assert_no_pending_responses()


def test_a_member_that_loses_the_id_aborts_its_upload_and_takes_the_winners(ops):
    client, stub = stubbed_member(ops)
    stub.add_response("create_multipart_upload", {"UploadId": "mine"}, {"Bucket": "b", "Key": "g/object"})
    stub.add_client_error("put_object", "PreconditionFailed", http_status_code=412, expected_params=ID_PUT)
    stub.add_response("abort_multipart_upload", {}, {"Bucket": "b", "Key": "g/object", "UploadId": "mine"})
    stub.add_response("get_object", {"Body": StreamingBody(io.BytesIO(b"theirs"), 6)},
                      {"Bucket": "b", "Key": "g/upload-id"})  # fmt: skip
    with stub:
        assert ops.shared_upload(client, "b", "g/object", "g/upload-id") == "theirs"
    stub.assert_no_pending_responses()


def test_a_conflicting_id_put_is_tried_again_and_a_refused_one_aborts(ops):
    client, stub = stubbed_member(ops)
    stub.add_response("create_multipart_upload", {"UploadId": "mine"}, {"Bucket": "b", "Key": "g/object"})
    stub.add_client_error("put_object", "ConditionalRequestConflict", http_status_code=409, expected_params=ID_PUT)
    stub.add_response("put_object", {}, ID_PUT)
    with stub:
        assert ops.shared_upload(client, "b", "g/object", "g/upload-id") == "mine"
    client, stub = stubbed_member(ops)
    stub.add_response("create_multipart_upload", {"UploadId": "mine"}, {"Bucket": "b", "Key": "g/object"})
    stub.add_client_error("put_object", "AccessDenied", http_status_code=403, expected_params=ID_PUT)
    stub.add_response("abort_multipart_upload", {}, {"Bucket": "b", "Key": "g/object", "UploadId": "mine"})
    with stub, pytest.raises(ClientError, match="AccessDenied"):
        ops.shared_upload(client, "b", "g/object", "g/upload-id")
    stub.assert_no_pending_responses()


def test_bytes_are_what_was_sent_not_what_was_asked(transfer, ops, s3, bucket, monkeypatch):
    """A source that ends 5 bytes early: S3 gets, and the record says, 5 bytes fewer than SIZE."""

    class EndsEarly(ops.PatternStream):
        def read(self, n=-1):
            left = self.size - 5 - self.position
            return super().read(max(0, left if n is None or n < 0 else min(n, left)))

    monkeypatch.setattr(ops, "PatternStream", EndsEarly)
    size = 12 * MiB + 5
    [record] = message(transfer, s3, bucket, operation="upload", size=size, threads=2, part_size=5 * MiB)
    assert record["event"] == "transfer", record
    assert record["bytes"] == size - 5 == sum(n for _, _, n in record["parts"])
    assert record["mb_per_s"] == pytest.approx((size - 5) / record["seconds"] / 1e6)


def test_a_slowdown_is_retried_counted_and_its_part_sent_once(transfer, s3, bucket):
    """S3 answers the first UploadPart attempt 503 SlowDown (injected at the HTTP layer, as the
    local host's fault layer does): botocore retries it, the record counts the 503 and the retry,
    and the part's bytes once."""
    attempts = []

    def slow_down_first(request, **_):
        attempts.append(request)
        return faults._error_response(request, *faults.S3_ERRORS["s3_503"]) if len(attempts) == 1 else None

    s3.meta.events.register("before-send.s3.UploadPart", slow_down_first)
    size = 12 * MiB + 5
    [record] = message(transfer, s3, bucket, operation="upload", size=size, threads=1, part_size=5 * MiB)
    assert record["requests"] == {"CompleteMultipartUpload": 1, "CreateMultipartUpload": 1, "UploadPart": 3}, record
    assert (record["slowdowns"], record["retries"], record["attempts"]) == (1, 1, 6)
    assert record["bytes"] == size and len(attempts) == 4
    assert left_in(s3, bucket) == []


def test_cpu_time_is_the_processs_not_the_clocks(ops, s3):
    """A sleeping operation takes wall time and almost no CPU; a CPU-burning one at least the
    CPU seconds it burned."""

    def sleeping(_):
        time.sleep(0.3)
        return 1

    def burning(_):
        started = time.process_time()
        while time.process_time() - started < 0.3:
            pass
        return 1

    slept, burned = ops.timed(s3, sleeping), ops.timed(s3, burning)
    assert slept["seconds"] >= 0.3 and slept["cpu_seconds"] < 0.1 and slept["cpu_share"] < 0.34
    assert burned["cpu_seconds"] >= 0.3 and burned["cpu_share"] == pytest.approx(burned["cpu_seconds"] / burned["seconds"])


def test_the_crt_client_is_built_before_the_clock_starts(transfer, ops, monkeypatch):
    """On a clock that only the fake client's construction (10 s) and its upload (1 s) move, the
    record's seconds are the upload's."""
    clock = [100.0]
    fake_time = SimpleNamespace(monotonic=lambda: clock[0], time_ns=time.time_ns)
    monkeypatch.setattr(ops, "time", fake_time)
    monkeypatch.setattr(ops.transfer_requests, "time", fake_time)

    class CRTTransferManager:
        def __init__(self, *_):
            clock[0] += 10

        def __enter__(self):
            return self

        def __exit__(self, *_):
            return False

        def upload(self, stream, *_):
            clock[0] += 1
            stream.read()
            return SimpleNamespace(result=lambda: None)

    monkeypatch.setattr(ops, "create_transfer_manager", CRTTransferManager)
    aws = boto3.client("s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b")
    params = transfer.parse({"operation": "upload", "size": "1MiB", "client": "crt"})
    record = ops.upload(aws, params, ops.Place("b", "p"), set())
    assert (record["seconds"], record["bytes"]) == (1.0, MiB)


def test_a_failed_part_aborts_the_upload_and_leaves_nothing(transfer, s3, bucket, monkeypatch):
    calls = []

    def fail_second_part(model, **_):
        if model.name == "UploadPart":
            calls.append(1)
            if len(calls) == 2:
                raise ConnectionResetError("reset")

    s3.meta.events.register("before-call.s3.UploadPart", fail_second_part)
    [record] = message(transfer, s3, bucket, operation="upload", size=15 * MiB, part_size=5 * MiB, threads=1)
    assert record["event"] == "error" and record["run_id"] == "run-7"
    assert left_in(s3, bucket) == []


def test_the_handler_logs_one_record_with_its_outcome(load_handler, function_env, capsys):
    handler = load_handler()
    capsys.readouterr()
    body = {"run_id": "r", "seq": 0, "experiment_tag": "t", "workload": "transfer", "operation": "small-files",
            "size": 10, "files": 2}  # fmt: skip
    assert handler.lambda_handler(sqs_event(body), lambda_context()) == {"batchItemFailures": []}
    [line] = log_records(capsys)
    assert (line["workload"], line["outcome"], line["requests"]) == ("transfer", "done", {"PutObject": 2})


@pytest.mark.parametrize(("given", "named"), [
    ({"operation": "move"}, "'move'"),
    ({"operation": "upload", "size": "6GiB"}, "'6GiB'"),
    ({"operation": "upload", "part_size": "4MiB"}, "'4MiB'"),
    ({"operation": "upload", "threads": "257"}, "'257'"),
    ({"operation": "upload", "threads": "0"}, "'0'"),
    ({"operation": "upload", "files": "3"}, "FILES"),
    ({"operation": "upload", "size": "10MiB", "part_size": "5MiB", "fan": "3"}, "FAN 3"),
    ({"operation": "upload", "size": "1MiB", "fan": "2"}, "FAN 2"),
    ({"operation": "small-files", "size": "101MB"}, "'101MB'"),
    ({"operation": "small-files", "files": "2", "prefixes": "3"}, "PREFIXES 3"),
    ({"operation": "small-files", "direction": "post"}, "'post'"),
    ({"operation": "copy", "method": "rsync"}, "'rsync'"),
    ({"operation": "copy", "size": "6GiB", "method": "copy-object"}, "'6GiB'"),
])  # fmt: skip
def test_bad_parameters_name_the_value(transfer, given, named):
    with pytest.raises(transfer.ParamError, match=named) as caught:
        transfer.parse(given)
    assert "\n" not in str(caught.value)


def test_more_than_10000_parts_are_refused(transfer):
    """Unreachable from SIZE (5 GiB at most) and PART_SIZE (5 MiB at least): S3's rule, kept for both."""
    with pytest.raises(transfer.ParamError, match="10240 parts"):
        transfer.check(transfer.Params(size=50 * 1024 * MiB, part_size=5 * MiB))


def test_a_bad_body_is_a_malformed_message(transfer, s3, bucket):
    [record] = message(transfer, s3, bucket, operation="upload", threads="4")
    assert record["error_type"] == "MalformedMessage" and "threads='4'" in record["error_message"]


def test_the_pattern_reads_the_same_bytes_at_any_offset(ops):
    whole = ops.PatternStream(3 * MiB + 7).read()
    assert len(whole) == 3 * MiB + 7
    stream = ops.PatternStream(3 * MiB + 7)
    stream.seek(MiB + 3)
    assert stream.read(2 * MiB) == whole[MiB + 3:3 * MiB + 3]
    assert ops.PatternStream(100, offset=MiB - 50).read() == whole[MiB - 50:MiB + 50]
