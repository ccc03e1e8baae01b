"""Latency records as the function logs them, for tests of the latency workload's report."""


def calls(rng, storage, scale, sizes=(1, 1000, 10**6), reps=12, base_s=0.02, bytes_per_s=5e7) -> list[dict]:
    """A PUT and a GET record per size and repetition of `storage`: `base_s` plus the size at
    `bytes_per_s`, times `scale` and a lognormal spread (`rng`: a random.Random); a GET's first
    byte comes 30-90% of the way through."""
    found = []
    for size in sizes:
        for rep in range(reps):
            for operation in ("put", "get"):
                seconds = scale * (base_s + size / bytes_per_s) * rng.lognormvariate(0, 0.3)
                first = seconds * rng.uniform(0.3, 0.9) if operation == "get" else None
                found.append({"event": "latency", "run_id": "r", "storage": storage, "operation": operation,
                              "size": size, "rep": rep, "seconds": seconds, "first_byte_seconds": first})  # fmt: skip
    return found
