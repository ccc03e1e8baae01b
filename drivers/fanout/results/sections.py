"""A report as data: a title, the network label and blocks (tables, text, warnings, figures),
built once by a workload's report and drawn three ways: on the terminal
(fanout.results.terminal), as report.md (fanout.results.markdown) and as index.html
(fanout.results.page), so that a title or a figure cannot differ between them.

A block shows everywhere unless `only` names one medium: the terminal is 80 columns wide and
says some things in fewer words (or not at all: the plots), the files say them at length.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

TERMINAL = "terminal"  # the console
FILES = "files"  # report.md and index.html


@dataclass(frozen=True)
class Table:
    """A table: `rows` is a header row, then the values (formatted by fanout.results.tables.fmt).

    `note` goes under it on the terminal, `caption` above it in the files, `footnotes` below it
    in both. `labels`: how many leading columns label the rows (tables.label_count by default);
    `shared`: indexes of label columns whose one value a line above the tables states, which the
    terminal leaves out. `headed`: the files give it a heading of its title."""

    kind: ClassVar[str] = "table"
    title: str
    rows: list[list]
    note: str = ""
    caption: str = ""
    footnotes: tuple[str, ...] = ()
    labels: int | None = None
    shared: tuple[int, ...] = ()
    headed: bool = True
    only: str | None = None


@dataclass(frozen=True)
class Text:
    """A paragraph: plain on the terminal (in `style`: "bold"), Markdown in the files."""

    kind: ClassVar[str] = "text"
    text: str
    style: str = ""
    only: str | None = None


@dataclass(frozen=True)
class Heading:
    """A section heading of the files (the terminal titles its tables instead)."""

    kind: ClassVar[str] = "heading"
    text: str
    only: str | None = FILES


@dataclass(frozen=True)
class Warnings:
    """What makes the figures incomplete: the terminal prints them last, where they are seen;
    the files put them before the tables (a report builds one block for each)."""

    kind: ClassVar[str] = "warnings"
    items: tuple[str, ...]
    only: str | None = None


@dataclass(frozen=True)
class Figures:
    """The plots, as files in the report's folder."""

    kind: ClassVar[str] = "figures"
    images: tuple[Path, ...]
    title: str = "Plots"
    only: str | None = FILES


Block = Table | Text | Heading | Warnings | Figures


@dataclass(frozen=True)
class Report:
    """A report: `title` heads the files, `network` is how the figures were made (a simulated
    network's profile and scale, or measured on AWS), `blocks` in the order they show."""

    title: str
    network: str
    blocks: list[Block] = field(default_factory=list)

    def on(self, medium: str) -> list[Block]:
        """The blocks that show on `medium` (TERMINAL or FILES), in order."""
        return [block for block in self.blocks if block.only in (None, medium)]


def sentence(text: str) -> str:
    """A note as the files write it: its first letter a capital, followed by a full stop. (Only
    the first letter: str.capitalize would lower the rest, and MB/s would read mb/s, millibits.)"""
    return f"{text[:1].upper()}{text[1:]}."
