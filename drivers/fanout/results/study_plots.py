"""A study's plot: our figures against the published ones, per row of the published table's shape
(fanout.results.study_tables.points): a colour per statistic, ours a dot with its 95% interval,
the source's a hollow diamond beside it, so that a reader sees at a glance where they agree.

matplotlib with the Agg backend (fanout.results.figures): files only.
"""

from collections.abc import Callable
from pathlib import Path

from matplotlib.figure import Figure

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402

from fanout.results import study_tables  # noqa: E402
from fanout.results.figures import WIDTH, caption, legend, save, title, wrap  # noqa: E402

SPAN = 0.7  # the share of a row's slot its statistics spread over
LOG_RATIO = 30  # a y range wider than this ratio is drawn on a log scale
UPRIGHT_ROWS = 6  # more rows than this (the fan-out study's 12 published beside a rehearsal's 4) turn their labels
CHAR_INCHES = 0.09  # the height of a character of a turned label, at the tick labels' size


def file_name(index: int) -> str:
    """The plot of a study's `index`-th published table."""
    return "ours_vs_published.png" if index == 0 else f"ours_vs_published_{index + 1}.png"


def caption_text(reference: study_tables.Reference) -> str:
    """What the plot shows, in a sentence: the page's alt text and caption."""
    published = "against the published figures (hollow diamonds)" if reference.figures else (
        "alone: the source's figures are not transcribed")  # fmt: skip
    return (f"{reference.table}: our {', '.join(reference.statistics)} per row with 95% intervals (dots and bars), "
            f"{published}")  # fmt: skip


def draw(reference: study_tables.Reference, found: list[study_tables.Point], labels: list[str], path: Path,
         label: Callable[[tuple], str]) -> Path:  # fmt: skip
    """Write the plot of `found` (points of `reference`) to `path`, each row named by
    `label(key)`; returns it."""
    return save(figure(reference, found, labels, label), path)


def figure(reference: study_tables.Reference, found: list[study_tables.Point], labels: list[str],
           label: Callable[[tuple], str]) -> Figure:  # fmt: skip
    """The plot of `found` (points of `reference`), each row named by `label(key)`, captioned
    with the runs' `labels` (network, limits)."""
    keys = list(dict.fromkeys(point.key for point in found))
    statistics = [name for name in reference.statistics if name != "n"]
    turned = len(keys) > UPRIGHT_ROWS  # too many for wrapped labels side by side: one vertical line each
    below = CHAR_INCHES * max(len(label(key)) for key in keys) if turned else 0.15 * len(reference.rows)
    fig, ax = plt.subplots(figsize=(WIDTH, 4.8 + below), layout="constrained")  # the labels' room added
    step = SPAN / max(len(statistics), 1)
    drawn = []
    for i, name in enumerate(statistics):
        colour = f"C{i}"
        at = {point.key: point for point in found if point.statistic == name}
        x = np.arange(len(keys)) - SPAN / 2 + step * (i + 0.5)
        ours = [at[key].ours for key in keys]
        low, high = zip(*(_reach(at[key]) for key in keys))
        ax.errorbar(x, _nan(ours), yerr=[low, high], fmt="o", color=colour, capsize=3, label=f"ours {name}")
        drawn += [o for o in ours if o is not None]
        theirs = [at[key].published for key in keys]
        if any(v is not None for v in theirs):
            ax.scatter(x, _nan(theirs), marker="D", facecolors="none", edgecolors=colour, s=60,
                       label=f"published {name}")  # fmt: skip
            drawn += [v for v in theirs if v is not None]
    positive = [v for v in drawn if v > 0]
    if positive and max(positive) / min(positive) > LOG_RATIO:
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    if turned:
        ax.set_xticks(range(len(keys)), [label(key) for key in keys], rotation=90)
    else:
        ax.set_xticks(range(len(keys)), [wrap(label(key), 24) for key in keys])
    ax.set_xlim(-0.5, len(keys) - 0.5)
    ax.set_ylabel(study_tables.axis_label(reference))
    ax.grid(axis="y", alpha=0.3)
    title(fig, reference.table, "ours: dots with 95% intervals" + (", published: hollow diamonds" if reference.figures
                                                                   else "; no published figures transcribed"))
    legend(fig, *ax.get_legend_handles_labels())
    return caption(fig, labels)


def _reach(point: study_tables.Point) -> tuple[float, float]:
    """How far a point's interval reaches below and above our figure (none without one)."""
    if point.interval is None or point.ours is None:
        return 0.0, 0.0
    return point.ours - point.interval[0], point.interval[1] - point.ours


def _nan(values: list) -> list[float]:
    return [np.nan if v is None else v for v in values]

