"""Local function host: achieved vs target concurrency, per-invocation overhead, memory per environment.

Every figure is a ratio against a target or a baseline measured in the same run, computed from
the START/END lines the host wrote to CloudWatch Logs (whole-millisecond timestamps):

- peak/target: the most invocations between START and END at one moment, over the reserved
  concurrency (the target).
- steady/target: the time-weighted mean number of invocations running over the report's steady
  window (fanout.results.concurrency.steady_window: from the moment the target, or the peak if
  lower, is first reached until the last START; all that time messages were waiting, so every
  slot should be busy), over the target. Two messages per slot are sent, each invocation holding its
  slot for `hold_seconds(target)`, so freed slots must be refilled: the gap between an END and
  the next START on a slot is what lowers this ratio.
- ramp: seconds from the first START to the start of that window. All environments start cold; Lambda's own SQS
  mapping would add environments gradually, the host starts them as fast as the machine allows.
- overhead: START-to-END time beyond the handler's own duration (REPORT Duration), median over
  back-to-back invocations in one environment (target: 5 ms or less). It covers sending the event
  to the environment, the reply, relaying its output and the platform lines; not the SQS
  receive, building the event or deleting the message, which come before START and after END.
  The full cycle per message (START to the next START in that environment) includes those and
  is printed too, each as a ratio to a direct call of the same handler in this process.
- memory: proportional (PSS) and private (USS) memory of each idle environment; PSS counts the
  pages shared with the fork server once across all sharers.

BENCH_HOST_TARGETS (default "100,500") sets the concurrency targets, BENCH_HOST_INVOCATIONS (200)
the overhead's invocations and BENCH_HOST_MIN_HOLD_S (6) the shortest hold.
"""

import os
import statistics
import threading
import time
import uuid

from bench._ratios import judge
from fanout.common import aws
from fanout.results import concurrency
from fanout.local.host import Host
from tests.harness import host_testing as testing

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

MESSAGES_PER_SLOT = 2
OVERHEAD_INVOCATIONS = int(os.environ.get("BENCH_HOST_INVOCATIONS", "200"))
MIN_HOLD_S = float(os.environ.get("BENCH_HOST_MIN_HOLD_S", "6"))
TARGET_RATIO = 0.95
TARGET_OVERHEAD_MS = 5.0


def main() -> None:
    from fanout.local.emulator import control

    saved = dict(os.environ)  # restored for the benchmarks that run after this one
    try:
        with control.private(prefix="bench-host-") as endpoint:
            bench = Bench(endpoint)
            for target in TARGETS:
                bench.concurrency(target)
            bench.overhead(OVERHEAD_INVOCATIONS)
    finally:
        os.environ.clear()
        os.environ.update(saved)


