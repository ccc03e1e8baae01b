"""Statistics of a sample of downloads and of the difference between two samples: the numbers of
the cross-run report and of `fanout compare`, in one place so that both use and state the same
methods.

Percentiles by linear interpolation (numpy's default), bootstrap percentile intervals with
RESAMPLES resamples and a fixed SEED, each side of a difference resampled independently. The
methods and why not BCa: docs/statistics.md, *What each figure is*.
"""

from collections.abc import Callable, Sequence

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 20_261_122
BATCH = 500  # resamples evaluated at once: bounds memory (BATCH x n floats) for large cells
PERCENTILES = {"p25": 25, "p50": 50, "p75": 75, "p90": 90, "p99": 99}
CI_STATISTICS = {"p50": 50, "p99": 99}  # the statistics that get a confidence interval
CI_METHOD = (
    f"{CONFIDENCE:.0%} bootstrap confidence interval, percentile method, {RESAMPLES:,} resamples, "
    f"seed {SEED} (scipy.stats.bootstrap)"
)
# A sample: a list of numbers or an array of them.
Sample = Sequence[float] | np.ndarray
Statistic = Callable[..., np.ndarray]  # (each sample resampled, axis) -> the statistics, as _bootstrap takes it
PERCENTILE_METHOD = "linear interpolation between closest ranks (numpy's default, type 7)"


def describe(values: Sample) -> dict:
    """n, min, p25, p50, avg, p75, p90, p99, max of `values` (at least one)."""
    array = np.asarray(values, dtype=float)
    result = {"n": int(array.size), "min": float(array.min())}
    quantiles = np.percentile(array, list(PERCENTILES.values()))
    result |= {name: float(q) for name, q in zip(PERCENTILES, quantiles)}
    result |= {"avg": float(array.mean()), "max": float(array.max())}
    return result


def intervals(values: Sample, percentiles: list[float]) -> list[tuple[float, float] | None]:
    """The confidence interval of each of `percentiles` of `values`, all from the same resamples
    (one pass instead of one per percentile); None below two values: nothing to resample."""
    if len(values) < 2:
        return [None] * len(percentiles)
    return _bootstrap((np.asarray(values, dtype=float),),
                      lambda x, axis: np.percentile(x, percentiles, axis=axis))  # fmt: skip


def difference_intervals(a: Sample, b: Sample, percentiles: list[float]) -> list[tuple[float, float] | None]:
    """The confidence interval of percentile(b) - percentile(a) for each of `percentiles`, each
    side resampled on its own."""
    return _two_samples(a, b, percentiles, np.subtract)


def ratio_intervals(a: Sample, b: Sample, percentiles: list[float]) -> list[tuple[float, float] | None]:
    """The confidence interval of percentile(b) / percentile(a) for each of `percentiles` (e.g.
    Express over Standard latency), each side resampled on its own."""
    return _two_samples(a, b, percentiles, np.divide)


def mean_ratio_interval(a: Sample, b: Sample) -> tuple[float, float] | None:
    """The confidence interval of mean(b) / mean(a), each side resampled on its own (a study
    whose source compared means: fanout.results.study_tables)."""
    if len(a) < 2 or len(b) < 2:
        return None

    def statistic(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:  # one statistic, as _bootstrap's list of them
        return (np.mean(y, axis=axis) / np.mean(x, axis=axis))[np.newaxis]

    [ci] = _bootstrap((np.asarray(a, dtype=float), np.asarray(b, dtype=float)), statistic)
    return ci


def _two_samples(a: Sample, b: Sample, percentiles: list[float], combine: np.ufunc) -> list[tuple[float, float] | None]:
    if len(a) < 2 or len(b) < 2:
        return [None] * len(percentiles)

    def statistic(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return combine(np.percentile(y, percentiles, axis=axis), np.percentile(x, percentiles, axis=axis))

    return _bootstrap((np.asarray(a, dtype=float), np.asarray(b, dtype=float)), statistic)


def excludes_zero(ci: tuple[float, float] | None) -> bool:
    return ci is not None and (ci[0] > 0 or ci[1] < 0)


def _bootstrap(samples: tuple[np.ndarray, ...], statistic: Statistic) -> list[tuple[float, float] | None]:
    from scipy import stats as scipy_stats  # about a second to import: only where an interval is computed

    result = scipy_stats.bootstrap(
        samples, statistic, n_resamples=RESAMPLES, batch=BATCH, vectorized=True, paired=False,
        confidence_level=CONFIDENCE, method="percentile", rng=np.random.default_rng(SEED),
    )  # fmt: skip
    low, high = result.confidence_interval
    return [(float(a), float(b)) for a, b in zip(low, high)]


def named_intervals(values: Sample, names: Sequence[str]) -> dict[str, tuple[float, float] | None]:
    """The interval of each statistic in `names` (describe's names) that has one: the
    percentiles and the mean; None for n, min and max (a bootstrap never reaches past the
    sample's extremes) and below two values."""
    found: dict[str, tuple[float, float] | None] = dict.fromkeys(names)
    if len(values) < 2:
        return found
    percentiles = [name for name in names if name in PERCENTILES]
    if percentiles:
        found |= dict(zip(percentiles, intervals(values, [PERCENTILES[name] for name in percentiles])))
    if "avg" in names:
        [found["avg"]] = _bootstrap((np.asarray(values, dtype=float),),
                                    lambda x, axis: np.expand_dims(np.mean(x, axis=axis), 0))  # fmt: skip
    return found
