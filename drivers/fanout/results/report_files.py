"""A report's two files in its folder, from the same sections (fanout.results.sections):
report.md (fanout.results.markdown) and index.html (fanout.results.page)."""

from pathlib import Path

from fanout.results import markdown, page, run_folders as runs, sections

MARKDOWN_FILE = runs.MARKDOWN_FILE


def write(report: sections.Report, folder: Path) -> list[Path]:
    """report.md, then index.html (which links to the data files already there), each written
    atomically; returns their paths."""
    written = runs.write_text(folder / MARKDOWN_FILE, markdown.document(report))
    return [written, runs.write_text(folder / runs.PAGE_FILE, page.html(report, folder))]
