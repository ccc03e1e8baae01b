"""The project's downloader hosted in an emulator, one message per environment, under a network
model: the runs the network benchmarks and the ground-truth tests measure."""

import json
import os
import threading
import uuid
from dataclasses import dataclass

from fanout.common import aws
from fanout import insights
from fanout.cloud import package
from fanout.workloads.download import report
from fanout.local.host import Host
from tests.harness import host_testing as testing

MEMORY = 1024


@dataclass
class Run:
    records: list[dict]  # the download records
    host: Host  # its busy_intervals say exactly when each environment was busy
    events: list[dict]  # every log event of the function ({"timestamp", "message"}), as a report reads them


class Downloader:
    """The packaged downloader, deployable against one object at a time."""

    def __init__(self, endpoint: str):
        self.endpoint = endpoint
        self.zip = package.build("runner").read_bytes()
        self.bucket = f"bench-net-{uuid.uuid4().hex[:8]}"
        self.role = testing.create_role(endpoint, f"bench-net-{uuid.uuid4().hex[:8]}",
                                        [testing.allow("s3:GetObject", f"arn:aws:s3:::{self.bucket}/*")])
        self.s3 = aws.client("s3", testing.REGION, endpoint)
        self.s3.create_bucket(Bucket=self.bucket)
        self.sizes: dict[str, int] = {}

    def put(self, key: str, size: int) -> None:
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=os.urandom(size))
        self.sizes[key] = size

    def run(self, key: str, mode: str, environments: int, network=None, messages_per_env: int = 1,
            warm: bool = False) -> Run:
        """Every environment downloads `key` in `mode` (`messages_per_env` times) under `network`.

        `warm`: a first wave of one message per environment starts them all (cold starts on two
        busy cores take seconds each), and only the second wave, sent once the first is done and
        received by warm environments nearly at once, is returned."""
        fn = testing.deploy(self.endpoint, self.role, self.zip, handler="handler.lambda_handler",
                            reserved=environments, timeout=900, visibility=900, memory=MEMORY, environment={
                                "FANOUT_BUCKET": self.bucket, "FANOUT_KEY": key,
                                "FANOUT_EXPECTED_SIZE": str(self.sizes[key]), "DOWNLOAD_DEFAULT_STRATEGY": mode,
                                "FANOUT_CONCURRENCY_LIMIT": str(environments)})
        count = environments * messages_per_env
        first = environments if warm else 0
        _send(fn, range(first + count) if not warm else range(first))
        sent_second = threading.Event()

        def progress(summary):
            if warm and summary.messages_deleted >= first and not sent_second.is_set():
                sent_second.set()
                _send(fn, range(first, first + count))

        # Idle a moment once done; longer when warm, so the second wave is sent before the host
        # could find the queue empty after the first.
        host = Host(fn.config(), idle_seconds=2.0 if warm else 0.5, network=network, progress=progress)
        failure = []
        thread = threading.Thread(target=lambda: _run(host, failure))
        thread.start()
        thread.join()
        if failure:
            raise failure[0]
        events = [{"timestamp": t, "message": m} for stream in fn.streams().values() for t, m in stream]
        records = [json.loads(e["message"]) for e in events if e["message"].startswith("{")]
        downloads = [r for r in records if r.get("event") == "download" and r["seq"] >= first]
        if len(downloads) != count:
            errors = [r.get("error_message") for r in records if r.get("event") == "error"][:3]
            raise RuntimeError(f"{len(downloads)} downloads recorded for {count} messages: {errors}")
        return Run(downloads, host, events)


def each_strategy(downloader: Downloader, key: str, strategies: list[str], network) -> dict[str, Run]:
    """One download of `key` per strategy (its text as given -> its run), each in an environment
    of its own that starts with a full bucket, one after another so that they do not share the
    machine: the case the model's prediction (fanout.local.network.truth.predicted_seconds) describes."""
    return {text: downloader.run(key, text, 1, network) for text in strategies}


def strategy_order(runs: list[Run]) -> list[str]:
    """The strategies of the report's strategy table over these runs' log events, in its order
    (fastest median first): the saved query evaluated locally, as the local report does."""
    events = [event for run in runs for event in run.events]
    rows = insights.evaluate(insights.load_query("strategy-comparison"), events).rows
    [(_, table)] = report.strategy_tables(rows)  # one memory size and one object size
    return [row[0] for row in table[1:]]


def _run(host: Host, failure: list) -> None:
    try:
        host.run()
    except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
        failure.append(exc)


def _send(fn, seqs) -> None:
    bodies = [{"run_id": "bench", "seq": seq, "experiment_tag": "bench"} for seq in seqs]
    sqs = fn.client("sqs")
    for first in range(0, len(bodies), 10):
        entries = [{"Id": str(i), "MessageBody": json.dumps(body)} for i, body in enumerate(bodies[first:first + 10])]
        sqs.send_message_batch(QueueUrl=fn.queue_url, Entries=entries)
