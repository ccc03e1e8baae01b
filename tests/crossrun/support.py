"""Run folders made from known distributions with fixed seeds: what `fanout fire`, `wait` and
`report` would leave in results/<run_id>/, without running them."""

import json

import numpy as np

from fanout.results import run_folders as runs, run_record

T0_MS = 1_700_000_000_000


def run_id(number: int) -> str:
    return f"20260101T{number:06d}Z-{number:06x}"


def make_run(
    number, *, memory=1024, concurrency=4, object_size=8_000_000, strategy="download_file", tag="t", per_slot=10,
    median_s=0.5, sigma=0.4, seed=0, dead_lettered=(), accounting=True, network=None, backend="local",
    object_size_field=True, addresses=None, ramp_ms=0, limits=None,
):  # fmt: skip
    """Write run.json and records.jsonl of one run of `concurrency` slots x `per_slot` downloads
    whose seconds are lognormal(log(median_s), sigma); `dead_lettered` seqs get no download.
    `addresses` ({address: seconds multiplier}): slot k's downloads reached the k-th address.
    `ramp_ms`: slot k starts k x ramp_ms late, as the queue mapping scales out. `limits`: how the
    host held the environments to Lambda's limits (run.json's "limits").
    Returns (run id, the download records)."""
    rng = np.random.default_rng(seed)
    rid = run_id(number)
    sent = concurrency * per_slot
    downloads, errors, seq = [], [], 0
    for slot in range(concurrency):
        clock = T0_MS + number * 10_000_000 + int(rng.integers(0, 50)) + slot * ramp_ms
        for i in range(per_slot):
            seconds = float(rng.lognormal(np.log(median_s), sigma))
            address = list(addresses)[slot % len(addresses)] if addresses else None
            seconds *= addresses[address] if addresses else 1
            if seq in dead_lettered:
                errors += [_error(rid, seq, memory, concurrency, strategy, tag, receive) for receive in range(1, 6)]
            else:
                record = {
                    "event": "download", "run_id": rid, "seq": seq, "experiment_tag": tag, "strategy": strategy,
                    "memory_size": memory, "concurrency_limit": concurrency, "bytes": object_size,
                    "seconds": seconds, "mbps": object_size * 8 / seconds / 1e6, "start_ms": clock,
                    "end_ms": clock + int(seconds * 1000), "cold_start": i == 0, "receive_count": 1,
                }  # fmt: skip
                if object_size_field:
                    record["object_size"] = object_size
                if address:
                    record["endpoint_ip"] = record["request_ips"] = address
                downloads.append(record)
            clock += int(seconds * 1000) + 5
            seq += 1
    record = {
        "run_id": rid, "backend": backend, "version": "test", "failed_seqs": [], "sent": sent,
        "send_rate_per_s": 100.0, "first_send_ms": T0_MS, "last_send_ms": T0_MS + 100,
        "parameters": {"messages": sent, "experiment_tag": tag, "strategy": strategy, "strategy_from": "stack default",
                       "inject_failures": None},
        "stack": {"stack": "s", "backend": backend, "region": "us-east-1", "endpoint": "", "memory": memory,
                  "concurrency": concurrency, "architecture": "x86_64", "object_size": object_size},
    }  # fmt: skip
    if accounting:
        record["accounting"] = {"done": len(downloads), "failed": [], "dead_lettered": sorted(dead_lettered),
                                "in_flight": [], "duplicate_download_records": 0}  # fmt: skip
    if network:
        record["network"] = network
    if limits:
        record["limits"] = limits
    runs.save(run_record.RunRecord.from_json(record))
    with open(runs.run_dir(rid) / "records.jsonl", "w") as out:
        out.writelines(json.dumps(r) + "\n" for r in downloads + errors)
    return rid, downloads


def _error(rid, seq, memory, concurrency, strategy, tag, receive):
    return {"event": "error", "run_id": rid, "seq": seq, "experiment_tag": tag, "strategy": strategy, "memory_size": memory,
            "concurrency_limit": concurrency, "error_type": "InjectedFailure", "receive_count": receive}  # fmt: skip


def at_target(downloads: list[dict], target: int, fraction: float = 0.9) -> list[dict]:
    """The downloads that ran at target, counted by brute force: the mean, over each download's
    own milliseconds, of how many of the run's downloads were running in each one (every
    millisecond of the run against every download, as one boolean matrix)."""
    starts = np.array([d["start_ms"] for d in downloads])
    ends = np.array([d["end_ms"] for d in downloads])
    ms = np.arange(starts.min(), ends.max())
    running = ((starts <= ms[:, None]) & (ms[:, None] < ends)).sum(axis=1)  # downloads running in each ms
    return [d for d in downloads
            if running[d["start_ms"] - ms[0]:d["end_ms"] - ms[0]].mean() >= fraction * target]  # fmt: skip
