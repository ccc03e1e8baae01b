"""The cross-run report's PNG plots: throughput against concurrency, the median-throughput
heatmap, download times per cell, and every download's throughput against the concurrency it
ran at: whether throughput depends on concurrency at all, and which downloads the ramp left
below the target.

What each shows and how it is laid out: docs/statistics.md, *Plots across runs*.
"""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from fanout.results import run_sections
from fanout.results.figures import LABEL_CHARS, LINE_INCHES, WIDTH, caption, height, legend, lines, number, save, title, wrap
from fanout.workloads.download import cell_stats
from fanout.workloads.download.across_summary import Across

MAIN_AXES = ("memory_size", "concurrency_limit")
AGGREGATE = "aggregate_gb_per_s"
CAPTIONS = {  # file name -> what the plot shows: the page's alt text and caption
    "throughput_vs_concurrency.png": "Against target concurrency: each cell's median throughput per download with "
                                     "its 95% CI and p25-p75 band (top), and the aggregate throughput of all its "
                                     "downloads over the steady window (bottom)",
    "by_variable.png": "Median throughput per download with its 95% CI against each swept variable other than "
                       "concurrency, a line per combination of the others",
    "median_throughput_heatmap.png": "Median throughput per download by memory and target concurrency",
    "seconds_by_cell.png": "Download times per cell: distribution, quartiles and median",
    "throughput_by_concurrency_ran_at.png": "Every download's throughput against the concurrency it ran at; dashed: "
                                            "each cell's at-target threshold",
}  # fmt: skip
ANSWER_ORDER = ("throughput_vs_concurrency.png", "by_variable.png", "seconds_by_cell.png")  # the first drawn answers
UNIT = "MB/s, decimal: 10^6 bytes/s"
PANEL_COLUMNS = 2
COLOUR_TICKS = 5  # the colour scale's ticks, its ends included
MEDIAN = cell_stats.column("mb_per_s", "p50")


def draw(summary: Across, folder, label) -> list:
    """Write the plots of a cross-run summary into `folder`; returns their paths. `label(row,
    names)` names a cell by the given fields, as the tables do."""
    return [save(fig, folder / name) for name, fig in build(summary, label).items()]


def build(summary: Across, label) -> dict[str, Figure]:
    """The figures of a cross-run summary by file name, captioned; none without a measured cell."""
    measured = [(row, sample) for row, sample in zip(summary.cells, summary.samples) if row["n"]]
    if not measured:
        return {}
    figures = {}
    if _values(measured, "concurrency_limit") > 1:
        figures["throughput_vs_concurrency.png"] = _throughput_vs_concurrency(summary, measured, label)
    if _swept(summary):
        figures["by_variable.png"] = _by_variable(summary, measured, label)
    if all(_values(measured, name) > 1 for name in MAIN_AXES):  # one row or column: the plots above say it
        figures["median_throughput_heatmap.png"] = _heatmap(summary, measured, label)
    figures["seconds_by_cell.png"] = _seconds_by_cell(summary, measured, label)
    figures["throughput_by_concurrency_ran_at.png"] = _ran_at_scatter(summary, label)
    return {name: caption(fig, run_sections.labels(summary.network, summary.limits)) for name, fig in figures.items()}


def answer_figure(images: tuple) -> tuple:
    """The one plot the page opens with (sections.Image): the first of ANSWER_ORDER drawn."""
    for name in ANSWER_ORDER:
        found = tuple(image for image in images if image.path.name == name)
        if found:
            return found
    return ()


def _values(measured, name: str) -> int:
    """How many values of field `name` the measured cells have."""
    return len({row[name] for row, _ in measured})


def _swept(summary: Across) -> list[str]:
    """The varying fields but concurrency (throughput_vs_concurrency.png has it) and the network."""
    return [name for name in summary.varying if name not in ("concurrency_limit", "network")]


def _others(summary: Across, row: dict, label, leave_out=("concurrency_limit",)) -> str:
    """The label of the varying fields other than `leave_out`."""
    names = [name for name in summary.varying if name not in leave_out]
    return label(row, names) if names else "all cells"


