"""The blocks a workload's report of one run opens and closes with (fanout.results.sections):
which run, how its numbers were made, its units and what makes it incomplete, said alike by
every workload; the tables between them are the workload's own."""

from collections.abc import Sequence

from fanout.results.sections import FILES, TERMINAL, Block, Figures, Text, Warnings


def opening(summary: dict, workload: str, labels: Sequence[str], options: str, messages: str,
            found: Sequence[str]) -> list[Block]:  # fmt: skip
    """The run and its labels (network, ...) in bold on the terminal; in the files a list of them,
    the stack and `options`, the `messages` counts, then the units and the warnings `found`."""
    run, stack = summary["run"], summary["run"]["stack"]
    where = f"the {run['backend']} backend, stack {stack['stack']!r}"
    listed = [*(f"- **{label}**" for label in labels), f"- backend {run['backend']}, stack {stack['stack']!r}, "
              f"{stack['memory']} MB; {options}", f"- messages: {messages}"]  # fmt: skip
    return [
        Text(f"run {run['run_id']} ({workload}) on {where}", "bold", only=TERMINAL),
        *(Text(label, "bold", only=TERMINAL) for label in labels),
        Text("\n".join(listed), only=FILES),
        Text(f"Units: {summary['units']}. Percentiles: {summary['percentiles']}.", only=FILES),
        Warnings(tuple(found), only=FILES),
    ]


def closing(summary: dict, counts: str, found: Sequence[str], images: Sequence) -> list[Block]:
    """On the terminal the `counts`, the units and the warnings `found` last, where they are seen;
    in the files the plots."""
    return [
        Text(counts, only=TERMINAL),
        Text(f"units: {summary['units']}; percentiles: {summary['percentiles']}", only=TERMINAL),
        Warnings(tuple(found), only=TERMINAL),
        Figures(tuple(images)),
    ]
