"""A report (fanout.results.sections) as report.md: a heading per table with its caption above
and its footnotes below, tables as GitHub Markdown (fanout.results.tables), plots as images
beside the file."""

from fanout.results import sections, tables


def document(report: sections.Report) -> str:
    """report.md's text: the title, then each block of the files as paragraphs."""
    parts = [f"# {report.title}"]
    for block in report.on(sections.FILES):
        parts += _parts(block)
    return "\n\n".join(parts) + "\n"


def _parts(block: sections.Block) -> list[str]:
    match block:
        case sections.Table():
            heading = [f"## {block.title}"] if block.headed else []
            return [*heading, *filter(None, [block.caption]), tables.markdown_table(block.rows), *block.footnotes]
        case sections.Text():
            return [f"**{block.text}**" if block.style == "bold" else block.text]
        case sections.Heading():
            return [f"## {block.text}"]
        case sections.Warnings():
            return [f"**Warning:** {warning}" for warning in block.items]
        case sections.Figures():
            return [f"## {block.title}", *(f"![{image.stem}]({image.name})" for image in block.images)]
    raise TypeError(f"not a report block: {block!r}")
