"""Tables as the reports print and write them: rows to rich tables on the console or to Markdown,
numbers formatted alike in both.

A console table never clips, wraps or drops a figure; one too wide is split or numbered
(docs/statistics.md, *Console tables*). rich draws and measures the tables; choosing between
those layouts and formatting numbers to a fixed precision is what it does not do, hence the
lines here.
"""

from collections.abc import Iterable, Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from fanout.results import cells

ROW_NUMBER = "row"  # the header of the row numbers that stand in for long labels
KEY_TITLE = "Row key"  # the title of the table of what each row number stands for


class Exact(float):
    """A number shown as it was written (a published figure, transcribed), never rounded."""


def fmt(value: object) -> str:
    """Numbers to about four significant digits, so that tables stay narrow; Exact ones whole."""
    if isinstance(value, Exact):
        return f"{float(value):g}"
    if isinstance(value, float):
        magnitude = abs(value)
        decimals = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
        return f"{value:.{decimals}f}"
    return "-" if value is None else str(value)


def label_count(header: list) -> int:
    """How many leading columns label the rows: by default those titled as a cell field."""
    titles = cells.titles()
    return next((i for i, name in enumerate(header) if str(name) not in titles), len(header))


def print_table(console: Console, title: str, rows: list[list], note: str = "", labels: int | None = None) -> None:
    """Print `rows` on `console` as laid out for its width, then the note (units, definitions)
    as text: as a caption it would wrap at the table's width. `labels`: how many leading columns
    label the rows (label_count by default)."""
    for part_title, part in layout(console, title, rows, label_count(rows[0]) if labels is None else labels):
        console.print(part_title, style="table.title", markup=False, highlight=False)  # a table's wraps at its width
        needed = _width(console, part)  # wider than the console only when one column alone is
        console.print(part, width=max(console.width, needed), crop=False)
    if note:
        console.print(f"  {note}", style="dim", highlight=False)


def layout(console: Console, title: str, rows: list[list], labels: int) -> list[tuple[str, Table]]:
    """The tables that show `rows` within the console's width, each with its title.

    The whole table when it fits; else the figure columns split over the fewest tables that
    each fit beside the row labels, or beside row numbers when that takes fewer tables: the
    labels then follow in a key table (row number and labels, laid out the same way)."""
    header, body = [str(name) for name in rows[0]], [[fmt(value) for value in row] for row in rows[1:]]
    figures = range(labels, len(header))
    labelled = _parts(console, title, header, body, range(labels), figures, labels)
    if labels == 0 or not body:
        return labelled
    header, body = [ROW_NUMBER, *header], [[str(i), *row] for i, row in enumerate(body, start=1)]  # column i is i + 1
    numbered = _parts(console, title, header, body, [0], [i + 1 for i in figures], labels + 1)
    if _fits(console, labelled) and (len(labelled) <= len(numbered) or not _fits(console, numbered)):
        return labelled
    return numbered + _parts(console, KEY_TITLE, header, body, [0], range(1, labels + 1), labels + 1)


def _parts(console: Console, title: str, header: list[str], body: list[list[str]],
           keep: Sequence[int], spread: Iterable[int], left: int) -> list[tuple[str, Table]]:
    """The columns `spread` over as few tables as fit the console's width, each beside the columns `keep`
    (greedily, in order); a column too wide to fit even alone gets a table of its own."""
    groups: list[list[int]] = [[]]
    for column in spread:
        trial = groups[-1] + [column]
        if groups[-1] and _width(console, _table(header, body, [*keep, *trial], left)) > console.width:
            groups.append([column])
        else:
            groups[-1] = trial
    named = [f"{title} ({i} of {len(groups)})" if len(groups) > 1 else title for i in range(1, len(groups) + 1)]
    return [(name, _table(header, body, [*keep, *group], left)) for name, group in zip(named, groups)]


def _table(header: list[str], body: list[list[str]], columns: list[int], left: int) -> Table:
    """Columns never wrap or shrink; the first `left` (labels) are left-aligned, figures
    right-aligned; two spaces between columns (collapsed padding), so that more of them fit."""
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for i in columns:
        cell_width = max(len(header[i]), *(len(row[i]) for row in body)) if body else len(header[i])
        table.add_column(header[i], justify="left" if i < left else "right", no_wrap=True, min_width=cell_width)
    for row in body:
        table.add_row(*(row[i] for i in columns))
    return table


def _width(console: Console, table: Table) -> int:
    return console.measure(table, options=console.options.update(width=10_000)).maximum


def _fits(console: Console, parts: list[tuple[str, Table]]) -> bool:
    return all(_width(console, part) <= console.width for _, part in parts)


def markdown_table(rows: list[list]) -> str:
    lines = ["| " + " | ".join(map(str, rows[0])) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(map(fmt, row)) + " |" for row in rows[1:]]
    return "\n".join(lines)
