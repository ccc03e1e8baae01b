"""The transfer workload's operations: upload, small-files and copy, each timed around what it
measures and each deleting what it wrote in a finally (transfer.py says what a message is).

Upload data is generated in memory (one random MiB repeated), so no disk time enters the figure;
the copy's `through-function` method goes through /tmp on purpose, as the published client did.
Details: drivers/fanout/workloads/transfer/README.md. Stdlib plus boto3 only (it runs in the
Lambda runtime).
"""

import io
import os
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from typing import NamedTuple

import boto3
from boto3.s3.transfer import TransferConfig, create_transfer_manager
from botocore.exceptions import ClientError

import cputime
import transfer_requests

BLOCK = os.urandom(1024 * 1024)  # the pattern every upload repeats
SENT = ("PutObject", "UploadPart")  # the data requests whose bodies an upload sends
DELETE_BATCH = 1000  # keys per DeleteObjects request (S3's limit)
ID_PUT_ATTEMPTS = 5  # conditional PUTs of a FAN group's upload id, against 409 conflicts


class Place(NamedTuple):
    """Where a message writes: its bucket, its prefix, and (FAN) its index in the group."""

    bucket: str
    prefix: str
    member: int = 0


class CleanupFailed(Exception):
    """Objects the message wrote could not be deleted."""


class SharedUploadConflict(Exception):
    """A FAN group's upload id could not be published: its conditional PUT kept conflicting."""


class CrtUnavailable(Exception):
    """CLIENT=crt cannot run here: boto3's CRT client ignores custom endpoints, or awscrt is missing."""


class PatternStream(io.RawIOBase):
    """`size` bytes of BLOCK repeated, readable and seekable without holding them."""

    def __init__(self, size: int, offset: int = 0):
        self.size, self.position = size, 0
        self.offset = offset  # where in the pattern byte 0 is: a FAN member's part starts mid-object
        self.delivered = 0  # bytes read from it, re-reads included

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self.position

    def seek(self, position, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, min(self.size, base + position))
        return self.position

    def read(self, n=-1):
        """The next `n` bytes, built in one allocation of `n` (the pattern's pieces are views),
        so that a part read into memory costs its size once (the memory check counts on it)."""
        n = self.size - self.position if n is None or n < 0 else min(n, self.size - self.position)
        start, pieces, left = (self.offset + self.position) % len(BLOCK), [], n
        view = memoryview(BLOCK)
        while left:
            piece = view[start:start + left]
            pieces.append(piece)
            left, start = left - len(piece), 0
        self.position += n
        self.delivered += n
        return b"".join(pieces)

    def readinto(self, buffer):
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def transfer_config(params, threshold: int | None = None) -> TransferConfig:
    """The transfer manager's settings for THREADS, PART_SIZE and THRESHOLD. In-memory parts are
    capped at 10 by default, which would hold more than 10 THREADS back: they are raised to THREADS."""
    config = TransferConfig(multipart_threshold=threshold or params.threshold, multipart_chunksize=params.part_size,
                            max_concurrency=params.threads)  # fmt: skip
    config.max_in_memory_upload_chunks = max(params.threads, config.max_in_memory_upload_chunks)
    return config


def parts_in_memory(params) -> int:
    """Parts an upload through the transfer manager holds in memory at most: its in-memory chunks
    (transfer_config) and the one more its submission thread has read and waits to queue
    (s3transfer's TransferConfig docs); each part read costs its size once (PatternStream.read).
    The drivers' memory check counts on this figure."""
    return min(transfer_config(params).max_in_memory_upload_chunks + 1, params.parts)


def run(s3, params, place: Place) -> dict:
    """The operation's measurement fields; whatever it wrote is gone when it returns or raises."""
    operation = {"upload": upload, "small-files": small_files, "copy": copy}[params.operation]
    written: set[str] = set()
    try:
        return operation(s3, params, place, written)
    finally:
        left = delete_all(s3, place.bucket, written)
        if left:
            raise CleanupFailed(f"could not delete {len(left)} objects, e.g. s3://{place.bucket}/{left[0]}")


def timed(s3, work) -> dict:
    """Run `work(requests)` (it returns the bytes it moved, counted) counting `s3`'s requests: wall
    seconds, bytes, decimal MB/s, CPU time, the request fields."""
    requests = transfer_requests.Requests()
    start_ms, cpu_started = time.time_ns() // 1_000_000, cputime.now()
    with transfer_requests.counted(s3, requests):
        moved = work(requests)
    seconds = time.monotonic() - requests.started
    return {"start_ms": start_ms, "seconds": seconds, "bytes": moved, "mb_per_s": moved / seconds / 1e6,
            **cputime.fields(cputime.now() - cpu_started, seconds), **requests.fields(), "_requests": requests}  # fmt: skip


def _public(fields: dict) -> dict:
    return {name: value for name, value in fields.items() if not name.startswith("_")}


# ---- upload ----


