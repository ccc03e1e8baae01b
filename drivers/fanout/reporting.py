"""`fanout report`: which run, runs or sweep to report, and the workload driver that reports them.

One run (`--run`, default `latest`): its workload's `report(stack, record)`. Across runs
(`--runs ID,ID,...`, `--sweep ID`, and a sweep's closing report): the runs' one workload's
`report_across(run_ids, folder, title)` (fanout.workloads); runs of different workloads share
no report. Nothing here knows what a workload measures: every driver draws its own tables.
"""

import hashlib
from pathlib import Path

from rich.console import Console

from fanout import paths, runs, sweeps, workloads
from fanout import stack as stacks
from fanout.errors import UsageError

SWEEP_PREFIX = "sweep:"

console = Console()


def register(subparsers) -> None:
    parser = subparsers.add_parser("report", help="tables, CSV/JSON and plots of a run under results/")
    stacks.add_arguments(parser)
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--run", default=runs.LATEST, help="run id, or 'latest' (default)")
    which.add_argument("--runs", help="comma-separated run ids (or sweep:<id|latest>): one report across them")
    which.add_argument("--sweep", help="sweep id or 'latest': the report across its runs, beside its manifest")
    parser.set_defaults(func=run)


def run(args) -> int:
    if args.runs is not None:
        return report_runs(args.runs)
    if args.sweep is not None:
        report_sweep(sweeps.load(args.sweep))
        return 0
    record = runs.load(args.run)
    stack = stacks.from_args(args)
    runs.check_same_stack(record, stack)
    folder = workloads.of_run(record).driver().report(stack, record)
    console.print(f"wrote {', '.join(sorted(p.name for p in folder.iterdir() if p.name != runs.RUN_FILE))}")
    console.print(f"  to {folder}", highlight=False)
    return 0


def report_across(run_ids: list[str], folder: Path, title: str) -> dict:
    """The runs' workload's report across them, printed and written into `folder`."""
    return workload_of(run_ids).driver().report_across(run_ids, folder, title)


def report_sweep(manifest: dict) -> dict:
    """The report across a sweep's runs, written next to its manifest, and printed."""
    environments = ("warm environments kept between the cells of one deployment" if manifest["keep_warm"]
                    else "fresh execution environments for every cell")  # fmt: skip
    title = f"sweep {manifest['sweep_id']} ({environments})"
    return report_across(sweep_runs(manifest), sweeps.sweep_dir(manifest["sweep_id"]), title)


def report_runs(refs: str) -> int:
    """`fanout report --runs`: resolve the refs, report into results/across/<id>/."""
    run_ids = resolve_all(refs)
    report_across(run_ids, across_dir(run_ids), "s3-fanout report across runs")
    return 0


def runs_of(ref: str) -> list[str]:
    """The run ids `ref` names: a run id or `latest`, or `sweep:<sweep id|latest>` for the runs
    of that sweep's finished cells (sweep and run ids look alike, hence the prefix)."""
    if ref.startswith(SWEEP_PREFIX):
        return sweep_runs(sweeps.load(ref.removeprefix(SWEEP_PREFIX)))
    return [runs.resolve(ref)]


def sweep_runs(manifest: dict) -> list[str]:
    """The runs of a sweep's finished cells, in the sweep's order."""
    done = [cell["run_id"] for cell in manifest["cells"] if cell["status"] == "done"]
    if not done:
        raise UsageError(f"sweep {manifest['sweep_id']} has no finished cell yet; continue it with "
                         f"`make sweep RESUME={manifest['sweep_id']}`")  # fmt: skip
    return done


def resolve_all(refs: str) -> list[str]:
    """The run ids of comma-separated refs, each as runs_of reads it, without repeats."""
    return list(dict.fromkeys(run_id for ref in refs.split(",") for run_id in runs_of(ref)))


def workload_of(run_ids: list[str]) -> workloads.Workload:
    """The one workload the runs were fired with; UsageError when they mix workloads."""
    found = {run_id: workloads.of_run(runs.load(run_id)).name for run_id in run_ids}
    if len(set(found.values())) > 1:
        listed = ", ".join(f"{run_id} ({name})" for run_id, name in found.items())
        raise UsageError(f"runs of different workloads cannot share a report: {listed}")
    return workloads.get(next(iter(found.values())))


def across_dir(run_ids: list[str]) -> Path:
    """results/across/<newest run id>-<hash of the run ids>: one folder per set of runs, found
    again when the same runs are reported again."""
    digest = hashlib.sha1(" ".join(sorted(run_ids)).encode()).hexdigest()[:8]
    return paths.results_dir() / "across" / f"{max(run_ids)}-{digest}"
