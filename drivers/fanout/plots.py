"""The report's PNG plots: throughput per cell, concurrency over time, CDF of download times,
cumulative bytes over time (the byte-arrival timelines). Every plot carries the run's network
label (fanout.figures): a simulation must never pass for an AWS measurement.

matplotlib with the Agg backend: files only, no display needed (CI, SSH sessions). Cells come
in numeric order (512 MB before 1024 MB), as in the tables.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from fanout import cells, concurrency, timeline, workloads  # noqa: E402
from fanout.figures import WIDTH, save  # noqa: E402

CELLS = cells.of(workloads.get("download"))  # the download workload's cells

TARGET_STYLE = {"color": "tab:red", "linestyle": "--", "linewidth": 1.5}


def draw(summary: dict, folder) -> list:
    """Write the plots of a report summary into `folder`; returns their paths."""
    downloads = [r for r in summary["records"] if r.get("event") == "download"]
    if not downloads:
        return []
    groups = _by_cell(downloads)
    figures = {
        "throughput.png": _throughput(groups),
        "concurrency.png": _concurrency(groups, summary["steady_definition"]),
        "seconds_cdf.png": _seconds_cdf(groups),
    }
    with_timelines = {label: [d for d in group if "timeline" in d] for label, group in groups.items()}
    if any(with_timelines.values()):
        figures["timeline.png"] = _timelines({k: v for k, v in with_timelines.items() if v})
    return [save(fig, folder / name, summary["network"]) for name, fig in figures.items()]


def _by_cell(downloads: list[dict]) -> dict[str, list[dict]]:
    """Downloads per cell label, in the cells' numeric order."""
    groups: dict[tuple, list[dict]] = {}
    for d in downloads:
        groups.setdefault(CELLS.sort_key(d), []).append(d)
    return {CELLS.label(group[0]): group for _, group in sorted(groups.items())}


def _throughput(groups):
    fig, ax = plt.subplots(figsize=(WIDTH, 1.9 + 0.7 * len(groups)), layout="constrained")
    values = [[d["bytes"] / d["seconds"] / 1e6 for d in group] for group in groups.values()]
    labels = [f"{CELLS.label(g[0], ('memory_size', 'concurrency_limit', 'object_size'))}\n"
              f"{CELLS.label(g[0], ('strategy', 'experiment_tag'))}\nn={len(g)}" for g in groups.values()]
    ax.boxplot(values, orientation="horizontal", tick_labels=labels, widths=0.6, showmeans=True, showfliers=False,
               meanprops={"marker": "^", "markerfacecolor": "white", "markeredgecolor": "black"})  # fmt: skip
    for row, v in enumerate(values, start=1):
        ax.scatter(v, [row] * len(v), s=10, alpha=0.4, color="tab:blue", zorder=3)
    ax.invert_yaxis()  # first cell on top, as in the tables
    ax.set_xlabel("Throughput per download (MB/s, decimal: 10^6 bytes/s)\n"
                  "box: quartiles, orange line: median, triangle: mean, whiskers: 1.5 IQR, dots: downloads",
                  fontsize="medium")  # fmt: skip
    top = ax.secondary_xaxis("top", functions=(lambda x: x * 8, lambda x: x / 8))
    top.set_xlabel("Mbit/s")
    ax.set_title("Throughput per download, by cell")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _concurrency(groups, steady_definition: str):
    """One panel per cell on a shared time axis: overlapping downloads against the target."""
    fig, axes = plt.subplots(len(groups), 1, sharex=True, squeeze=False, figsize=(WIDTH, 1.5 + 2.2 * len(groups)),
                             layout="constrained")  # fmt: skip
    origin = min(d["start_ms"] for group in groups.values() for d in group)
    steady_label = f"steady part ({steady_definition.split(' from')[0]})"
    for ax, (label, group) in zip(axes[:, 0], groups.items()):
        intervals = [(d["start_ms"], d["end_ms"]) for d in group]
        steps = concurrency.steps(intervals)
        ax.step([(t - origin) / 1000 for t, _ in steps], [n for _, n in steps], where="post", color="tab:blue",
                label="downloads running")  # fmt: skip
        target = group[0].get("concurrency_limit")
        if target:
            ax.axhline(target, **TARGET_STYLE, label="target (the concurrency limit)")
        low, high = concurrency.steady_window(intervals)
        ax.axvspan((low - origin) / 1000, (high - origin) / 1000, color="tab:gray", alpha=0.12, label=steady_label)
        ax.set_ylim(0, max(target or 0, concurrency.peak(intervals)) * 1.15 + 0.5)  # the target never on the edge
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(label, fontsize="medium", loc="left")
        ax.set_ylabel("at once")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("Time since the first download started (s)")
    fig.suptitle("Downloads running at once, against the target")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="outside lower center", ncol=3, fontsize="small")
    return fig


def _seconds_cdf(groups):
    fig, ax = plt.subplots(figsize=(WIDTH, 4.5), layout="constrained")
    for label, group in groups.items():
        seconds = sorted(d["seconds"] for d in group)
        fractions = [(i + 1) / len(seconds) for i in range(len(seconds))]
        ax.step(seconds, fractions, where="post", label=f"{label} (n={len(seconds)})")
    ax.set_xlabel("Download time (s)")
    ax.set_ylabel("Fraction of downloads taking at most x")
    ax.set_ylim(0, 1.02)
    ax.set_title("CDF of download times")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return fig


def _timelines(groups):
    """Cumulative bytes against time since each download started: per cell the median download's
    curve and the p10-p90 band, pointwise over the cell's downloads (a finished download keeps
    its total), so the burst and the knee where the rate falls to the sustained level show."""
    fig, ax = plt.subplots(figsize=(WIDTH, 4.5), layout="constrained")
    for label, group in groups.items():
        curves = [timeline.cumulative(d) for d in group]
        step = max(d["timeline_interval_ms"] for d in group) / 1000
        grid = np.arange(0, max(times[-1] for times, _ in curves) + step, step)
        values = np.array([np.interp(grid, times, totals) for times, totals in curves]) / 1e6
        low, median, high = np.percentile(values, [10, 50, 90], axis=0)
        line, = ax.plot(grid, median, label=f"{label} (n={len(group)})")
        ax.fill_between(grid, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel("Time since the download started (s)")
    ax.set_ylabel("Bytes received (MB, decimal)")
    ax.set_title("Byte arrival per download: median (line) and p10-p90 (band) per cell")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")
    return fig
