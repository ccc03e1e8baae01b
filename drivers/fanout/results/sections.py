"""A report as data: a title, the network label and blocks (tables, text, warnings, figures),
built once by a workload's report and drawn three ways: on the terminal
(fanout.results.terminal), as report.md (fanout.results.markdown) and as index.html
(fanout.results.page), so that a title or a figure cannot differ between them.

A block shows everywhere unless `only` names one medium: the terminal is 80 columns wide and
says some things in fewer words (or not at all: the plots), the files say them at length.

The files open with the answer (`Report.answer`: the figures that answer the run's question,
against the model's or the published ones, and the one plot that shows them), after what every
cell shares, said once (`Report.header`); then a list of the sections that follow (the details).
"""

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
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

    def shown(self) -> tuple[list[list], int | None]:
        """The rows less the `shared` label columns (stated once above the tables), and how
        many leading columns of those label the rows (None: tables.label_count decides)."""
        kept = [i for i in range(len(self.rows[0])) if i not in self.shared]
        labels = None if self.labels is None else self.labels - len(self.shared)
        return [[row[i] for i in kept] for row in self.rows], labels


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
class Image:
    """A plot, a file in the report's folder, and what it shows in a sentence: the page's alt
    text and caption (a file name says nothing to a reader who cannot see the plot)."""

    path: Path
    caption: str


@dataclass(frozen=True)
class Figures:
    """The plots; `headed`: the files give them a heading of `title` (the answer's one plot has
    none: its caption says what it is)."""

    kind: ClassVar[str] = "figures"
    images: tuple[Image, ...]
    title: str = "Plots"
    headed: bool = True
    only: str | None = FILES


def images(paths: Iterable[Path], captions: dict[str, str]) -> tuple[Image, ...]:
    """`paths` (plots written) with their captions, by file name (a plot module's CAPTIONS)."""
    return tuple(Image(path, captions[path.name]) for path in paths)


@dataclass(frozen=True)
class Link:
    """A related report (a run's sweep, a sweep's study or runs): `folder` relative to this
    report's; the page links to its index.html, report.md to its report.md."""

    text: str
    folder: str


def links(here: Path, pages: list[tuple[str, Path]]) -> tuple[Link, ...]:
    """Links from the report in folder `here` to the reports in `pages` (text, folder), other
    than itself."""
    return tuple(Link(text, os.path.relpath(folder, here)) for text, folder in pages if folder != here)


Block = Table | Text | Heading | Warnings | Figures


ANSWER_TITLE = "Summary"  # the files' heading of the answer
CONTENTS_TITLE = "Contents"  # and of the list of the sections after it


@dataclass(frozen=True)
class Report:
    """A report: `title` heads the files, `network` is how the figures were made (a simulated
    network's profile and scale, or measured on AWS), `limits` beside it how the local host held
    the environments to Lambda's limits (RunRecord.limits_label; "" on AWS), `blocks` in the
    order they show.

    `answer`: the blocks the files open with (the terminal shows those of its medium first too);
    `header`: what every cell shares, one line each, said once at the top of the files (their
    tables leave those columns out); `links`: related reports."""

    title: str
    network: str
    blocks: list[Block] = field(default_factory=list)
    answer: list[Block] = field(default_factory=list)
    header: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    limits: str = ""

    def on(self, medium: str) -> list[Block]:
        """The blocks that show on `medium` (TERMINAL or FILES), in order, the answer's first."""
        return [*self.opening(medium), *self.details(medium)]

    def opening(self, medium: str) -> list[Block]:
        return [block for block in self.answer if block.only in (None, medium)]

    def details(self, medium: str) -> list[Block]:
        return [block for block in self.blocks if block.only in (None, medium)]

    def contents(self) -> list[tuple[str, str]]:
        """(heading, anchor) of each section of the files' details, in order."""
        titles = [title for block in self.details(FILES) if (title := heading(block))]
        return list(zip(titles, anchors(titles)))


def on_only(blocks: list[Block], medium: str) -> list[Block]:
    """The blocks of `blocks` that show on `medium`, shown there only: a report whose answer
    opens the files keeps the same blocks where they stand on the terminal, after its first lines."""
    return [replace(block, only=medium) for block in blocks if block.only in (None, medium)]


def heading(block: Block) -> str | None:
    """The files' section heading a block opens with, if any."""
    match block:
        case Table() | Figures() if block.headed:
            return block.title
        case Heading():
            return block.text
    return None


def anchors(titles: list[str]) -> list[str]:
    """The anchor of each heading as GitHub writes it for Markdown (lower case, punctuation but
    hyphens dropped, spaces as hyphens, -1, -2... on repeats), so that one contents list serves
    report.md and index.html."""
    found: list[str] = []
    seen: dict[str, int] = {}
    for title in titles:
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.append(f"{slug}-{count}" if count else slug)
    return found


def sentence(text: str) -> str:
    """A note as the files write it: its first letter a capital, followed by a full stop. (Only
    the first letter: str.capitalize would lower the rest, and MB/s would read mb/s, millibits.)"""
    return f"{text[:1].upper()}{text[1:]}."
