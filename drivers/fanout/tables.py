"""Tables as the reports print and write them: rows (a header row, then values) to a rich table
on the console or to Markdown, numbers formatted alike in both.

Every report uses these (one run's, a latency run's, across runs, compare), so a figure looks
the same wherever it appears. rich draws the console tables; what it does not do is keep a
figure from being clipped or wrapped and format numbers to a fixed precision, hence the few
lines here.
"""

from rich import box
from rich.console import Console
from rich.table import Table

from fanout import cells

console = Console()


def fmt(value) -> str:
    """Numbers to about four significant digits, so that tables stay narrow."""
    if isinstance(value, float):
        magnitude = abs(value)
        decimals = 0 if magnitude >= 100 else 1 if magnitude >= 10 else 2 if magnitude >= 1 else 3
        return f"{value:.{decimals}f}"
    return "-" if value is None else str(value)


def rich_table(title: str, rows: list[list]) -> Table:
    """Columns never wrap or shrink: a clipped figure reads as a different figure."""
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    body = [list(map(fmt, row)) for row in rows[1:]]
    for i, name in enumerate(rows[0]):
        width = max(len(str(name)), *(len(row[i]) for row in body)) if body else len(str(name))
        justify = "left" if name in cells.titles() else "right"
        table.add_column(str(name), justify=justify, no_wrap=True, min_width=width)
    for row in body:
        table.add_row(*row)
    return table


def print_table(table: Table, note: str = "") -> None:
    """Print at full width even on a narrow terminal (where long rows then wrap whole), then
    the note (units, definitions) as text: as a caption it would wrap at the table's width."""
    needed = console.measure(table, options=console.options.update(width=10_000)).maximum
    console.print(table, width=max(console.width, needed), crop=False)
    if note:
        console.print(f"  {note}", style="dim", highlight=False)


def markdown_table(rows: list[list]) -> str:
    lines = ["| " + " | ".join(map(str, rows[0])) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(map(fmt, row)) + " |" for row in rows[1:]]
    return "\n".join(lines)
