"""Uploads against known truth: the model, object size and timed PutObjects that
tests/network/test_uploads.py and bench/network_truth.py share (one definition).

One connection (4 MB/s) spends the 1 MiB upload bucket at 4 - 2 MB/s for 0.52 s, then runs at
the sustained 2 MB/s (1.6 s in all for SIZE); two connections (8 MB/s) spend it in 0.17 s (3.7 s).
Rates low because the emulator's own handling of a PUT (it reads the whole body, then hashes and
stores it: 60-150 ms for 12 MiB unshaped on the development machine) comes after the body, on
top of the model: at 16 MB/s per connection it made 12 MiB uploads 1.05-1.17x the prediction,
at these rates it is about 2%.
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
