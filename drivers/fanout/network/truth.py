"""Ground truth: what a run under a model should show, next to what its records show.

For each memory size of a run, the injected values come from the model run.json recorded
(fanout.network.options.from_record) at that memory and scale, and the estimates from the
download records' timelines (functions/downloader/timeline.py):
- sustained rate: median of `sustained_mb_per_s` over every download;
- burst size (the bucket): median of `burst_excess_bytes` over the first download of each
  environment (earliest start_ms per env_id), the only one certain to start with a full bucket;
- first-byte latency: median of `first_byte_seconds`, against the model's median; the proxy
  delays a response's first byte to at least that latency after the request, so a slower
  emulator answer (about 10 ms here, more for large objects) raises the estimate above it.
Medians are exact (numpy's default, linear interpolation between closest ranks).
"""

import numpy as np

from fanout.network.options import from_record


def compare(run: dict, downloads: list[dict]) -> list[dict]:
    """One row per memory size: injected and estimated values, and their ratio."""
    model = from_record(run.get("network"))
    if run.get("backend") != "local" or not model.shaped:
        return []
    rows = []
    for memory in sorted({d["memory_size"] for d in downloads if "sustained_mb_per_s" in d}):
        mine = [d for d in downloads if d["memory_size"] == memory and "sustained_mb_per_s" in d]
        shape = model.at(memory)
        firsts = _first_per_environment(mine)
        estimates = {
            "sustained_mb_per_s": (_mb(shape.sustained_rate), _median(d["sustained_mb_per_s"] for d in mine)),
            "burst_bytes": (shape.burst_bytes, _median(d["burst_excess_bytes"] for d in firsts)),
            "first_byte_seconds": (shape.first_byte_s, _median(d["first_byte_seconds"] for d in mine
                                                              if d.get("first_byte_seconds") is not None)),
        }
        for name, (injected, estimated) in estimates.items():
            ratio = estimated / injected if injected and estimated is not None else None
            rows.append({"memory_size": memory, "parameter": name, "injected": injected, "estimated": estimated,
                         "ratio": None if ratio is None else round(ratio, 3), "downloads": len(mine),
                         "inside_burst": _ends_inside_burst(mine, shape.burst_bytes)})
    return rows


def _first_per_environment(downloads: list[dict]) -> list[dict]:
    first: dict[str, dict] = {}
    for d in sorted(downloads, key=lambda d: d["start_ms"]):
        first.setdefault(d["env_id"], d)
    return list(first.values())


def _ends_inside_burst(downloads: list[dict], bucket: float | None) -> bool:
    """Is the object no larger than the bucket? Then a download that starts with a full bucket
    ends inside its burst, never reaching the sustained rate, and the estimates of sustained rate
    and burst describe the burst, not the model."""
    return bool(bucket) and (_median(d["bytes"] for d in downloads) or 0) <= bucket


def _median(values) -> float | None:
    values = list(values)
    return float(np.median(values)) if values else None


def _mb(rate: float | None) -> float | None:
    return None if rate is None else rate / 1e6
