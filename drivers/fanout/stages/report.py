"""`fanout report`: which run, runs or sweep to report, and the workload driver that reports them.

One run comes from its saved report when it has one, or from the logs (`--refresh`, or a run
never reported); several runs or a sweep go to their one workload's `report_across`. Nothing here
knows what a workload measures: drivers build sections, and only `run`, the command, prints.
Details: docs/experiment.md, *report* (saved reports).
"""

import argparse
import functools
import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console

from fanout.results import run_folders as runs, run_record, sections, summary as summaries, sweep_folders as sweeps, terminal
from fanout.results.summary import RunSummary
from fanout.common import paths
from fanout.local import backends
from fanout.stages import command_line
from fanout.workloads import registry as workloads
from fanout.workloads.base import AcrossSummary
from fanout.cloud import stack as stacks
from fanout.cloud.stack import Stack
from fanout.common.errors import FanoutError, UsageError

SWEEP_PREFIX = "sweep:"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("report", help="tables, CSV/JSON and plots of a run under results/")
    command_line.stack_arguments(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--run", default=runs.LATEST, help="run id, or 'latest' (default)")
    which.add_argument("--runs", help="comma-separated run ids (or sweep:<id|latest>): one report across them")
    which.add_argument("--sweep", help="sweep id or 'latest': the report across its runs, beside its manifest")
    parser.add_argument("--refresh", action="store_true",
                        help="read the run's logs again instead of its saved records (refused if they hold fewer)")
    add_report_arguments(parser)
    parser.set_defaults(func=run)


def add_report_arguments(parser: argparse.ArgumentParser) -> None:
    """Every workload's report flags (report and compare take them)."""
    for driver in workloads.DRIVERS.values():
        driver.add_report_arguments(parser)


def run(args: argparse.Namespace) -> int:
    console = Console()
    given = command_line.texts(args)  # the workload's report flags among them: its driver's report_options
    if args.runs is not None:
        run_ids = resolve_all(args.runs)
        terminal.show(report_runs(run_ids, workload_of(run_ids).report_options(given)), console)
        return 0
    if args.sweep is not None:
        manifest = sweeps.load(args.sweep)
        terminal.show(report_sweep(manifest, workload_of(sweep_runs(manifest)).report_options(given)), console)
        return 0
    record = runs.load(args.run)
    options = workloads.get(record.parameters.workload).report_options(given)
    stack = functools.partial(stacks.acted_on, backends.get(args.backend), args.stack, workloads.stack_fields)  # looked up if needed
    summary = saved_or_fetched(record, args.refresh, stack, say=lambda line: console.print(line, highlight=False))
    summary.body = replace(summary.body, **options)  # none given: the saved report's own, redrawn byte for byte
    terminal.show(sections_of(summary), console)
    written = render(summary)
    console.print(f"wrote {', '.join(path.name for path in written)}", highlight=False)
    console.print(f"  to {runs.run_dir(record.run_id)}", highlight=False)
    return 0


def saved_or_fetched(record: run_record.RunRecord, refresh: bool, stack: Callable[[], Stack],
                     say: Callable[[str], object]) -> RunSummary[Any]:
    """The run's saved report summary (saying so with `say`); from its logs (on `stack()`, the
    stack the command names, looked up only then) with `refresh` (--refresh), when it has none,
    or when it was made before every sent message had an outcome (an incomplete report is never
    reused)."""
    saved = None if refresh else load_saved(record)
    if saved is not None and (missing := summaries.unaccounted(saved.header)):
        say(f"run {record.run_id}: its saved report is incomplete ({missing} sent messages without an outcome "
            f"when it was made): reading the logs again")  # fmt: skip
    elif saved is not None:
        say(f"run {record.run_id}: its saved report ({len(saved.header.records)} records), logs not read; "
            f"{runs.refresh_hint(record.run_id)} reads them again")  # fmt: skip
        return saved
    deployed = stack()
    runs.check_same_stack(record, deployed)
    return fetch(deployed, record)


def load_saved(record: run_record.RunRecord) -> RunSummary[Any] | None:
    """The run's saved report summary (summary.json read by its workload's summary body), None
    when it has none."""
    return summaries.load(record.run_id, workloads.get(record.parameters.workload).summary_body())


def fetch(stack: Stack, record: run_record.RunRecord) -> RunSummary[Any]:
    """The run's report summary from its logs, as the saved files will give it back. Refused
    (FanoutError, before anything is written) when it holds fewer records than the run's saved
    report: a report never loses records it once found."""
    summary = summaries.as_saved(workloads.get(record.parameters.workload).build_report(stack, record))
    saved, fetched = runs.saved_record_count(record.run_id), len(summary.header.records)
    if saved is not None and fetched < saved:
        raise FanoutError(f"refusing to replace the saved report of run {record.run_id}: saved {saved} records, "
                          f"fetched {fetched} from the logs; every file is kept as it was")  # fmt: skip
    return summary


def render(summary: RunSummary[Any], plots_too: bool = True) -> list[Path]:
    """The run's report files drawn by its workload (`plots_too` False: without the plots, as a
    sweep's cell); returns the paths written."""
    return _driver(summary).write_report(summary, plots_too)


def sections_of(summary: RunSummary[Any]) -> sections.Report:
    """The run's report as its workload shows it on the terminal."""
    return _driver(summary).report_sections(summary)


def _driver(summary: RunSummary[Any]) -> workloads.Driver:
    return workloads.get(summary.header.run.parameters.workload)


def report_across(run_ids: list[str], folder: Path, title: str, options: dict | None = None) -> AcrossSummary:
    """The runs' workload's report across them, written into `folder`; its summary (the
    workload's own type). `options`: its report flags' (report_options; none: its defaults)."""
    return workload_of(run_ids).report_across(run_ids, folder, title, options)


def across(run_ids: list[str], folder: Path, title: str, options: dict | None = None) -> sections.Report:
    """report_across, and its report as the terminal shows it."""
    driver = workload_of(run_ids)
    return driver.across_sections(driver.report_across(run_ids, folder, title, options), folder)


def report_sweep(manifest: sweeps.Manifest, options: dict | None = None) -> sections.Report:
    """The report across a sweep's runs, written next to its manifest; what the terminal shows."""
    environments = ("warm environments kept between the cells of one deployment" if manifest.keep_warm
                    else "fresh execution environments for every cell")  # fmt: skip
    title = f"sweep {manifest.sweep_id} ({environments})"
    return across(sweep_runs(manifest), sweeps.sweep_dir(manifest.sweep_id), title, options)


def report_runs(run_ids: list[str], options: dict | None = None) -> sections.Report:
    """`fanout report --runs` (its refs resolved by resolve_all): report into results/across/<id>/."""
    return across(run_ids, across_dir(run_ids), "s3-fanout report across runs", options)


def runs_of(ref: str) -> list[str]:
    """The run ids `ref` names: a run id or `latest`, or `sweep:<sweep id|latest>` for the runs
    of that sweep's finished cells (sweep and run ids look alike, hence the prefix)."""
    if ref.startswith(SWEEP_PREFIX):
        return sweep_runs(sweeps.load(ref.removeprefix(SWEEP_PREFIX)))
    return [runs.resolve(ref)]


def sweep_runs(manifest: sweeps.Manifest) -> list[str]:
    """The runs of a sweep's finished cells, in the sweep's order."""
    done = [cell.run_id for cell in manifest.cells if cell.status == "done"]
    if not done:
        raise UsageError(f"sweep {manifest.sweep_id} has no finished cell yet; continue it with "
                         f"`make sweep RESUME={manifest.sweep_id}`")  # fmt: skip
    return done


def resolve_all(refs: str) -> list[str]:
    """The run ids of comma-separated refs, each as runs_of reads it, without repeats."""
    return list(dict.fromkeys(run_id for ref in refs.split(",") for run_id in runs_of(ref)))


def workload_of(run_ids: list[str]) -> workloads.Driver:
    """The one workload the runs were fired with; UsageError when they mix workloads."""
    found = {run_id: runs.load(run_id).parameters.workload for run_id in run_ids}
    if len(set(found.values())) > 1:
        listed = ", ".join(f"{run_id} ({name})" for run_id, name in found.items())
        raise UsageError(f"runs of different workloads cannot share a report: {listed}")
    return workloads.get(next(iter(found.values())))


def across_dir(run_ids: list[str]) -> Path:
    """results/across/<newest run id>-<hash of the run ids>: one folder per set of runs, found
    again when the same runs are reported again."""
    digest = hashlib.sha1(" ".join(sorted(run_ids)).encode()).hexdigest()[:8]
    return paths.results_dir() / "across" / f"{max(run_ids)}-{digest}"
