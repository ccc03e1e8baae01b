"""A report (fanout.results.sections) as index.html: one page a person opens, beside report.md,
that needs no network: the plots embedded as base64 PNG data URIs, the style inline, a
Content-Security-Policy that lets the page load nothing else.

Built with jinja2 from templates/report.html.j2 with autoescaping on, so that every value a
report carries (a tag, a strategy, an error message from the logs) reaches the page as text and
never as markup; only the report's paragraphs, which are Markdown, become HTML, through
markdown-it-py with raw HTML disabled (it escapes any in the text)."""

import base64
import re
from pathlib import Path

import jinja2
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from fanout.results import run_folders as runs, sections, tables

DATA_FILES = (".csv", ".json", ".jsonl")  # the files beside the page that it links to
TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                               autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)  # fmt: skip
MARKDOWN = MarkdownIt("commonmark", {"html": False})
FIGURE = re.compile(r"[-+]?[\d.]|-$")  # a table cell's text that is a number (or none: -)
# Past this many columns a table is set smaller to fit 1280 px: a study's published table with ours
# and the ratio beside each statistic has 18.
WIDE_COLUMNS = 12


def html(report: sections.Report, folder: Path) -> str:
    """The page of `report`, whose plots and data files are in `folder`: the header, the answer,
    the contents, the details (fanout.results.sections), as report.md orders them."""
    links = sorted(path.name for path in folder.iterdir() if path.suffix in DATA_FILES) if folder.is_dir() else []
    contents = iter(report.contents())
    details = [(block, next(contents)[1] if sections.heading(block) else None)
               for block in report.details(sections.FILES)]  # fmt: skip
    return TEMPLATES.get_template("report.html.j2").render(
        report=report, answer=report.opening(sections.FILES), details=details, contents=report.contents(),
        links=links, page_file=runs.PAGE_FILE, markdown=_markdown, cells=_cells, data_uri=_data_uri, breakable=_breakable,
        answer_title=sections.ANSWER_TITLE, contents_title=sections.CONTENTS_TITLE, WIDE_COLUMNS=WIDE_COLUMNS,
    )  # fmt: skip


def _markdown(text: str) -> Markup:
    """A paragraph of the report's Markdown as HTML (raw HTML in it escaped)."""
    return Markup(MARKDOWN.render(text))


def _cells(table: sections.Table) -> tuple[list[str], list[list[tuple[str, bool]]]]:
    """The table's header and body as (text, is a figure) per cell, less the columns the header
    states once: figures (a number, or text that starts as one: `42.5 (41.9-42.6)`, `-`) are
    right-aligned and break only between words (a figure and its interval), never inside a
    number; labels and other text (a verdict, its evidence) wrap."""
    rows, labels = table.shown()
    labels = tables.label_count(rows[0]) if labels is None else labels
    body = [[(text, i >= labels and bool(FIGURE.match(text))) for i, text in enumerate(map(tables.fmt, row))]
            for row in rows[1:]]  # fmt: skip
    return [str(name) for name in rows[0]], body


def _breakable(text: str) -> Markup:
    """A header as text (escaped) that may break after `_` and `/` (`concurrency_limit`,
    `measured/model`): a narrow column of numbers keeps its width, its header wraps."""
    return Markup(str(escape(text)).replace("_", "_<wbr>").replace("/", "/<wbr>"))


def _data_uri(image: sections.Image) -> str:
    return "data:image/png;base64," + base64.b64encode(image.path.read_bytes()).decode("ascii")
