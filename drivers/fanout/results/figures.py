"""What every report's PNG plots share, whatever the workload: width and resolution, the caption
that names the network the figures were made under (a simulation must never pass for an AWS
measurement) and Lambda's limits the local host held them to, the wrapping of long cell labels
and the unit of a time axis.

How the plots read and are laid out: docs/experiment.md, *report*. matplotlib with the Agg
backend: files only, no display needed (CI, SSH sessions).
"""

import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.artist import Artist  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.legend import Legend  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from fanout.results import run_folders as runs

DPI = 120
WIDTH = 9  # inches
LABEL_CHARS = 34  # a wrapped cell label's line: a third of the width at the default font size
LEGEND_CHARS = 30  # a legend entry's line: a third of the width at the legend's small font size
TITLE_CHARS = 62  # a title's line: left of the legend, which takes the right third
LINE_INCHES = 0.19  # the height of one line of text at the default font size, with its spacing
LEGEND_LINE_INCHES = 0.16  # the same at the legend's small font size
CAPTION_CHARS = 120  # a caption's line at its small font, the figure's width (fewer, to be safe)


def caption(fig: Figure, labels: list[str]) -> Figure:
    """Put the report's labels under the figure, one line each, wrapped to its width: the network
    label and Lambda's limits beside it (run_sections.labels); returns the figure. The figure
    grows by the lines after the network's, so that its axes keep their room."""
    added = sum(len(textwrap.wrap(label, CAPTION_CHARS)) for label in labels[1:])
    fig.set_figheight(fig.get_figheight() + added * LEGEND_LINE_INCHES)
    fig.supxlabel("\n".join(labels), x=0.01, ha="left", fontsize="small", style="italic", color="tab:red", wrap=True)
    return fig


def wrap(text: str, width: int = LABEL_CHARS) -> str:
    """A cell label broken into lines of at most `width` characters (a 64-character tag too), so
    that a strategy's parameters and a long tag never push the data off the figure. Lines break
    between words, never at a hyphen inside one (`tag=lambda-fanout-local` stays whole); only a
    word longer than a line is cut."""
    return "\n".join(textwrap.fill(line, width, break_on_hyphens=False) for line in str(text).splitlines())


def lines(text: str) -> int:
    """How many lines `text` takes (wrap() output: its line breaks)."""
    return str(text).count("\n") + 1


def title(fig: Figure, *parts: str) -> Text:
    """The figure's title, each part wrapped on lines of its own, from the left edge: the legend
    (legend()) and a centred title would both claim the top of the figure."""
    return fig.suptitle("\n".join(wrap(part, TITLE_CHARS) for part in parts), x=0.01, ha="left")


def legend(fig: Figure, handles: Sequence[Artist], labels: Iterable[str], title: str | None = None) -> Legend:
    """The figure's legend, its labels wrapped, to the right of the axes at the top: it covers
    no data, and the caption below stays clear."""
    return fig.legend(handles, [wrap(label, LEGEND_CHARS) for label in labels], loc="outside right upper",
                      fontsize="small", title=title, title_fontsize="small")  # fmt: skip


def height(inches: float, labels: Iterable[str]) -> float:
    """A figure's height: `inches`, or more when the legend of `labels` needs it."""
    legend_lines = sum(lines(wrap(label, LEGEND_CHARS)) + 0.4 for label in labels)  # 0.4: between entries
    return max(inches, 1.8 + legend_lines * LEGEND_LINE_INCHES)


def number(value: float) -> str:
    """Three significant digits written out (22200, 88.4, 0.512): a plot's reader compares
    magnitudes at a glance, which 2.22e+04 hides."""
    return f"{float(f'{value:.3g}'):g}"


def time_unit(seconds: Iterable[float]) -> tuple[float, str]:
    """(factor, unit) for a time axis: milliseconds when every value is below a second, where
    seconds would show only leading zeros, else seconds."""
    return (1000.0, "ms") if max(seconds, default=0) < 1 else (1.0, "s")


def save(fig: Figure, path: Path) -> Path:
    """Write the figure atomically (runs.replacing: the temporary name hides the format, hence
    given) and free it; returns the path."""
    try:
        with runs.replacing(path) as tmp:
            fig.savefig(tmp, dpi=DPI, format=path.suffix.lstrip("."))
    finally:
        plt.close(fig)
    return path