def upload(s3, params, place: Place, written: set) -> dict:
    if params.fan > 1:
        return fan_upload(s3, params, place, written)
    key = f"{place.prefix}/object"
    written.add(key)
    if params.client == "crt":
        manager = crt_manager(s3, params)  # built before the clock starts
        with manager:
            return _public(timed(s3, lambda _: crt_upload(manager, params, place.bucket, key)))

    def work(requests):
        s3.upload_fileobj(PatternStream(params.size), place.bucket, key, Config=transfer_config(params))
        return requests.bytes_of(*SENT)

    return {**_public(timed(s3, work)), "multipart": params.multipart, "part_count": params.parts}


def crt_manager(s3, params):
    """boto3's CRT transfer client: it sends through awscrt, not botocore, so the record's request
    counts stay empty; it cannot be pointed at the emulator (the drivers refuse it there)."""
    if not s3.meta.endpoint_url.endswith(".amazonaws.com"):
        raise CrtUnavailable(f"CLIENT=crt cannot use the endpoint {s3.meta.endpoint_url}: boto3's CRT client ignores it")
    config = TransferConfig(preferred_transfer_client="crt", multipart_chunksize=params.part_size,
                            multipart_threshold=params.threshold, max_concurrency=params.threads)  # fmt: skip
    manager = create_transfer_manager(s3, config)
    if type(manager).__name__ != "CRTTransferManager":
        raise CrtUnavailable(f"boto3 {boto3.__version__} gave {type(manager).__name__}, not the CRT client (awscrt missing?)")
    return manager


def crt_upload(manager, params, bucket: str, key: str) -> int:
    """The bytes the CRT client read from the stream (botocore's events do not see its requests)."""
    stream = PatternStream(params.size)
    manager.upload(stream, bucket, key).result()
    return stream.delivered


def fan_upload(s3, params, place: Place, written: set) -> dict:
    """FAN=N: this message uploads its share of the parts of the group's one multipart upload (the
    first id published with a conditional PUT wins: shared_upload; no message waits for another),
    then completes it if every part is there. On a failure the upload
    is aborted, which fails the group's other messages too. Hand-written: the transfer manager
    uploads all of an object's parts or none."""
    key, id_key = f"{place.prefix}/object", f"{place.prefix}/upload-id"
    upload_id = shared_upload(s3, place.bucket, key, id_key)
    first, last = place.member * params.parts // params.fan, (place.member + 1) * params.parts // params.fan
    try:
        def work(requests):
            with ThreadPoolExecutor(params.threads) as pool:
                list(pool.map(lambda n: upload_part(s3, params, place.bucket, key, upload_id, n), range(first, last)))
            return requests.bytes_of("UploadPart")

        fields = timed(s3, work)
        completed = complete_if_whole(s3, place.bucket, key, upload_id, params.parts)
    except Exception:
        _abort(s3, place.bucket, key, upload_id)
        written.update({key, id_key})
        raise
    if completed:
        written.update({key, id_key})  # the group's object and its id: the completing message deletes them
    return {**_public(fields), "multipart": True, "part_count": last - first, "fan_member": place.member,
            "fan_completed": completed}  # fmt: skip


def shared_upload(s3, bucket: str, key: str, id_key: str) -> str:
    """The group's upload id. Every member creates an upload and offers its id with a conditional
    PUT (If-None-Match: *): the first PUT wins; a loser (412 PreconditionFailed) aborts its own
    upload and reads the winner's id, which exists by then. No member reads the id before that:
    without s3:ListBucket, S3 answers a GET of a missing key with 403 AccessDenied, not 404.
    A 409 ConditionalRequestConflict (a concurrent write of the key) is retried."""
    mine = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    for _ in range(ID_PUT_ATTEMPTS):
        try:
            s3.put_object(Bucket=bucket, Key=id_key, Body=mine.encode(), IfNoneMatch="*")
            return mine
        except ClientError as exc:
            code = exc.response["Error"]["Code"]
            if code == "ConditionalRequestConflict":
                continue
            _abort(s3, bucket, key, mine)
            if code != "PreconditionFailed":
                raise
            return s3.get_object(Bucket=bucket, Key=id_key)["Body"].read().decode()
    _abort(s3, bucket, key, mine)
    raise SharedUploadConflict(f"the id of s3://{bucket}/{id_key} stayed in conflict over {ID_PUT_ATTEMPTS} PUTs")


def upload_part(s3, params, bucket: str, key: str, upload_id: str, index: int) -> None:
    start = index * params.part_size
    size = min(params.part_size, params.size - start)
    body = PatternStream(size, offset=start).read()
    s3.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=index + 1, Body=body)


def complete_if_whole(s3, bucket: str, key: str, upload_id: str, parts: int) -> bool:
    """Complete the upload when all `parts` are there; False when some are missing or another
    message completed it first."""
    try:
        listed = [p for page in s3.get_paginator("list_parts").paginate(Bucket=bucket, Key=key, UploadId=upload_id)
                  for p in page.get("Parts", [])]  # fmt: skip
        if len(listed) < parts:
            return False
        done = [{"PartNumber": p["PartNumber"], "ETag": p["ETag"]} for p in sorted(listed, key=lambda p: p["PartNumber"])]
        s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": done})
        return True
    except ClientError as exc:
        if exc.response["Error"]["Code"] == "NoSuchUpload":
            return False
        raise


