"""The statistics of a cell's downloads, defined once for the download workload's run report,
report across runs, plots and files: which metrics, which statistics of each, and the names of
their columns in summary.json, summary.csv, cells.json and cells.csv (`<metric>_<statistic>`,
`mb_per_s_<p50|p99>_ci_<low|high>`). Methods: fanout.results.stats, docs/statistics.md.
"""

from fanout.results import stats

STATS = ("min", "p25", "p50", "avg", "p75", "p90", "p99", "max")
METRICS = {  # column prefix -> (title with unit, caption)
    "seconds": ("Download time (s)", "wall clock, measured in the function"),
    "mb_per_s": ("Throughput (MB/s)", "decimal: 1 MB = 10^6 bytes"),
    "mbit_per_s": ("Throughput (Mbit/s)", "decimal: 1 Mbit = 10^6 bits (records: mbps)"),
}
MBIT_PER_MB = 8  # every statistic here is linear in the values, so it scales exactly with the unit
CI_ENDS = ("low", "high")
PREDICTED = "predicted_seconds_p50"  # the model's median download seconds of a cell (local runs under a model)


def column(metric: str, stat: str) -> str:
    """The column of statistic `stat` of `metric`: seconds_p50, mb_per_s_max..."""
    return f"{metric}_{stat}"


def ci_column(stat: str, end: str, metric: str = "mb_per_s") -> str:
    """The column of one end of the confidence interval of `stat` (stats.CI_STATISTICS) of
    `metric` (MB/s, or seconds)."""
    return f"{metric}_{stat}_ci_{end}"


COLUMNS = [column(metric, stat) for metric in METRICS for stat in STATS]
CI_COLUMNS = [ci_column(stat, end) for stat in stats.CI_STATISTICS for end in CI_ENDS]
SECONDS_CI_COLUMNS = [ci_column(stat, end, "seconds") for stat in stats.CI_STATISTICS for end in CI_ENDS]


def of(seconds: list[float], mb_per_s: list[float]) -> dict[str, float]:
    """Every metric's statistics (COLUMNS) of one cell's downloads (at least one)."""
    described = {"seconds": stats.describe(seconds), "mb_per_s": stats.describe(mb_per_s)}
    return from_described(described["seconds"], described["mb_per_s"])


def from_described(seconds: dict, mb_per_s: dict) -> dict[str, float]:
    """COLUMNS from the statistics of seconds and of MB/s (stats.describe's names, or a query
    row's); Mbit/s is MB/s x 8."""
    by_metric = {"seconds": seconds, "mb_per_s": mb_per_s, "mbit_per_s": {s: mb_per_s[s] * MBIT_PER_MB for s in STATS}}
    return {column(metric, stat): by_metric[metric][stat] for metric in METRICS for stat in STATS}


def intervals(values: list[float], metric: str = "mb_per_s") -> dict[str, float | None]:
    """CI_COLUMNS (of seconds with `metric` "seconds": SECONDS_CI_COLUMNS): the bootstrap
    interval of each of stats.CI_STATISTICS of `values` (None for a cell of one download:
    nothing to resample)."""
    cis = stats.intervals(values, list(stats.CI_STATISTICS.values()))
    return {ci_column(stat, end, metric): value for stat, ci in zip(stats.CI_STATISTICS, cis)
            for end, value in zip(CI_ENDS, ci or (None, None))}  # fmt: skip
