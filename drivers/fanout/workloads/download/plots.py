"""The report's PNG plots: throughput per cell, concurrency over time, CDF of download times,
throughput against the concurrency each download ran at (fanout.workloads.download.across_plots.ran_at_scatter),
cumulative bytes over time (the byte-arrival timelines). Every plot carries the run's network
label, and Lambda's limits beside it, as its caption (fanout.results.figures): a simulation must
never pass for an AWS measurement.

Cells come in numeric order (512 MB before 1024 MB), as in the tables. A cell is named by the
fields that differ between the run's cells, wrapped (a strategy's parameters and a 64-character
tag are long); the fields every cell shares are said once, in the title.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from fanout.results import cells, concurrency
from fanout.workloads.download.cell_stats import PREDICTED
from fanout.workloads.download import timeline
from fanout.workloads.download import WORKLOAD
from fanout.results.concurrency import AT_TARGET_FRACTION
from fanout.workloads.download.across_plots import ran_at_scatter
from fanout.results.figures import LINE_INCHES, WIDTH, caption, height, legend, lines, save, time_unit, title, wrap

CELLS = cells.of(WORKLOAD)  # the download workload's cells

ANSWER = "throughput.png"  # the plot the page opens with, beside the answer's table
CAPTIONS = {  # file name -> what the plot shows: the page's alt text and caption
    "throughput.png": "Throughput per download by cell (decimal MB/s): box of quartiles with the median, mean "
                      "(triangle), a dot per download and, where a network model ran, a red cross at the model's median",
    "concurrency.png": "Downloads running at once over the run, per cell, against the target concurrency; grey: "
                       "the steady window",
    "seconds_cdf.png": "Cumulative distribution of download times per cell",
    "throughput_by_concurrency_ran_at.png": "Every download's throughput against the concurrency it ran at; dashed: "
                                            "the at-target threshold, right of which the tables keep the downloads",
    "timeline.png": "Bytes received against time since each download started, per cell: the median download and its "
                    "p10-p90 band",
}  # fmt: skip
TARGET_STYLE = {"color": "tab:red", "linestyle": "--", "linewidth": 1.5}
BAND_MIN_DOWNLOADS = 10  # a timeline's p10-p90 band over fewer would be little more than its extremes
PANEL_TITLE_CHARS = 75  # a concurrency panel's title: the axes' width, the legend beside the top one


def draw(records: list[dict], cells: list[dict], labels: list[str], fraction: float, folder) -> list:
    """Write the plots of a run's report into `folder` (build's arguments); returns their paths."""
    return [save(fig, folder / name) for name, fig in build(records, cells, labels, fraction).items()]


def build(records: list[dict], cells: list[dict], labels: list[str], fraction: float = AT_TARGET_FRACTION) -> dict[str, Figure]:
    """The figures of a run's report by file name from its `records` and `cells` (the model's
    predictions), captioned with the run's `labels` (network, limits), at target at `fraction`;
    none without downloads."""
    downloads = [r for r in records if r.get("event") == "download"]
    if not downloads:
        return {}
    groups = _by_cell(downloads)
    names, shared = _names(groups)
    predicted = {CELLS.label(cell): cell["object_size"] / cell[PREDICTED] / 1e6
                 for cell in cells if cell.get(PREDICTED) and cell.get("object_size")}  # fmt: skip
    figures = {
        "throughput.png": _throughput(groups, names, shared, predicted),
        "concurrency.png": _concurrency(groups, names, shared),
        "seconds_cdf.png": _seconds_cdf(groups, names, shared),
    }
    figures["throughput_by_concurrency_ran_at.png"] = _ran_at(downloads, groups, names, shared,
                                                             fraction)
    timed = {label: [d for d in group if "timeline" in d] for label, group in groups.items()}
    if any(timed.values()):
        figures["timeline.png"] = _timelines({k: v for k, v in timed.items() if v}, names, shared)
    return {name: caption(fig, labels) for name, fig in figures.items()}


def _ran_at(downloads: list[dict], groups: dict[str, list[dict]], names: dict, shared: str, fraction: float):
    """Every download's throughput against the concurrency it ran at, over all the run's
    downloads (fanout.workloads.download.across_plots.ran_at_scatter)."""
    ran = dict(zip(map(id, downloads), concurrency.ran_at_of(downloads)))
    cells = []
    for label, group in groups.items():
        placed = [d for d in group if ran[id(d)] is not None]
        points = {"ran_at": [ran[id(d)] for d in placed], "mb_per_s": [d["bytes"] / d["seconds"] / 1e6 for d in placed]}
        cells.append((names[label], group[0].get("concurrency_limit") or 1, points))
    return ran_at_scatter(cells, fraction, shared)


def _by_cell(downloads: list[dict]) -> dict[str, list[dict]]:
    """Downloads per cell label, in the cells' numeric order."""
    groups: dict[tuple, list[dict]] = {}
    for d in downloads:
        groups.setdefault(CELLS.sort_key(d), []).append(d)
    return {CELLS.label(group[0]): group for _, group in sorted(groups.items())}