def _throughput_vs_concurrency(summary: Across, measured, label):
    """Per-download median (top) and aggregate throughput (bottom) against target concurrency,
    a line per combination of the other varying fields: whether the total keeps scaling."""
    lines_of: dict[str, list[dict]] = {}
    for row, _ in measured:
        lines_of.setdefault(_others(summary, row, label), []).append(row)
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(WIDTH, height(7.5, lines_of)), layout="constrained")
    for name, rows in lines_of.items():
        rows = sorted(rows, key=lambda r: r["concurrency_limit"])
        x = [r["concurrency_limit"] for r in rows]
        (line,) = top.plot(x, [r[MEDIAN] for r in rows], marker="o", label=name)
        _band_and_ci(top, x, rows, line.get_color())
        aggregate = [(c, r[AGGREGATE]) for c, r in zip(x, rows) if r.get(AGGREGATE) is not None]
        if aggregate:
            bottom.plot(*zip(*aggregate), marker="s", color=line.get_color())
    concurrencies = sorted({row["concurrency_limit"] for row, _ in measured})
    if concurrencies[-1] / concurrencies[0] > 10:
        bottom.set_xscale("log")
    bottom.set_xticks(concurrencies, [str(c) for c in concurrencies])
    bottom.minorticks_off()
    for ax in (top, bottom):
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    bottom.set_xlabel("Target concurrency (reserved concurrency = queue mapping maximum)")
    top.set_ylabel(f"Median throughput per download\n({UNIT})")
    right = top.secondary_yaxis("right", functions=(lambda y: np.multiply(y, 8), lambda y: np.divide(y, 8)))
    right.set_ylabel("Mbit/s")
    bottom.set_ylabel("Aggregate throughput\n(GB/s, decimal: 10^9 bytes/s,\nover the steady window)")
    title(fig, "Throughput per download and in aggregate against concurrency")
    handles, names = top.get_legend_handles_labels()
    legend(fig, handles, names, title="line: median\nband: p25-p75\nbars: 95% CI of the median")
    return fig


def _band_and_ci(ax, x, rows: list[dict], colour, band: bool = True) -> None:
    """The p25-p75 band (unless `band` is False) and the median's 95% CI bars of `rows` at `x`."""
    median = np.array([r[MEDIAN] for r in rows])
    if band:
        ax.fill_between(x, [r[cell_stats.column("mb_per_s", "p25")] for r in rows],
                        [r[cell_stats.column("mb_per_s", "p75")] for r in rows], color=colour, alpha=0.18)  # fmt: skip
    ci = [[r.get(cell_stats.ci_column("p50", end)) for end in cell_stats.CI_ENDS] for r in rows]
    low = [m if lo is None else lo for (lo, _), m in zip(ci, median)]
    high = [m if hi is None else hi for (_, hi), m in zip(ci, median)]
    ax.errorbar(x, median, yerr=[median - low, np.array(high) - median], fmt="none", ecolor=colour, capsize=3)


def _by_variable(summary: Across, measured, label):
    """One panel per swept variable (_swept): each cell's median with its 95% CI at its value of
    that variable (in the tables' order), a line per combination of the other varying fields,
    named in the panel's own legend beside it."""
    swept = _swept(summary)
    rows = [row for row, _ in measured]
    panels: dict[str, dict[str, list[dict]]] = {}
    for name in swept:
        panels[name] = {}
        for row in rows:
            panels[name].setdefault(_others(summary, row, label, (name,)), []).append(row)
    heights = [height(3.4, lines_of if len(lines_of) > 1 else ()) for lines_of in panels.values()]
    fig = plt.figure(figsize=(WIDTH, 0.8 + sum(heights)), layout="constrained")
    for panel, (name, lines_of) in zip(fig.subfigures(len(swept), 1, squeeze=False, height_ratios=heights).flat,
                                       panels.items()):  # fmt: skip
        ax = panel.subplots()
        values = list(dict.fromkeys(row[name] for row in rows))  # the cells' order: numbers numerically
        for line_name, members in lines_of.items():
            x = [values.index(row[name]) for row in members]
            (line,) = ax.plot(x, [row[MEDIAN] for row in members], marker="o", label=line_name)
            _band_and_ci(ax, x, members, line.get_color(), band=False)  # between categories a band means nothing
        ax.set_xticks(range(len(values)), [wrap(label({name: v}, [name]), LABEL_CHARS) for v in values])
        ax.set_xlim(-0.5, len(values) - 0.5)
        highs = [row.get(cell_stats.ci_column("p50", "high")) or row[MEDIAN] for row in rows]
        ax.set_ylim(0, max(highs) * 1.08)  # no dot on the frame
        ax.set_ylabel(f"Median per download\n({UNIT})")
        ax.grid(alpha=0.3)
        if len(lines_of) > 1:
            legend(panel, *ax.get_legend_handles_labels())
    title(fig, "Median throughput per download against each swept variable")
    return fig