def _abort(s3, bucket: str, key: str, upload_id: str) -> None:
    try:
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    except ClientError:
        pass  # already completed or aborted; a crash's leftovers are the lifecycle rule's


# ---- small files ----


def small_files(s3, params, place: Place, written: set) -> dict:
    """FILES objects over PREFIXES prefixes with THREADS workers; for DIRECTION=get they are
    written first, untimed. `request_seconds_*`: each object's call (with CLIENT_PER_OBJECT, its
    new client too), exact percentiles (linear interpolation, statistics.quantiles inclusive)."""
    keys = [f"{place.prefix}/p{i % params.prefixes}/{i}" for i in range(params.files)]
    data = os.urandom(params.size)
    written.update(keys)
    if params.direction == "get":
        with ThreadPoolExecutor(params.threads) as pool:
            list(pool.map(lambda key: s3.put_object(Bucket=place.bucket, Key=key, Body=data), keys))
    seconds: list[float] = []

    def one(key: str, requests) -> int:
        started = time.monotonic()
        client = new_client(s3) if params.client_per_object else s3
        with transfer_requests.counted(client, requests) if client is not s3 else nullcontext():
            if params.direction == "put":
                client.put_object(Bucket=place.bucket, Key=key, Body=data)
                read = 0
            else:
                read = sum(len(c) for c in client.get_object(Bucket=place.bucket, Key=key)["Body"].iter_chunks(1 << 20))
        seconds.append(time.monotonic() - started)
        return read

    def work(requests):
        with ThreadPoolExecutor(params.threads) as pool:
            read = sum(pool.map(lambda key: one(key, requests), keys))
        return read if params.direction == "get" else requests.bytes_of("PutObject")

    fields = _public(timed(s3, work))
    cuts = statistics.quantiles(seconds, n=100, method="inclusive") if len(seconds) > 1 else seconds * 99
    return {**fields, "objects_per_s": params.files / fields["seconds"],
            **{f"request_seconds_p{p}": cuts[p - 1] for p in (50, 90, 99)}}  # fmt: skip


def new_client(s3):
    """A new session's client to the same endpoint, as one CLI process per file has."""
    meta = s3.meta
    return boto3.session.Session().client("s3", region_name=meta.region_name, endpoint_url=meta.endpoint_url,
                                          config=meta.config)  # fmt: skip


# ---- copy ----


def copy(s3, params, place: Place, written: set) -> dict:
    """Copy a source of SIZE (written first, untimed: `source_seconds`) with METHOD."""
    source, target = f"{place.prefix}/source", f"{place.prefix}/copy"
    written.update({source, target})

    def write_source(requests):
        s3.upload_fileobj(PatternStream(params.size), place.bucket, source, Config=transfer_config(params))
        return requests.bytes_of(*SENT)

    written_source = timed(s3, write_source)
    copy_source = {"Bucket": place.bucket, "Key": source}
    extra: dict = {}

    def work(requests):
        if params.method == "copy-object":  # S3 does not say what it copied: the whole source
            s3.copy_object(Bucket=place.bucket, Key=target, CopySource=copy_source)
            return written_source["bytes"]
        if params.method == "part-copy":  # threshold 1: UploadPartCopy whatever the size
            s3.copy(copy_source, place.bucket, target, Config=transfer_config(params, threshold=1))
            return requests.bytes_of("UploadPartCopy")
        extra.update(through_function(s3, params, place.bucket, source, target))
        return requests.bytes_of(*SENT)  # what reached the target

    return {**_public(timed(s3, work)), "source_seconds": written_source["seconds"], "multipart": params.multipart,
            "part_count": params.parts, **extra}  # fmt: skip


def through_function(s3, params, bucket: str, source: str, target: str) -> dict:
    """Download to /tmp, then upload from it, both with THREADS, PART_SIZE and THRESHOLD."""
    handle, path = tempfile.mkstemp(prefix="transfer-")
    os.close(handle)
    try:
        started = time.monotonic()
        s3.download_file(bucket, source, path, Config=transfer_config(params))
        downloaded = time.monotonic()
        s3.upload_file(path, bucket, target, Config=transfer_config(params))
        return {"download_seconds": downloaded - started, "upload_seconds": time.monotonic() - downloaded}
    finally:
        os.remove(path)


def delete_all(s3, bucket: str, keys: set[str]) -> list[str]:
    """Delete every key (DeleteObjects, 1,000 a request); the keys that could not be deleted."""
    left, ordered = [], sorted(keys)
    for at in range(0, len(ordered), DELETE_BATCH):
        batch = ordered[at:at + DELETE_BATCH]
        try:
            answer = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True})
            left += [error["Key"] for error in answer.get("Errors", [])]
        except Exception:  # noqa: BLE001 - reported by the caller, after trying every batch
            left += batch
    return left
