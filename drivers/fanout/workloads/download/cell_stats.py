"""The statistics of a cell's downloads, defined once for the download workload's run report,
report across runs, plots and files: which metrics, which statistics of each, and the names of
their columns in summary.json, summary.csv, cells.json and cells.csv (`<metric>_<statistic>`,
`mb_per_s_<p50|p99>_ci_<low|high>`). Methods: fanout.results.stats, docs/statistics.md.
"""

from collections.abc import Mapping
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Statistics:
    """One metric's STATS over a cell's downloads (stats.describe's, or a saved query row's)."""

    min: float
    p25: float
    p50: float
    avg: float
    p75: float
    p90: float
    p99: float
    max: float

    @classmethod
    def of(cls, named: Mapping[str, float]) -> "Statistics":
        """From values named by STATS (stats.describe's result, or a query row's by statistic)."""
        return cls(**{stat: named[stat] for stat in STATS})

    def times(self, factor: float) -> "Statistics":
        return Statistics(**{stat: getattr(self, stat) * factor for stat in STATS})


@dataclass(frozen=True)
class CellStats:
    """A cell's statistics of download seconds and MB/s; its Mbit/s are MB/s x 8."""

    seconds: Statistics
    mb_per_s: Statistics

    @property
    def mbit_per_s(self) -> Statistics:
        return self.mb_per_s.times(MBIT_PER_MB)

    def metric(self, name: str) -> Statistics:
        """The statistics of metric `name` (a key of METRICS)."""
        return {"seconds": self.seconds, "mb_per_s": self.mb_per_s, "mbit_per_s": self.mbit_per_s}[name]

    def columns(self) -> dict[str, float]:
        """COLUMNS: the statistics under their summary.json and CSV names."""
        return {column(metric, stat): getattr(self.metric(metric), stat) for metric in METRICS for stat in STATS}


@dataclass(frozen=True)
class Interval:
    """A confidence interval's ends (None for a cell of one download: nothing to resample)."""

    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Intervals:
    """The bootstrap interval of each of stats.CI_STATISTICS of one `metric` of a cell."""

    metric: str
    by_statistic: dict[str, Interval]

    def columns(self) -> dict[str, float | None]:
        """CI_COLUMNS (SECONDS_CI_COLUMNS for seconds): the ends under their JSON and CSV names."""
        return {ci_column(stat, end, self.metric): getattr(interval, end)
                for stat, interval in self.by_statistic.items() for end in CI_ENDS}  # fmt: skip


def of(seconds: list[float], mb_per_s: list[float]) -> CellStats:
    """Every metric's statistics of one cell's downloads (at least one)."""
    return CellStats(Statistics.of(stats.describe(seconds)), Statistics.of(stats.describe(mb_per_s)))


def intervals(values: list[float], metric: str = "mb_per_s") -> Intervals:
    """The bootstrap interval of each of stats.CI_STATISTICS of `values` (of `metric`: MB/s, or
    seconds)."""
    cis = stats.intervals(values, list(stats.CI_STATISTICS.values()))
    return Intervals(metric, {stat: Interval(*ci) if ci else Interval() for stat, ci in zip(stats.CI_STATISTICS, cis)})
