"""Local function host: achieved vs target concurrency, per-invocation overhead, memory per environment.

Every figure is a ratio against a target or a baseline measured in the same run: the peak
number of invocations between START and END (from the CloudWatch logs the host wrote) over the
reserved concurrency, and the host's time per invocation over a direct call of the same handler.
"""

import json
import os
import statistics
import tempfile
import threading
import time
import uuid

from fanout import aws

REGION = "us-east-1"
HANDLER = """
import os, time
import boto3

s3 = boto3.client("s3")

def handler(event, context):
    s3.get_object(Bucket=os.environ["BUCKET"], Key="tiny")["Body"].read()
    time.sleep(float(os.environ["HOLD_SECONDS"]))
"""
TARGETS = tuple(int(n) for n in os.environ.get("BENCH_HOST_TARGETS", "100,500").split(","))


def main() -> None:
    from fanout.emulator import control

    with tempfile.TemporaryDirectory(prefix="bench-host-") as home:
        os.environ["FANOUT_HOME"] = home
        endpoint = control.start()
        try:
            bench = Bench(endpoint)
            for target in TARGETS:
                bench.concurrency(target)
            bench.overhead(invocations=200)
        finally:
            control.stop()


class Bench:
    def __init__(self, endpoint: str):
        from tests.host.support import zip_of  # the same zips the tests deploy

        self.endpoint, self.zip = endpoint, zip_of({"handler.py": HANDLER})
        s3 = self.client("s3")
        self.bucket = f"bench-{uuid.uuid4().hex[:8]}"
        s3.create_bucket(Bucket=self.bucket)
        s3.put_object(Bucket=self.bucket, Key="tiny", Body=b"x" * 1024)
        trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                         "Principal": {"Service": "lambda.amazonaws.com"}}]}
        self.role = self.client("iam").create_role(RoleName=f"{self.bucket}-role",
                                                   AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]

    def client(self, service):
        return aws.client(service, REGION, self.endpoint)

    def deploy(self, concurrency: int, hold: float):
        from tests.host.support import Deployed

        name = f"bench-{uuid.uuid4().hex[:8]}"
        sqs, lam = self.client("sqs"), self.client("lambda")
        queue_url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "900"})["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        lam.create_function(FunctionName=name, Runtime="python3.12", Role=self.role, Handler="handler.handler",
                            Code={"ZipFile": self.zip}, Timeout=900, MemorySize=128,
                            Environment={"Variables": {"BUCKET": self.bucket, "HOLD_SECONDS": str(hold)}})
        lam.create_event_source_mapping(FunctionName=name, EventSourceArn=arn, BatchSize=1, Enabled=False)
        lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=concurrency)
        return Deployed(name, self.endpoint, queue_url, "", f"/aws/lambda/{name}")

    def concurrency(self, target: int) -> None:
        """One message per environment, each held long enough for all of them to overlap."""
        from fanout.host import Host, load
        from tests.host.support import intervals, peak_concurrency

        hold = max(5.0, target / 20)
        fn = self.deploy(target, hold)
        fn.send([{"seq": i} for i in range(target)])
        done = threading.Event()
        host = Host(load(fn.name, self.endpoint, REGION), idle_seconds=1.0,
                    progress=lambda s: s.messages_deleted >= target and done.set())
        runner = threading.Thread(target=host.run)
        started = time.monotonic()
        runner.start()
        done.wait()
        elapsed = time.monotonic() - started
        pss = [_pss_mib(pid) for pid in host.environment_pids()]
        host.stop()
        runner.join()
        spans = intervals(fn.streams())
        peak = peak_concurrency(spans)
        starts = sorted(start for start, _ in spans)
        print(f"host concurrency {target}: achieved/target {peak / target:.3f} (peak {peak}, "
              f"{len(spans)} invocations, all started within {(starts[-1] - starts[0]) / 1000:.1f} s, "
              f"hold {hold:.0f} s, run {elapsed:.1f} s)")
        print(f"host memory per idle environment (PSS): median {statistics.median(pss):.1f} MiB "
              f"over {len(pss)} environments")

    def overhead(self, invocations: int) -> None:
        """Host time per invocation (one environment, back to back) against a direct handler call."""
        from tests.host.support import END, REPORT, START

        fn = self.deploy(1, 0.0)
        fn.send([{"seq": i} for i in range(invocations)])
        fn.host(idle_seconds=1.0)
        events = [m for events in fn.streams().values() for m in events]
        starts = [ts for ts, m in events if START.match(m)]
        ends = [ts for ts, m in events if END.match(m)]
        durations = [float(m.split("Duration: ")[1].split(" ms")[0]) for _, m in events if REPORT.match(m)]
        direct = _direct_call_ms(self.endpoint, self.bucket, invocations)
        # Host overhead: START to END (IPC, output relay, platform lines) beyond the handler's time.
        overhead = statistics.median(e - s - d for s, e, d in zip(starts, ends, durations))
        # Full cycle per message, including the SQS receive and delete round trips to the emulator.
        cycle = statistics.median(b - a for a, b in zip(starts, starts[1:]))
        print(f"host per-invocation overhead: median {overhead:.2f} ms (target <= 5 ms, log timestamps "
              f"are whole ms); (START-to-END) / direct call {(overhead + statistics.median(durations)) / direct:.2f}; "
              f"message cycle with SQS round trips / direct call {cycle / direct:.2f} "
              f"(direct call median {direct:.2f} ms)")


def _direct_call_ms(endpoint: str, bucket: str, calls: int) -> float:
    """The handler called in this process, as a baseline for the host's cycle."""
    namespace = {}
    os.environ.update(BUCKET=bucket, HOLD_SECONDS="0", AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID="test",
                      AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION=REGION)
    exec(HANDLER, namespace)  # noqa: S102 - the benchmark's own handler source
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        namespace["handler"]({"Records": []}, None)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _pss_mib(pid: int) -> float:
    """Proportional set size: shared pages (the preloaded parent's) count once across processes."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    return 0.0


if __name__ == "__main__":
    main()
