"""`python -m bench [NAME ...]`: run the named benchmark modules' `main()` (all of them, in name
order, when none is named; an argument may hold several names separated by spaces, as `make bench
BENCH="a b"` passes them); `python -m bench.NAME` runs one with its own options.

Every benchmark runs even when an earlier one fails; the run ends with one table of every figure
the benchmarks judged (bench._ratios.judge), its target and whether it met it. Exit status: 0 when
every target is met, 1 when a target was missed, 2 when a benchmark failed (raised, or judged no
figure): a run at a size too small to meet the targets (the suite's) still tells a broken one."""

import importlib
import pkgutil
import sys
import traceback

from rich.console import Console
from rich.table import Table

import bench
from bench import _ratios


def known() -> list[str]:
    """The benchmarks' names, in name order."""
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))


def run(name: str) -> tuple[list[_ratios.Figure], str | None]:
    """The figures benchmark `name` judged, and why it failed (None: it ran to its end)."""
    _ratios.take()
    try:
        importlib.import_module(f"bench.{name}").main()
    except Exception as exc:  # noqa: BLE001 - reported in the table; the next benchmark still runs
        traceback.print_exc()
        return _ratios.take(), f"{type(exc).__name__}: {exc}".splitlines()[0]
    figures = _ratios.take()
    return figures, None if figures else "judged no figure"


def table(results: dict[str, tuple[list[_ratios.Figure], str | None]]) -> Table:
    """One row per figure, and one per failed benchmark."""
    rows = Table(title="benchmarks: figures against their targets (ratios measured in the same run)")
    for column in ("benchmark", "figure", "value", "target", "result"):
        rows.add_column(column, justify="right" if column == "value" else "left")
    for name, (figures, failure) in results.items():
        for figure in figures:
            result = {True: "[green]met", False: "[red]MISSED", None: ""}[figure.met]
            rows.add_row(name, figure.name, f"{figure.value:.3g}", figure.target, result)
        if failure:
            rows.add_row(name, "", "", "", f"[red]FAILED: {failure}")
    return rows


def main(argv: list[str]) -> int:
    unknown = [name for name in argv if name not in known()]
    if unknown:
        sys.exit(f"unknown benchmark {unknown[0]!r}: choose from {', '.join(known())}")
    results = {}
    for name in argv or known():
        print(f"== bench.{name}", flush=True)
        results[name] = run(name)
    Console(width=160).print(table(results))
    if any(failure for _, failure in results.values()):
        return 2
    return 1 if any(figure.met is False for figures, _ in results.values() for figure in figures) else 0


if __name__ == "__main__":
    names = [name for argument in sys.argv[1:] for name in argument.split()]
    del sys.argv[1:]  # the names are ours: a module that parses options must not read them
    sys.exit(main(names))