def _names(groups) -> tuple[dict[str, str], str]:
    """({cell label: the fields that vary between cells}, the fields every cell shares)."""
    keys = {label: CELLS.key(group[0]) for label, group in groups.items()}
    varying = CELLS.varying(list(keys.values())) or ("memory_size",)
    shared = tuple(name for name in CELLS.fields if name not in varying)
    first = next(iter(keys.values()))
    return {label: key.label(varying) for label, key in keys.items()}, first.label(shared) if shared else ""


def _title(fig, text: str, shared: str) -> None:
    """The title, and below it what every cell shares."""
    title(fig, text, *([f"every cell: {shared}"] if shared else []))


def _throughput(groups, names, shared, predicted: dict[str, float]):
    """A box per cell of its downloads' MB/s, and where a model ran the throughput of its median
    download (`predicted`: MB/s by cell label), so the answer's plot shows measured against model."""
    labels = [f"{wrap(names[label])}\nn={len(group)}" for label, group in groups.items()]
    rows = sum(max(0.7, lines(text) * LINE_INCHES + 0.2) for text in labels)
    fig, ax = plt.subplots(figsize=(WIDTH, 3.2 + rows), layout="constrained")
    values = [[d["bytes"] / d["seconds"] / 1e6 for d in group] for group in groups.values()]
    ax.boxplot(values, orientation="horizontal", tick_labels=labels, widths=0.6, showmeans=True, showfliers=False,
               meanprops={"marker": "^", "markerfacecolor": "white", "markeredgecolor": "black"})  # fmt: skip
    for row, v in enumerate(values, start=1):
        ax.scatter(v, [row] * len(v), s=10, alpha=0.4, color="tab:blue", zorder=3)
    for row, label in enumerate(groups, start=1):
        if label in predicted:
            ax.scatter([predicted[label]], [row], marker="X", s=90, color="tab:red", zorder=4,
                       label="the model's median download")  # fmt: skip
    ax.invert_yaxis()  # first cell on top, as in the tables
    ax.set_xlabel("Throughput per download (MB/s, decimal: 10^6 bytes/s)\n"
                  "box: quartiles, orange line: median, triangle: mean,\n"
                  "whiskers: 1.5 IQR, dots: downloads")  # fmt: skip
    top = ax.secondary_xaxis("top", functions=(lambda x: np.multiply(x, 8), lambda x: np.divide(x, 8)))
    top.set_xlabel("Mbit/s")
    _title(fig, "Throughput per download, by cell", shared)
    ax.grid(axis="x", alpha=0.3)
    if predicted:
        handles, labels = ax.get_legend_handles_labels()
        legend(fig, handles[:1], labels[:1])
    return fig