def _heatmap(summary: Across, measured, label):
    """One panel per combination of the other varying fields, on one colour scale."""
    panels: dict[str, list[dict]] = {}
    for row, _ in measured:
        panels.setdefault(_others(summary, row, label, MAIN_AXES), []).append(row)
    columns = min(len(panels), PANEL_COLUMNS)
    titles = {name: wrap(name, LABEL_CHARS * PANEL_COLUMNS // columns) for name in panels}
    grid_rows = math.ceil(len(panels) / columns)
    title_lines = max(map(lines, titles.values())) if len(panels) > 1 else 0
    fig, axes = plt.subplots(grid_rows, columns, squeeze=False, layout="constrained",
                             figsize=(WIDTH, 1.8 + grid_rows * (3.2 + title_lines * LINE_INCHES)))  # fmt: skip
    medians = [row[MEDIAN] for row, _ in measured]
    low, high = min(medians), max(medians)  # one colour scale for every panel: comparable colours
    for ax, (name, rows) in zip(axes.flat, panels.items()):
        image = _panel(ax, rows, low, high)
        if len(panels) > 1:
            ax.set_title(titles[name], fontsize="medium")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    scale = fig.colorbar(image, ax=axes, label=f"median throughput per download\n({UNIT})\n"
                                               f"scale from {number(low)} to {number(high)} MB/s")  # fmt: skip
    scale.set_ticks(np.linspace(low, high, COLOUR_TICKS).tolist() if high > low else [low])
    scale.ax.yaxis.set_major_formatter(lambda value, _: number(value))
    title(fig, f"Median throughput per download ({UNIT})")
    return fig


def _panel(ax, rows: list[dict], low: float, high: float):
    """Memory x concurrency of one panel, each cell's median written in it; returns the image."""
    memories = sorted({r["memory_size"] for r in rows})
    limits = sorted({r["concurrency_limit"] for r in rows})
    grid = np.full((len(memories), len(limits)), np.nan)
    for r in rows:
        grid[memories.index(r["memory_size"]), limits.index(r["concurrency_limit"])] = r[MEDIAN]
    image = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower", vmin=low, vmax=high)
    for (i, j), value in np.ndenumerate(grid):
        if not np.isnan(value):
            dark = value < low + 0.6 * (high - low)
            ax.text(j, i, number(value), ha="center", va="center", fontsize="small",
                    color="white" if dark else "black")  # fmt: skip
    ax.set_xticks(range(len(limits)), [str(c) for c in limits])
    ax.set_yticks(range(len(memories)), [str(m) for m in memories])
    ax.set_xlabel("Target concurrency")
    ax.set_ylabel("Memory (MB)")
    return image


def _seconds_by_cell(summary: Across, measured, label):
    """Horizontal, one row per cell: labels stay readable however many cells there are."""
    names = summary.varying or ["memory_size"]
    labels = [f"{wrap(label(row, names))}\n(n={row['n']})" for row, _ in measured]
    height = sum(max(0.6, lines(text) * LINE_INCHES + 0.2) for text in labels)
    fig, ax = plt.subplots(figsize=(WIDTH, 2.8 + height), layout="constrained")
    seconds = [sample["seconds"] for _, sample in measured]  # in seconds, as the tables: never ms
    ax.violinplot(seconds, orientation="horizontal", showextrema=False)
    ax.boxplot(seconds, orientation="horizontal", tick_labels=labels, widths=0.2, showfliers=False,
               medianprops={"color": "black"})  # fmt: skip
    ax.invert_yaxis()  # first cell on top, as in the tables
    ax.set_xlabel("Download time (s, wall clock in the function)\n"
                  "violin: distribution; box: quartiles, black line: median,\nwhiskers: 1.5 IQR")  # fmt: skip
    ax.set_xlim(left=0)
    title(fig, "Download times per cell")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _ran_at_scatter(summary: Across, label):
    names = summary.varying or ["memory_size"]
    return ran_at_scatter([(label(row, names), row["target"], points) for row, points in zip(summary.cells, summary.ran_at)],
                          summary.at_target)  # fmt: skip


def ran_at_scatter(cells: list[tuple[str, int, dict]], fraction: float, shared: str = ""):
    """A point per download at (concurrency it ran at, MB/s), a colour per cell (label, target,
    {"ran_at": [...], "mb_per_s": [...]}), and a dashed mark at each cell's at-target threshold;
    the report of one run draws it too, with the line its other plots have of what every cell
    shares (`shared`)."""
    cells = [cell for cell in cells if cell[2]["ran_at"]]
    fig, ax = plt.subplots(figsize=(WIDTH, height(5, [name for name, _, _ in cells])), layout="constrained")
    for name, target, points in cells:
        dots = ax.scatter(points["ran_at"], points["mb_per_s"], s=8, alpha=0.5, label=name)
        ax.axvline(fraction * target, color=dots.get_facecolor()[0], alpha=0.8, linestyle="--")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("Concurrency each download ran at (mean number of the run's downloads over its interval)")
    ax.set_ylabel(f"Throughput per download\n({UNIT})")
    title(fig, "Throughput against the concurrency each download ran at", *([f"every cell: {shared}"] if shared else []))
    ax.grid(alpha=0.3)
    legend(fig, *ax.get_legend_handles_labels(),
           title=f"dashed: {fraction:.0%} of the target;\nthe tables keep the points right of it")
    return fig
