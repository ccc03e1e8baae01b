"""The blocks a workload's report of one run opens and closes with (fanout.results.sections):
which run, how its numbers were made, its units and what makes it incomplete, said alike by
every workload, and its answer (its headline tables and plot, which the files open with); the
tables between them are the workload's own."""

from collections.abc import Sequence

from pathlib import Path

from fanout.results import run_folders as runs, sweep_folders as sweeps
from fanout.results.run_record import RunRecord
from fanout.results.summary import Header
from fanout.results.sections import FILES, TERMINAL, Block, Figures, Heading, Image, Link, Text, Warnings, links, on_only

HOW_TITLE = "How the run was made"


def labels(network: str, limits: str | None) -> list[str]:
    """How a run's (or runs') figures were made, one line each: the `network` label, and beside it
    Lambda's `limits` as the local host held the environments to them (none on AWS, nor in a
    summary written before they were recorded)."""
    return [network, *filter(None, [limits])]


def opening(header: Header, workload: str, labels: Sequence[str], options: str, messages: str,
            units: str, percentiles: str) -> list[Block]:  # fmt: skip
    """The run and its labels (network, ...) in bold on the terminal; in the files, under a
    heading, a list of them, the stack and `options`, the `messages` counts, then the `units` and
    how the `percentiles` were computed (the warnings go with the answer there)."""
    run, stack = header.run, header.run.stack
    where = f"the {run.backend} backend, stack {stack.stack!r}"
    listed = [*(f"- **{label}**" for label in labels), f"- backend {run.backend}, stack {stack.stack!r}, "
              f"{stack.memory} MB; {options}", f"- messages: {messages}"]  # fmt: skip
    return [
        Text(f"run {run.run_id} ({workload}) on {where}", "bold", only=TERMINAL),
        *(Text(label, "bold", only=TERMINAL) for label in labels),
        Heading(HOW_TITLE),
        Text("\n".join(listed), only=FILES),
        Text(f"Units: {units}. Percentiles: {percentiles}.", only=FILES),
    ]


def closing(counts: str, found: Sequence[str], units: str, percentiles: str) -> list[Block]:
    """On the terminal the `counts`, the `units` and `percentiles` and the warnings `found` last,
    where they are seen."""
    return [
        Text(counts, only=TERMINAL),
        Text(f"units: {units}; percentiles: {percentiles}", only=TERMINAL),
        Warnings(tuple(found), only=TERMINAL),
    ]


def answer(main: Sequence[Block], images: Sequence[Image], found: Sequence[str]) -> list[Block]:
    """The files' answer: its plot (first, so that it is on the first screen however long the
    tables), the `main` blocks (the workload's headline tables) and the warnings `found`; the
    terminal shows `main` where it stands (sections.on_only)."""
    return [Figures(tuple(images), headed=False), *on_only(list(main), FILES), Warnings(tuple(found), only=FILES)]


def run_links(run: RunRecord) -> tuple[Link, ...]:
    """A sweep cell's run page links to its sweep's page and its study's (none for a run alone)."""
    if not run.sweep or not run.sweep.sweep_id:
        return ()
    return links(runs.run_dir(run.run_id), sweeps.related(run.sweep.sweep_id, run.parameters.experiment_tag or ""))


def across_links(run_ids: list[str], folder: Path | None) -> tuple[Link, ...]:
    """A page across runs (in `folder`; None: none drawn) links to each run's page and, when one
    sweep made them all, to that sweep's page and its study's."""
    if folder is None:
        return ()
    records = [runs.load(run_id) for run_id in run_ids]
    made = {(record.sweep.sweep_id if record.sweep else None, record.parameters.experiment_tag) for record in records}
    sweep_id, tag = made.pop() if len(made) == 1 else (None, None)
    pages = sweeps.related(sweep_id, tag or "") if sweep_id else []
    return links(Path(folder), [*pages, *((f"run {run_id}", runs.run_dir(run_id)) for run_id in run_ids)])
