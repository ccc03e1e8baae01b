"""Uploads against known truth: the model, object size and timed PutObjects that
tests/network/test_uploads.py and bench/network_truth.py share (one definition).

The rates are low on purpose, so the emulator's own handling of a PUT stays about 2% of the
figure; the arithmetic: docs/network-model.md, *How traffic is shaped* (uploads).
"""

import os
import threading
import time

from fanout.common import aws

MODEL = {"upload_burst": "1MiB", "upload_peak_mb_per_s": 16, "upload_sustained_mb_per_s": 2,
         "upload_connection_mb_per_s": 4, "first_byte_ms": 20}
SIZE = 4 * 2**20


def timed_puts(endpoint: str, bucket: str, connections: int, size: int = SIZE) -> float:
    """Seconds for `connections` PutObjects of `size` bytes at once from one environment's endpoint."""
    s3 = aws.client("s3", "us-east-1", endpoint)
    body = os.urandom(size)
    s3.put_object(Bucket=bucket, Key="warm", Body=b"")  # the connection pool's first connect, before the clock
    threads = [threading.Thread(target=s3.put_object, kwargs={"Bucket": bucket, "Key": f"up-{i}", "Body": body})
               for i in range(connections)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.monotonic() - started
