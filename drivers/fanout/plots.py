"""The report's PNG plots: throughput per cell, concurrency over time, CDF of download times.

matplotlib with the Agg backend: files only, no display needed (CI, SSH sessions).
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import MaxNLocator  # noqa: E402

from fanout import concurrency  # noqa: E402

DPI = 120


def draw(summary: dict, folder) -> list:
    """Write the plots of a report summary into `folder`; returns their paths."""
    downloads = [r for r in summary["records"] if r.get("event") == "download"]
    if not downloads:
        return []
    groups = _by_cell(downloads)
    return [
        _save(_throughput(groups), folder / "throughput.png"),
        _save(_concurrency(groups, summary["steady_definition"]), folder / "concurrency.png"),
        _save(_seconds_cdf(groups), folder / "seconds_cdf.png"),
    ]


def _by_cell(downloads: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for d in downloads:
        label = f"{d.get('memory_size')} MB, limit {d.get('concurrency_limit')}, {d.get('mode')}, {d.get('experiment_tag')}"
        groups.setdefault(label, []).append(d)
    return dict(sorted(groups.items()))


def _throughput(groups):
    fig, ax = plt.subplots(figsize=(9, 2.8 + 0.8 * len(groups)))
    values = [[d["bytes"] / d["seconds"] / 1e6 for d in group] for group in groups.values()]
    ax.boxplot(values, orientation="horizontal", tick_labels=[f"{label}\n(n={len(v)})" for label, v in zip(groups, values)],
               showmeans=True, showfliers=False, meanprops={"marker": "^", "markerfacecolor": "white", "markeredgecolor": "black"})
    for row, v in enumerate(values, start=1):
        ax.scatter(v, [row] * len(v), s=10, alpha=0.4, color="tab:blue", zorder=3)
    ax.set_xlabel("Throughput per download (MB/s, decimal: 10^6 bytes/s)\n"
                  "box: quartiles, orange line: median, triangle: mean, whiskers: 1.5 IQR, dots: downloads",
                  fontsize="medium")
    top = ax.secondary_xaxis("top", functions=(lambda x: x * 8, lambda x: x / 8))
    top.set_xlabel("Mbit/s")
    ax.set_title("Throughput per download, by cell")
    ax.grid(axis="x", alpha=0.3)
    return fig


def _concurrency(groups, steady_definition: str):
    fig, ax = plt.subplots(figsize=(9, 4.5))
    origin = min(d["start_ms"] for group in groups.values() for d in group)
    for i, (label, group) in enumerate(groups.items()):
        color = f"C{i}"
        intervals = [(d["start_ms"], d["end_ms"]) for d in group]
        steps = concurrency.steps(intervals)
        ax.step([(t - origin) / 1000 for t, _ in steps], [n for _, n in steps], where="post", color=color,
                label=f"overlapping downloads: {label}")
        target = group[0].get("concurrency_limit")
        if target:
            ax.axhline(target, color=color, linestyle="--", linewidth=1, label=f"target (concurrency limit) {target}")
        low, high = concurrency.steady_window(intervals)
        ax.axvspan((low - origin) / 1000, (high - origin) / 1000, color=color, alpha=0.08,
                   label=f"steady part ({steady_definition.split(' from')[0]})")
    ax.set_xlabel("Time since the first download started (s)")
    ax.set_ylabel("Downloads running at once")
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Concurrency over time")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2 if len(groups) > 1 else 3, fontsize="small")
    return fig


def _seconds_cdf(groups):
    fig, ax = plt.subplots(figsize=(8, 4.5))
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


def _save(fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path