def _concurrency(groups, names, shared):
    """One panel per cell on a shared time axis: overlapping downloads against the target."""
    titles = {label: wrap(names[label], PANEL_TITLE_CHARS) for label in groups}
    panels = sum(1.6 + lines(text) * LINE_INCHES for text in titles.values())
    fig, axes = plt.subplots(len(groups), 1, sharex=True, squeeze=False, figsize=(WIDTH, 2.6 + panels),
                             layout="constrained")  # fmt: skip
    origin = min(d["start_ms"] for group in groups.values() for d in group)
    end = max(d["end_ms"] for group in groups.values() for d in group)
    factor, unit = time_unit([(end - origin) / 1000])
    at = lambda ms: (ms - origin) / 1000 * factor  # noqa: E731
    for ax, (label, group) in zip(axes[:, 0], groups.items()):
        intervals = [(d["start_ms"], d["end_ms"]) for d in group]
        steps = concurrency.steps(intervals)
        ax.step([at(t) for t, _ in steps], [n for _, n in steps], where="post", color="tab:blue",
                label="downloads running")  # fmt: skip
        target = group[0].get("concurrency_limit")
        if target:
            ax.axhline(target, **TARGET_STYLE, label="target (the concurrency limit)")
        low, high = concurrency.steady_window(intervals, target)
        ax.axvspan(at(low), at(high), color="tab:gray", alpha=0.12, label=concurrency.STEADY_LABEL)
        ax.set_ylim(0, max(target or 0, concurrency.peak(intervals)) * 1.15 + 0.5)  # the target never on the edge
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(titles[label], fontsize="medium", loc="left")
        ax.set_ylabel("at once")
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel(f"Time since the first download started ({unit})")
    _title(fig, "Downloads running at once, against the target", shared)
    legend(fig, *axes[0, 0].get_legend_handles_labels())
    return fig


def _seconds_cdf(groups, names, shared):
    fig, ax = plt.subplots(figsize=(WIDTH, height(4.8, names.values())), layout="constrained")
    factor, unit = time_unit([d["seconds"] for group in groups.values() for d in group])
    for label, group in groups.items():
        seconds = sorted(d["seconds"] * factor for d in group)
        fractions = [(i + 1) / len(seconds) for i in range(len(seconds))]
        ax.step(seconds, fractions, where="post", label=f"{names[label]} (n={len(seconds)})")
    ax.set_xlabel(f"Download time ({unit})")
    ax.set_ylabel("Fraction of downloads taking at most x")
    ax.set_ylim(0, 1.02)
    _title(fig, "CDF of download times", shared)
    ax.grid(alpha=0.3)
    legend(fig, *ax.get_legend_handles_labels())
    return fig


def _timelines(groups, names, shared):
    """Cumulative bytes against time since each download started: per cell the median download's
    curve and, over BAND_MIN_DOWNLOADS or more, the p10-p90 band, pointwise over the cell's
    downloads (a finished download keeps its total), so the burst and the knee where the rate
    falls to the sustained level show. (A p10-p90 band of 4 downloads is their extremes.)"""
    fig, ax = plt.subplots(figsize=(WIDTH, height(4.8, names.values())), layout="constrained")
    curves = {label: [timeline.cumulative(d) for d in group] for label, group in groups.items()}
    factor, unit = time_unit([times[-1] for found in curves.values() for times, _ in found])
    for label, group in groups.items():
        step = max(d["timeline_interval_ms"] for d in group) / 1000
        grid = np.arange(0, max(times[-1] for times, _ in curves[label]) + step, step)
        values = np.array([np.interp(grid, times, totals) for times, totals in curves[label]]) / 1e6
        low, median, high = np.percentile(values, [10, 50, 90], axis=0)
        (line,) = ax.plot(grid * factor, median, label=f"{names[label]} (n={len(group)})")
        if len(group) >= BAND_MIN_DOWNLOADS:
            ax.fill_between(grid * factor, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_xlabel(f"Time since the download started ({unit})")
    ax.set_ylabel("Bytes received (MB, decimal)")
    _title(fig, "Byte arrival per download, by cell", shared)
    ax.grid(alpha=0.3)
    legend(fig, *ax.get_legend_handles_labels(),
           title=f"line: median\nband: p10-p90 (cells of\n{BAND_MIN_DOWNLOADS} downloads or more)")
    return fig
