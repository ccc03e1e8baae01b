"""A report (fanout.results.sections) as index.html: one page a person opens, beside report.md,
that needs no network: the plots embedded as base64 PNG data URIs, the style inline, a
Content-Security-Policy that lets the page load nothing else.

Built with jinja2 from templates/report.html.j2 with autoescaping on, so that every value a
report carries (a tag, a strategy, an error message from the logs) reaches the page as text and
never as markup; only the report's paragraphs, which are Markdown, become HTML, through
markdown-it-py with raw HTML disabled (it escapes any in the text)."""

import base64
from pathlib import Path

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup

from fanout.results import sections, tables
DATA_FILES = (".csv", ".json", ".jsonl")  # the files beside the page that it links to
TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                               autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
MARKDOWN = MarkdownIt("commonmark", {"html": False})


def html(report: sections.Report, folder: Path) -> str:
    """The page of `report`, whose plots and data files are in `folder`."""
    links = sorted(path.name for path in folder.iterdir() if path.suffix in DATA_FILES) if folder.is_dir() else []
    return TEMPLATES.get_template("report.html.j2").render(
        report=report, blocks=report.on(sections.FILES), links=links, markdown=_markdown, cells=_cells,
        data_uri=_data_uri,
    )  # fmt: skip


def _markdown(text: str) -> Markup:
    """A paragraph of the report's Markdown as HTML (raw HTML in it escaped)."""
    return Markup(MARKDOWN.render(text))


def _cells(table: sections.Table) -> list[list[tuple[str, bool]]]:
    """The table's body as (text, is a figure) per cell: figures are right-aligned."""
    labels = tables.label_count(table.rows[0]) if table.labels is None else table.labels
    return [[(tables.fmt(value), i >= labels) for i, value in enumerate(row)] for row in table.rows[1:]]


def _data_uri(image: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(image.read_bytes()).decode("ascii")
