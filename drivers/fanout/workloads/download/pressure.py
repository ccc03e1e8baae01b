"""What slowed a cell's downloads besides the network: S3 throttling, the function's CPU, and
the SDK the function ran on (the download records' `retries`, `slowdowns`, `cpu_share`, `key`
and `*_version` fields).

A cell is flagged `throttled` when a download got a 503 SlowDown, `CPU-bound` when its median
CPU/wall comes near the CPU its environments were allowed: what the memory buys on Lambda, and on
the local backend that divided by the network scale, as the host capped it
(fanout.local.host.limits). Sources and thresholds: docs/strategies.md, *Throttling, CPU and the SDK*.
"""

from collections import Counter

import numpy as np

from fanout.common import vcpu
from fanout.common.vcpu import MAX_VCPUS, MB_PER_VCPU
CPU_MARGIN = 0.10  # flag at >= 90% of the memory size's CPU share
THROTTLED, CPU_BOUND = "throttled", "CPU-bound"
SDK_FIELDS = ("boto3_version", "botocore_version", "s3transfer_version", "awscrt_version", "sdk_source")
NOTE = "\n  ".join([  # lines that fit 80 columns on the console
    "keys: object keys read; retries, 503s: totals over the cell's downloads (none",
    "for crt, which retries inside awscrt); dl with 503: downloads that got one",
    "CPU/wall: median of process CPU s / download s (numpy, linear interpolation)",
    f"CPU share: memory / {MB_PER_VCPU:,} MB per vCPU, at most {MAX_VCPUS} (AWS Lambda docs, memory),",
    "locally divided by the network scale, as the host capped it;",
    f"{CPU_BOUND}: CPU/wall within {CPU_MARGIN:.0%} of the CPU share",
])


def cpu_allowance(memory_mb: int, scale: float = 1.0) -> float:
    """The vCPUs a function of `memory_mb` gets: memory / 1,769 MB, capped at the vCPU count;
    divided by the `scale` its CPU share was divided by (a run's RunRecord.cpu_scale)."""
    return vcpu.share(memory_mb, scale)


def cell_figures(downloads: list[dict], scale: float = 1.0) -> dict:
    """A cell's throttling, CPU and keys from its download records (flags: THROTTLED, CPU_BOUND),
    the CPU compared with the allowance its environments had (`scale`: cpu_allowance)."""
    counted = [d for d in downloads if d.get("retries") is not None]
    shares = [d["cpu_share"] for d in downloads if d.get("cpu_share") is not None]
    memory = next((d["memory_size"] for d in downloads if d.get("memory_size")), None)
    allowance = cpu_allowance(int(memory), scale) if memory else None
    figures = {
        "retries": sum(d["retries"] for d in counted) if counted else None,
        "slowdowns": sum(d.get("slowdowns") or 0 for d in counted) if counted else None,
        "throttled_downloads": sum(bool(d.get("slowdowns")) for d in counted),
        "keys": len({d["key"] for d in downloads if d.get("key")}) or None,
        "cpu_share_p50": float(np.percentile(shares, 50)) if shares else None,
        "cpu_allowance": float(f"{allowance:.3g}") if allowance else None,
    }
    flags = [THROTTLED] if figures["throttled_downloads"] else []
    if figures["cpu_share_p50"] is not None and allowance:
        if figures["cpu_share_p50"] >= (1 - CPU_MARGIN) * allowance:
            flags.append(CPU_BOUND)
    return {**figures, "flags": ", ".join(flags)}


def sdk_sets(records: list[dict]) -> list[dict]:
    """The SDK version sets the records ran on, most records first (records from before the
    fields existed are left out)."""
    counts = Counter(tuple(r.get(name) for name in SDK_FIELDS) for r in records if r.get("boto3_version"))
    return [{**dict(zip(SDK_FIELDS, versions)), "records": n} for versions, n in counts.most_common()]


def sdk_text(sdk_set: dict) -> str:
    """`boto3 1.44.5, botocore 1.44.8, s3transfer 0.19.3, awscrt 0.38.0 (bundled)`: where
    boto3 was imported from in brackets."""
    parts = [f"{name.removesuffix('_version')} {sdk_set[name] or 'none'}" for name in SDK_FIELDS[:-1]]
    return f"{', '.join(parts)} ({sdk_set['sdk_source']})"


def sdk_warning(sets: list[dict]) -> str | None:
    """A warning when the records ran on more than one SDK: their figures are not comparable."""
    if len(sets) < 2:
        return None
    listed = "; ".join(f"{s['records']} records on {sdk_text(s)}" for s in sets)
    return f"the records ran on {len(sets)} SDK versions ({listed}): the runtime's SDK changed during the run"
