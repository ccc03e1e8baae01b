"""Retries, SlowDown answers and CPU time in the download record: S3's throttling injected at
the HTTP layer of the handler's own client (botocore's before-send event, as the local host's
fault layer does), so botocore and s3transfer retry exactly as they would against S3."""

import pytest
from botocore.awsrequest import AWSResponse

from fanout.local.host import faults

from .support import lambda_context, log_records, sqs_event


def body(strategy: str) -> dict:
    return {"run_id": "run-t", "seq": 0, "experiment_tag": "t", "strategy": strategy}


def download_record(handler, capsys, strategy: str) -> dict:
    capsys.readouterr()
    response = handler.lambda_handler(sqs_event(body(strategy)), lambda_context())
    assert response == {"batchItemFailures": []}
    [line] = log_records(capsys)
    return line


def slow_down_first(handler, times: int) -> None:
    """Answer the first `times` GetObject attempts with 503 SlowDown."""
    attempts = []

    def inject(request, **_):
        attempts.append(request)
        return faults._error_response(request, *faults.S3_ERRORS["s3_503"]) if len(attempts) <= times else None

    handler.s3.meta.events.register("before-send.s3.GetObject", inject)


class _Short:
    """A body that ends early: botocore raises IncompleteReadError on reaching its end."""

    def __init__(self, length: int):
        self._left = length

    def read(self, amount=None) -> bytes:
        count = self._left if amount is None else min(amount, self._left)
        self._left -= count
        return b"\0" * count


def break_off_first_part(handler, size: int) -> list:
    """The first ranged GetObject's body breaks off halfway (a connection reset mid-body), which
    botocore does not retry and s3transfer does, by calling GetObject again for that range."""
    broken = []

    def inject(request, **_):
        header = request.headers.get("Range")
        if not header or broken:
            return None
        text = header.decode() if isinstance(header, bytes) else header
        first, last = map(int, text.removeprefix("bytes=").split("-"))
        last = min(last, size - 1)
        broken.append(text)
        headers = {"Content-Length": str(last - first + 1), "Content-Range": f"bytes {first}-{last}/{size}"}
        return AWSResponse(request.url, 206, headers, _Short((last - first + 1) // 2))

    handler.s3.meta.events.register("before-send.s3.GetObject", inject)
    return broken


@pytest.mark.parametrize("strategy", ["stream", "ranged connections=2 chunk_size=4MiB"])
def test_slow_down_answers_are_counted_as_slowdowns_and_retries(load_handler, capsys, strategy):
    handler = load_handler()
    slow_down_first(handler, times=2)
    sent = []  # every HTTP attempt, HeadObject included
    handler.s3.meta.events.register("before-send.s3", lambda event_name, **_: sent.append(event_name))
    line = download_record(handler, capsys, strategy)
    assert (line["slowdowns"], line["retries"]) == (2, 2)
    assert line["requests"] == len(sent)  # every attempt answered, the throttled ones included


def test_a_download_without_trouble_has_no_retries(load_handler, capsys):
    line = download_record(load_handler(), capsys, "download_file")
    assert (line["slowdowns"], line["retries"]) == (0, 0)


def test_s3transfers_own_retry_of_a_broken_body_is_counted(load_handler, capsys, test_object):
    handler = load_handler()
    broken = break_off_first_part(handler, test_object.size)
    line = download_record(handler, capsys, "ranged connections=2 chunk_size=4MiB")
    assert len(broken) == 1
    assert (line["retries"], line["slowdowns"]) == (1, 0)
    assert line["bytes"] == test_object.size  # the part read again, whole


def test_cpu_time_is_the_processs_over_the_download(load_handler, capsys):
    line = download_record(load_handler(), capsys, "stream")
    assert 0 < line["cpu_seconds"]
    assert line["cpu_share"] == pytest.approx(line["cpu_seconds"] / line["seconds"])
