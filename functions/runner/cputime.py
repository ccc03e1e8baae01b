"""CPU time beside wall time, the same two fields in every workload's records: `cpu_seconds`, the
process's CPU time over the measured span (time.process_time: every thread, user and system;
sleeping and waiting on the network count nothing), and `cpu_share`, CPU seconds per wall second
(1.0: one vCPU busy throughout; more with threads on several). Lambda gives a function memory /
1,769 MB of a vCPU, so a share near that allowance says the figure was CPU-bound. Fields:
docs/workloads.md, *The envelope*. Stdlib only (it runs in the Lambda runtime).
"""

import time


def now() -> float:
    """The process's CPU seconds so far; a span's CPU time is the difference of two readings."""
    return time.process_time()


def fields(cpu_seconds: float, seconds: float) -> dict:
    """A record's `cpu_seconds` and `cpu_share` for a span of `seconds` wall seconds."""
    return {"cpu_seconds": cpu_seconds, "cpu_share": cpu_seconds / seconds if seconds > 0 else 0.0}
