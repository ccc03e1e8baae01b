"""A report (fanout.results.sections) as report.md, in the page's order: the title, the network
and Lambda's limits, what every cell shares and the related reports, the answer, a list of the sections, then the
sections (a heading per table with its caption above and its footnotes below, tables as GitHub
Markdown by fanout.results.tables, plots as images beside the file with their captions)."""

from fanout.results import run_folders as runs, sections, tables


def document(report: sections.Report) -> str:
    """report.md's text: the title, the header, the answer, the contents, the details."""
    parts = [f"# {report.title}", f"**{report.network}**", *([f"**{report.limits}**"] if report.limits else [])]
    if report.header:
        parts.append("\n".join(f"- {line}" for line in report.header))
    if report.links:
        parts.append("See also: " + ", ".join(f"[{link.text}]({link.folder}/{runs.MARKDOWN_FILE})"
                                              for link in report.links))  # fmt: skip
    answer = report.opening(sections.FILES)
    if answer:
        parts.append(f"## {sections.ANSWER_TITLE}")
        for block in answer:
            parts += _parts(block)
    contents = report.contents()
    if contents:
        parts += [f"## {sections.CONTENTS_TITLE}", "\n".join(f"- [{title}](#{anchor})" for title, anchor in contents)]
    for block in report.details(sections.FILES):
        parts += _parts(block)
    return "\n\n".join(parts) + "\n"


def _parts(block: sections.Block) -> list[str]:
    match block:
        case sections.Table():
            heading = [f"## {block.title}"] if block.headed else []
            rows, _ = block.shown()
            return [*heading, *filter(None, [block.caption]), tables.markdown_table(rows), *block.footnotes]
        case sections.Text():
            return [f"**{block.text}**" if block.style == "bold" else block.text]
        case sections.Heading():
            return [f"## {block.text}"]
        case sections.Warnings():
            return [f"**Warning:** {warning}" for warning in block.items]
        case sections.Figures():
            heading = [f"## {block.title}"] if block.headed else []
            return [*heading, *(f"![{image.caption}]({image.path.name})\n\n*{image.caption}*" for image in block.images)]
    raise TypeError(f"not a report block: {block!r}")
