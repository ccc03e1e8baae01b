"""A report (fanout.results.sections) drawn on a rich console: its tables laid out for the
console's width by fanout.results.tables, its text wrapped by rich, its warnings last.

The console is the caller's: the command that prints makes it, so that nothing here writes to
the screen on its own and a test can hand in a recording one."""

from rich.console import Console

from fanout.results import sections, tables


def show(report: sections.Report, console: Console) -> None:
    """Print the report's terminal blocks in order."""
    for block in report.on(sections.TERMINAL):
        match block:
            case sections.Table():
                _table(block, console)
            case sections.Text():
                console.print(block.text, style=block.style or None, markup=False, highlight=False)
            case sections.Warnings():
                for warning in block.items:
                    console.print(f"[bold red]WARNING:[/] {warning}", highlight=False)


def _table(table: sections.Table, console: Console) -> None:
    """The table less the label columns stated above it, with its note and footnotes under it."""
    rows, labels = table.shown()
    note = "\n  ".join(filter(None, [table.note, *table.footnotes]))
    tables.print_table(console, table.title, rows, note, labels)