class Bench:
    def __init__(self, endpoint: str):
        self.endpoint = endpoint
        s3 = aws.client("s3", REGION, endpoint)
        self.bucket = f"bench-{uuid.uuid4().hex[:8]}"
        s3.create_bucket(Bucket=self.bucket)
        s3.put_object(Bucket=self.bucket, Key="tiny", Body=b"x" * 1024)
        self.role = testing.create_role(endpoint, f"{self.bucket}-role",
                                        [testing.allow("s3:GetObject", f"arn:aws:s3:::{self.bucket}/tiny")])

    def deploy(self, concurrency: int, hold: float) -> testing.Deployed:
        """The handler with `concurrency` reserved; messages are never retried within a run."""
        return testing.deploy(self.endpoint, self.role, HANDLER, reserved=concurrency, timeout=900, memory=128,
                              visibility=900, environment={"BUCKET": self.bucket, "HOLD_SECONDS": str(hold)})

    def concurrency(self, target: int) -> None:
        hold = hold_seconds(target)
        fn = self.deploy(target, hold)
        messages = MESSAGES_PER_SLOT * target
        fn.send_batches(messages)
        done, failure = threading.Event(), []
        # Every slot at once: this measures how well the host holds a target, not the mapping's ramp.
        host = Host(fn.config(), idle_seconds=1.0, progress=lambda s: s.messages_deleted >= messages and done.set(),
                    scale_per_minute=None)

        def run() -> None:
            try:
                host.run()
            except BaseException as exc:  # noqa: BLE001 - re-raised on the main thread below
                failure.append(exc)
            done.set()

        runner = threading.Thread(target=run)
        started = time.monotonic()
        runner.start()
        done.wait()
        elapsed = time.monotonic() - started
        memory = [_memory_mib(pid) for pid in host.environment_pids()]  # all idle now
        host.stop()
        runner.join()
        if failure:
            raise failure[0]
        spans = testing.intervals(fn.streams())
        received = host.summary.messages_received  # SQS delivers at least once: may exceed `messages`
        if len(spans) != received:
            raise RuntimeError(f"{len(spans)} invocations logged for {received} messages received")
        peak = concurrency.peak(spans)
        first_start = min(start for start, _ in spans)
        reached, window_end = concurrency.steady_window(spans, target)
        steady = concurrency.mean(spans, reached, window_end)
        judge(f"concurrency {target}: peak / target", peak / target, at_least=TARGET_RATIO)
        judge(f"concurrency {target}: steady / target", steady / target, at_least=TARGET_RATIO)
        print(f"host concurrency {target}: peak/target {peak / target:.3f}, steady/target {steady / target:.3f} "
              f"(target >= {TARGET_RATIO}; peak {peak}, steady {steady:.1f} over {(window_end - reached) / 1000:.1f} s, "
              f"ramp {(reached - first_start) / 1000:.1f} s, {len(spans)} invocations for {messages} messages "
              f"held {hold:g} s, run {elapsed:.1f} s)")
        pss, uss = zip(*memory)
        print(f"host memory per idle environment ({len(memory)}): PSS median {statistics.median(pss):.1f} MiB, "
              f"private (USS) median {statistics.median(uss):.1f} MiB")

    def overhead(self, invocations: int) -> None:
        """Host time per invocation (one environment, back to back) against a direct handler call."""
        fn = self.deploy(1, 0.0)
        fn.send_batches(invocations)
        fn.host(idle_seconds=1.0)
        events = [m for events in fn.streams().values() for m in events]
        starts = [ts for ts, m in events if testing.START.match(m)]
        ends = [ts for ts, m in events if testing.END.match(m)]
        durations = [float(testing.REPORT.match(m)["duration"]) for _, m in events if testing.REPORT.match(m)]
        direct = _direct_call_ms(self.endpoint, self.bucket, invocations)
        overhead = statistics.median(e - s - d for s, e, d in zip(starts, ends, durations))
        start_to_end = statistics.median(e - s for s, e in zip(starts, ends))
        cycle = statistics.median(b - a for a, b in zip(starts, starts[1:]))
        judge("overhead per invocation, ms", overhead, at_most=TARGET_OVERHEAD_MS)
        print(f"host overhead per invocation (START to END minus the handler's own Duration: event to the "
              f"environment, reply, output relay, platform lines; no SQS receive, event building or delete): "
              f"median {overhead:.2f} ms (target <= {TARGET_OVERHEAD_MS:g} ms; log timestamps are whole ms); "
              f"START to END / direct call {start_to_end / direct:.2f}")
        print(f"host full cycle per message (START to the next START in one environment: also the SQS receive "
              f"and delete round trips and building the event): median {cycle:.2f} ms, / direct call "
              f"{cycle / direct:.2f} (direct call median {direct:.2f} ms, {len(starts)} invocations)")


def hold_seconds(target: int) -> float:
    """Long enough for most environments to start (all cold; 2 cores start roughly 15 to 25 a
    second) before the first invocations end; the second message per slot covers the rest."""
    return max(MIN_HOLD_S, target / 25)


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


def _memory_mib(pid: int) -> tuple[float, float]:
    """(PSS, USS) of a process: shared pages count once across sharers in PSS, not at all in USS."""
    fields = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name in ("Pss", "Private_Clean", "Private_Dirty"):
                fields[name] = int(rest.split()[0]) / 1024
    return fields["Pss"], fields["Private_Clean"] + fields["Private_Dirty"]


if __name__ == "__main__":
    main()
