"""The summary of the download workload's report across runs (fanout.workloads.download.across
computes it; across_plots draws it): a type of its own module, which both import."""

from dataclasses import asdict, dataclass


@dataclass
class Across:
    """The summary of the report across runs: every cell's row (fields, statistics, intervals,
    concurrency, accounting, cost), the cell fields that vary, the runs, the methods, what the
    report warns of and notes, what made it, and per cell its downloads' samples and the
    concurrency each ran at (the plots'). cells.json is to_json: this less the samples."""

    title: str
    network: str
    limits: str
    runs: list[dict]
    cells: list[dict]
    varying: list[str]
    methods: dict[str, str]
    at_target: float
    warnings: list[str]
    notes: list[str]
    version: str
    environment: str
    samples: list[dict]
    ran_at: list[dict]
    endpoint_ips: list[dict]

    def to_json(self) -> dict[str, object]:
        """cells.json: every field but the samples."""
        return {key: value for key, value in asdict(self).items() if key != "samples"}
