"""The cross-run report's PNG plots: throughput against concurrency (one line per memory size),
a heatmap of median throughput over memory x concurrency, and download times per cell.

Every caption names the units and the network the figures were made under. Cells come in the
tables' order; a cell field that varies besides memory and concurrency (object size, strategy...)
gets its own lines (first plot) or its own panel (heatmap).
"""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402

from fanout.figures import WIDTH, save  # noqa: E402

MAIN_AXES = ("memory_size", "concurrency_limit")
UNIT = "MB/s, decimal: 10^6 bytes/s"


def draw(summary: dict, folder, label) -> list:
    """Write the plots of a cross-run summary into `folder`; returns their paths. `label(row,
    names)` names a cell by the given fields, as the tables do."""
    measured = [(row, sample) for row, sample in zip(summary["cells"], summary["samples"]) if row["n"]]
    if not measured:
        return []
    return [
        save(_throughput_vs_concurrency(summary, measured, label), folder / "throughput_vs_concurrency.png", summary["network"]),
        save(_heatmap(summary, measured, label), folder / "median_throughput_heatmap.png", summary["network"]),
        save(_seconds_by_cell(summary, measured, label), folder / "seconds_by_cell.png", summary["network"]),
    ]


def _others(summary: dict, row: dict, label, leave_out=("concurrency_limit",)) -> str:
    """The label of the varying fields other than `leave_out`."""
    names = [name for name in summary["varying"] if name not in leave_out]
    return label(row, names) if names else "all cells"


def _throughput_vs_concurrency(summary: dict, measured, label):
    fig, ax = plt.subplots(figsize=(WIDTH, 5), layout="constrained")
    lines: dict[str, list[dict]] = {}
    for row, _ in measured:
        lines.setdefault(_others(summary, row, label), []).append(row)
    for name, rows in lines.items():
        rows = sorted(rows, key=lambda r: r["concurrency_limit"])
        x = [r["concurrency_limit"] for r in rows]
        median = np.array([r["mb_per_s_p50"] for r in rows])
        (line,) = ax.plot(x, median, marker="o", label=name)
        ax.fill_between(x, [r["mb_per_s_p25"] for r in rows], [r["mb_per_s_p75"] for r in rows],
                        color=line.get_color(), alpha=0.18)  # fmt: skip
        low = [r["mb_per_s_p50_ci_low"] if r["mb_per_s_p50_ci_low"] is not None else m for r, m in zip(rows, median)]
        high = [r["mb_per_s_p50_ci_high"] if r["mb_per_s_p50_ci_high"] is not None else m for r, m in zip(rows, median)]
        ax.errorbar(x, median, yerr=[median - low, np.array(high) - median], fmt="none", ecolor=line.get_color(),
                    capsize=3)  # fmt: skip
    concurrencies = sorted({row["concurrency_limit"] for row, _ in measured})
    if concurrencies[-1] / concurrencies[0] > 10:
        ax.set_xscale("log")
    ax.set_xticks(concurrencies, [str(c) for c in concurrencies])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("Target concurrency (reserved concurrency = queue mapping maximum)")
    ax.set_ylabel(f"Throughput per download ({UNIT})")
    top = ax.secondary_yaxis("right", functions=(lambda y: y * 8, lambda y: y / 8))
    top.set_ylabel("Mbit/s")
    ax.set_title(f"Median throughput per download against concurrency\n{summary['network']}", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(loc="best", fontsize="small", title="line: median; band: p25-p75; bars: 95% CI of the median",
              title_fontsize="small")  # fmt: skip
    return fig


def _heatmap(summary: dict, measured, label):
    panels: dict[str, list[dict]] = {}
    for row, _ in measured:
        panels.setdefault(_others(summary, row, label, MAIN_AXES), []).append(row)
    columns = min(len(panels), 2)
    fig, axes = plt.subplots(math.ceil(len(panels) / columns), columns, squeeze=False, layout="constrained",
                             figsize=(WIDTH, 1.5 + 3.2 * math.ceil(len(panels) / columns)))  # fmt: skip
    medians = [row["mb_per_s_p50"] for row, _ in measured]
    low, high = min(medians), max(medians)  # one colour scale for every panel: comparable colours
    for ax, (title, rows) in zip(axes.flat, panels.items()):
        memories = sorted({r["memory_size"] for r in rows})
        limits = sorted({r["concurrency_limit"] for r in rows})
        grid = np.full((len(memories), len(limits)), np.nan)
        for r in rows:
            grid[memories.index(r["memory_size"]), limits.index(r["concurrency_limit"])] = r["mb_per_s_p50"]
        image = ax.imshow(grid, cmap="viridis", aspect="auto", origin="lower", vmin=low, vmax=high)
        for (i, j), value in np.ndenumerate(grid):
            if not np.isnan(value):
                dark = value < low + 0.6 * (high - low)
                ax.text(j, i, f"{value:#.3g}", ha="center", va="center", color="white" if dark else "black")
        ax.set_xticks(range(len(limits)), [str(c) for c in limits])
        ax.set_yticks(range(len(memories)), [str(m) for m in memories])
        ax.set_xlabel("Target concurrency")
        ax.set_ylabel("Memory (MB)")
        if len(panels) > 1:
            ax.set_title(title, fontsize="medium")
    fig.colorbar(image, ax=axes, label=f"median {UNIT}")
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(f"Median throughput per download ({UNIT})\n{summary['network']}", fontsize="medium")
    return fig


def _seconds_by_cell(summary: dict, measured, label):
    """Horizontal, one row per cell: labels stay readable however many cells there are."""
    fig, ax = plt.subplots(figsize=(WIDTH, 1.9 + 0.55 * len(measured)), layout="constrained")
    names = summary["varying"] or ["memory_size"]
    labels = [f"{label(row, names)} (n={row['n']})" for row, _ in measured]
    seconds = [sample["seconds"] for _, sample in measured]
    ax.violinplot(seconds, orientation="horizontal", showextrema=False)
    ax.boxplot(seconds, orientation="horizontal", tick_labels=labels, widths=0.2, showfliers=False,
               medianprops={"color": "black"})  # fmt: skip
    ax.invert_yaxis()  # first cell on top, as in the tables
    ax.set_xlabel("Download time (s, wall clock in the function)\n"
                  "violin: distribution; box: quartiles, black line: median, whiskers: 1.5 IQR")  # fmt: skip
    ax.set_xlim(left=0)
    ax.set_title(f"Download times per cell\n{summary['network']}", fontsize="medium")
    ax.grid(axis="x", alpha=0.3)
    return fig
