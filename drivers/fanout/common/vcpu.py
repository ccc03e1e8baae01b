"""Lambda's CPU share: the one definition of how much CPU a function's memory buys.

AWS Lambda developer guide, "Configure Lambda function memory": a function has the equivalent of
one vCPU at 1,769 MB, in proportion below and above it; 10,240 MB, the most, gives 6 vCPUs
(AWS's announcement of 10 GB functions, December 2020). The local host caps each environment at
this share divided by the network scale (fanout.local.host.limits), the automatic scale counts it
(fanout.local.network.capacity) and the report compares a cell's CPU with it
(fanout.workloads.download.pressure).
"""

MB_PER_VCPU = 1769  # memory (MB) at which a function has the equivalent of one vCPU
MAX_VCPUS = 6  # at the largest memory, 10,240 MB


def share(memory_mb: int, scale: float = 1.0) -> float:
    """The vCPUs a function of `memory_mb` gets (at most MAX_VCPUS), divided by the network
    `scale` a local environment is hosted under (which slows rates, so CPU work per byte slows
    with them)."""
    return min(memory_mb / MB_PER_VCPU, MAX_VCPUS) / scale
