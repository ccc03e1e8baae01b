"""The download workload's report across runs: `fanout report --runs ID,ID,...` and a sweep's
closing report, through fanout.stages.report and fanout.workloads.download.driver.

Reads each run's results/<run_id>/ (run.json, records.jsonl) and computes each cell's statistics
(fanout.results.stats) from the records themselves, over its downloads that ran at target
(fanout.results.concurrency), so they are exact wherever the runs were made. Cells are
fanout.results.cells.of(download), the run report's too. What each figure is, and the files
written: docs/statistics.md.
"""

import platform
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np
import scipy
from fanout.results import aggregate, cells, concurrency, report_files, run_cost, run_folders as runs, run_record, run_sections, stats, tables
from fanout.workloads.download import pressure
from fanout.results.sections import FILES, TERMINAL, Figures, Heading, Report, Table, Text, Warnings, images as described, sentence
from fanout.workloads.download import across_plots as crossplots, cell_stats, endpoint_ips, report
from fanout.workloads.download import WORKLOAD, prediction
from fanout.workloads.download.across_summary import Across

CELLS = cells.of(WORKLOAD)  # the download workload's cells

UNITS = "seconds: wall clock, measured in the function; MB/s = bytes / s / 10^6; Mbit/s = 8 x MB/s (decimal)"


@dataclass
class Run:
    """One run's folder: run.json and its records."""

    record: run_record.RunRecord
    downloads: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.record.run_id


def load(run_id: str) -> Run:
    """run.json and the saved records of one run; a one-line error when it has no saved
    download records (runs.load_records)."""
    loaded = Run(runs.load(run_id))
    for item in runs.load_records(run_id, "download"):
        if item.get("event") == "download":
            loaded.downloads.append(item)
        elif item.get("event") == "error":
            loaded.errors.append(item)
    for download, ran in zip(loaded.downloads, concurrency.ran_at_of(loaded.downloads)):
        if ran is not None:
            download["ran_at"] = ran  # over every download of the run, whatever its cell
    return loaded


def ran_at_target(download: dict, target: int, fraction: float) -> bool:
    """Whether a download (from load(), which adds `ran_at`) ran at its cell's target."""
    return "ran_at" not in download or concurrency.held_target(download["ran_at"], target, fraction)


def cell_of(item: dict, run: run_record.RunRecord) -> cells.Cell:
    """The cell of a record; a field the record lacks (object_size before records carried it;
    any, for an error record that lacks it) comes from run.json."""
    stack, parameters = run.stack, run.parameters
    options = parameters.workload_options or {}
    from_run = {
        "memory_size": stack.memory,
        "concurrency_limit": stack.concurrency,
        "object_size": stack.object_size,
        "strategy": options.get("strategy"),
        "experiment_tag": parameters.experiment_tag,
    }
    fields = {name: value if item.get(name) is None else item[name] for name, value in from_run.items()}
    return CELLS.Cell(**fields, architecture=stack.architecture, network=run.network_label(), pin=options.get("pin"))


def sort_key(cell: cells.Cell) -> tuple:
    """Numbers in numeric order (512 before 1024), text as text, over every field in the tables'
    order. Not Cell.sort_key, which orders by the record fields only (strategy before
    architecture) and a numeric-looking tag as text: the two orders differ."""
    return tuple((0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))
                 for value in cell.as_dict().values())  # fmt: skip


# ---- computation -----------------------------------------------------------------------------


def build(run_ids: list[str], out_dir: Path, title: str, at_target: float = concurrency.AT_TARGET_FRACTION) -> Across:
    """Read the runs, compute every cell's statistics, write the files into `out_dir`; returns
    the summary (cells.json is this, less the per-download samples)."""
    summary = summarize([load(run_id) for run_id in dict.fromkeys(run_ids)], title, at_target)
    write(summary, Path(out_dir))
    return summary


def summarize(loaded: list[Run], title: str, at_target: float = concurrency.AT_TARGET_FRACTION) -> Across:
    """Every cell's statistics (over its downloads at target), the runs they come from, the
    methods, and the warnings."""
    by_cell, run_cells = group(loaded)
    ordered = sorted(by_cell, key=sort_key)
    chosen = {cell: at_target_of(cell, by_cell[cell], at_target) for cell in ordered}
    rows = [cell_row(cell, chosen[cell], by_cell[cell], run_cells) for cell in ordered]
    labels = sorted({run.record.network_label() for run in loaded})
    return Across(
        title=title,
        network=labels[0] if len(labels) == 1 else "mixed: " + "; ".join(labels),
        limits=run_record.limits_label(run.record for run in loaded),
        runs=[_run_summary(run, run_cells[run.run_id]) for run in loaded],
        cells=rows,
        varying=varying(rows),
        methods={
            "percentiles": stats.PERCENTILE_METHOD,
            "confidence_intervals": stats.CI_METHOD,
            "steady_window": concurrency.STEADY_DEFINITION,
            "at_target": concurrency.at_target_definition(at_target),
            "units": UNITS,
        },
        at_target=at_target,
        warnings=[*warnings(loaded, run_cells), *few_at_target(rows, at_target, unusable=True), *not_honoured(rows),
                  *filter(None, [pressure.sdk_warning(pressure.sdk_sets([d for run in loaded for d in run.downloads]))])],
        notes=few_at_target(rows, at_target, unusable=False),
        version=runs.project_version(),
        environment=environment(),
        samples=[samples(chosen[cell]) for cell in ordered],
        ran_at=[ran_at_samples(downloads_of(by_cell[cell])) for cell in ordered],
        endpoint_ips=[dict(row, cell=cell_label(cell.as_dict(), varying(rows) or ["memory_size"]))
                      for cell in ordered for row in endpoint_ips.from_records(downloads_of(by_cell[cell]))],
    )  # fmt: skip


def group(loaded: list[Run]) -> tuple[dict, dict]:
    """{cell: [(run, the run's downloads in the cell)]} and {run id: the run's cells} (every run
    has downloads: load refuses one without)."""
    by_cell: dict[cells.Cell, list[tuple[Run, list[dict]]]] = {}
    run_cells: dict[str, set[cells.Cell]] = {}
    for run in loaded:
        grouped: dict[cells.Cell, list[dict]] = {}
        for download in run.downloads:
            grouped.setdefault(cell_of(download, run.record), []).append(download)
        run_cells[run.run_id] = set(grouped)
        for cell, downloads in grouped.items():
            by_cell.setdefault(cell, []).append((run, downloads))
    return by_cell, run_cells


def downloads_of(members: list[tuple[Run, list[dict]]]) -> list[dict]:
    return [d for _, own in members for d in own]


def at_target_of(cell: cells.Cell, members: list[tuple[Run, list[dict]]], fraction: float) -> list[dict]:
    """The cell's downloads that ran at its target."""
    return [d for d in downloads_of(members) if ran_at_target(d, cell.concurrency_limit, fraction)]


def cell_row(cell: cells.Cell, downloads: list[dict], members: list[tuple[Run, list[dict]]], run_cells: dict) -> dict:
    """One cell: its fields, statistics and intervals over `downloads` (those at target), how
    many were left out, concurrency and accounting."""
    n_all = len(downloads_of(members))
    row = cell.as_dict() | {"runs": [run.run_id for run, _ in members], "n": len(downloads), "n_all": n_all,
                            "n_excluded": n_all - len(downloads)}  # fmt: skip
    if downloads:
        sample = samples(downloads)
        row |= (cell_stats.of(sample["seconds"], sample["mb_per_s"]).columns() | cell_stats.intervals(sample["mb_per_s"]).columns()
                | cell_stats.intervals(sample["seconds"], "seconds").columns())
    everything = downloads_of(members)
    row |= _concurrency(cell, members) | concurrency.reach(everything, [d.get("ran_at") for d in everything])
    # throttling and CPU over every download (a cell's runs share their network, so their scale)
    row |= pressure.cell_figures(downloads_of(members), members[0][0].record.cpu_scale())
    row |= aggregate.pooled([report.aggregates(own) for _, own in members])
    row |= _prediction(cell, members)
    row["errors"] = sum(1 for run, _ in members for e in run.errors if cell_of(e, run.record) == cell)
    alone = [run for run, _ in members if len(run_cells[run.run_id]) == 1]  # runs of this cell only
    row |= _accounting(alone)
    row |= run_cost.pooled([run.run_id for run in alone])
    return row


def _prediction(cell: cells.Cell, members: list[tuple[Run, list[dict]]]) -> dict:
    """The model's median seconds for the cell (report.with_predictions), the median over its runs
    when every run has one; none otherwise."""
    predicted = [prediction.cell_prediction(run.record.backend, run.record.network, cell.as_dict(), len(own))
                 for run, own in members]  # fmt: skip
    known = [seconds for seconds in predicted if seconds is not None]
    if not known or len(known) < len(predicted):
        return {}
    return {report.PREDICTED: float(np.median(known))}


def samples(downloads: list[dict]) -> dict:
    """Per-download seconds and decimal MB/s (bytes / seconds / 10^6)."""
    return {
        "seconds": [d["seconds"] for d in downloads],
        "mb_per_s": [d["bytes"] / d["seconds"] / 1e6 for d in downloads],
    }


def ran_at_samples(downloads: list[dict]) -> dict:
    """Every placed download's concurrency it ran at and its MB/s (the scatter plot's points)."""
    placed = [d for d in downloads if "ran_at" in d]
    return {"ran_at": [d["ran_at"] for d in placed], "mb_per_s": samples(placed)["mb_per_s"]}


def few_at_target(rows: list[dict], fraction: float, unusable: bool) -> list[str]:
    """A line per cell with too few downloads at target (concurrency.few_at_target): those with
    none (`unusable`: a warning, the cell has no figure at target) or those with some (a note:
    their figures stand, on fewer downloads)."""
    names = [name for name in CELLS.across if name != "network"]
    found = (concurrency.few_at_target(cell_label(row, names), row["n"], row["n_all"], row["target"], fraction,
                                       row["most_ran_at"], row["span_s"]) for row in rows if (row["n"] == 0) == unusable)  # fmt: skip
    return [line for line in found if line]


def not_honoured(rows: list[dict]) -> list[str]:
    """A line per cell whose measured/predicted is outside report.HONOURED."""
    names = [name for name in CELLS.across if name != "network"]
    return [line for row in rows if (line := report.not_honoured(row, cell_label(row, names)))]


def _concurrency(cell: cells.Cell, members: list[tuple[Run, list[dict]]]) -> dict:
    """Achieved concurrency per run, so that a steady window never spans two runs; a cell made
    of several runs shows the largest peak and the mean of the runs' steady means."""
    per_run = [report.achieved_concurrency(own) for _, own in members if own]
    downloads = downloads_of(members)
    cold = sum(bool(d.get("cold_start")) for d in downloads)
    return {
        "target": cell.concurrency_limit,
        "peak_concurrency": max((c["peak_concurrency"] for c in per_run), default=0),
        "steady_mean_concurrency": round(sum(c["steady_mean_concurrency"] for c in per_run) / len(per_run), 2)
        if per_run else None,
        "cold_starts": cold,
        "cold_start_share": round(cold / len(downloads), 4) if downloads else None,
    }  # fmt: skip


def _accounting(members: list[Run]) -> dict:
    """sent = done + failed + dead-lettered (+ in flight), summed over run.json's "accounting";
    None where a run has none yet (`fanout wait` writes it) or its records span several cells."""
    names = ("sent", "done", "failed", "dead_lettered", "in_flight")
    accountings = [run.record.accounting for run in members if run.record.accounting is not None]
    if not members or len(accountings) < len(members):
        return dict.fromkeys(names) | {"complete": None}
    totals = dict.fromkeys(names, 0)
    for run, accounting in zip(members, accountings):
        totals["sent"] += len(run.record.sent_seqs())
        totals["done"] += accounting.done
        totals["failed"] += len(accounting.failed)
        totals["dead_lettered"] += len(accounting.dead_lettered)
        totals["in_flight"] += len(accounting.in_flight)
    accounted = totals["done"] + totals["failed"] + totals["dead_lettered"]
    return totals | {"complete": totals["in_flight"] == 0 and accounted == totals["sent"]}


def environment() -> str:
    """What computed the statistics: the methods depend on numpy's and scipy's versions."""
    return (f"Python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
            f"matplotlib {matplotlib.__version__}")  # fmt: skip


def varying(rows: list[dict]) -> list[str]:
    """The Cell fields whose values differ between cells: the tables' row labels."""
    return [name for name in CELLS.across if len({row[name] for row in rows}) > 1]


def warnings(loaded: list[Run], run_cells: dict) -> list[str]:
    """What makes a figure incomplete or unattributable, one line each."""
    result = []
    for run in loaded:
        accounting, run_id = run.record.accounting, run.run_id
        if accounting is None:
            result.append(f"run {run_id} has no accounting in run.json: run `make wait RUN={run_id}` first")
        elif accounting.in_flight:
            result.append(f"run {run_id}: {len(accounting.in_flight)} messages were never accounted for")
        elif len({d["seq"] for d in run.downloads}) < accounting.done:
            result.append(f"run {run_id}: {runs.RECORDS_FILE} lacks downloads that wait counted: "
                          f"run `make report RUN={run_id}` again")  # fmt: skip
        if len(run_cells[run_id]) > 1:
            result.append(f"run {run_id}'s downloads fall into {len(run_cells[run_id])} cells: its accounting "
                          "is not attributed to any")  # fmt: skip
    return result


def _run_summary(run: Run, own: set[cells.Cell]) -> dict:
    record = run.record
    return {
        "run_id": run.run_id,
        "backend": record.backend,
        "stack": record.stack.stack,
        "network": record.network_label(),
        "limits": record.limits_label(),
        "cells": len(own),
        "downloads": len(run.downloads),
        "send_rate_per_s": record.send_rate_per_s,
        "version": record.version,
        "scale": (record.network or {}).get("scale"),
    }


# ---- output ----------------------------------------------------------------------------------

ACCOUNTING_NOTE = "complete: sent = done + failed + dead-lettered, from run.json (`fanout wait`)"
AT_TARGET_TITLE = " (downloads at target)"  # after each statistics table's title: what its n counts
CI_TITLE = "Throughput (MB/s): median and p99 with 95% CIs" + AT_TARGET_TITLE
CELL_COLUMNS = ["n_all", "n_excluded", "target", "peak_concurrency", "steady_mean_concurrency", "cold_starts",
                "cold_start_share", "errors", "lambda_billed_usd", "lambda_estimated_usd", "bill_over_estimate",
                *report.PRESSURE_COLUMNS,
                "sent", "done", "failed", "dead_lettered", "in_flight", "complete"]  # fmt: skip


def sections(summary: Across, images: tuple = (), folder: Path | None = None) -> Report:
    """The report as sections (fanout.results.sections): how it was made and the methods (files),
    a table per metric, the intervals, concurrency, accounting, cost and pressure, each labelled
    by the cell fields that vary, and `images`; on the terminal, what it wrote into `folder`."""
    network_text, labels = summary.network, len(summary.varying)
    shared = [name for name in CELLS.across if name not in summary.varying and name != "network"]
    every = cell_label(summary.cells[0], shared) if summary.cells and shared else ""
    blocks = [Text(f"{summary.title}: {len(summary.runs)} runs, {len(summary.cells)} cells; {network_text}",
                   "bold", only=TERMINAL),
              *(Text(line, "bold", only=TERMINAL) for line in run_sections.labels(summary.network, summary.limits)[1:]),  # Lambda's limits
              *([Text(f"every cell: {every}", only=TERMINAL)] if every else []),
              *_how(summary, every), *(Text(f"note: {line}") for line in summary.notes)]  # fmt: skip
    for metric, (title, caption) in cell_stats.METRICS.items():
        note = f"{caption}; {network_text}"
        blocks.append(Table(title + AT_TARGET_TITLE, metric_rows(summary, metric), note, sentence(note), labels=labels))
    ci_note = f"{stats.CI_METHOD}; {network_text}"
    blocks += [
        Table(CI_TITLE, ci_rows(summary), ci_note, sentence(ci_note), labels=labels),
        Table("Achieved concurrency", concurrency_rows(summary), concurrency_note(summary),
              sentence(concurrency_note(summary)), labels=labels),
        report.aggregate_table(summary.cells, key_title(summary.varying),
                               lambda row: key_text(row, summary.varying)),
        *([Table(report.PREDICTION_TITLE, predicted, report.PREDICTION_NOTE, sentence(report.PREDICTION_NOTE),
                 labels=labels)] if (predicted := prediction_rows(summary)) else []),
        Table("Accounting", accounting_rows(summary), ACCOUNTING_NOTE, sentence(ACCOUNTING_NOTE), labels=labels),
        Table("Lambda cost (USD)", cost_rows(summary), COST_NOTE, sentence(COST_NOTE), labels=labels),
        Table(report.PRESSURE_TITLE, pressure_rows(summary), pressure.NOTE, sentence(pressure.NOTE.replace("\n  ", " ")),
              labels=labels),
    ]  # fmt: skip
    if summary.endpoint_ips:
        blocks.append(Table(report.ENDPOINT_TITLE, endpoint_rows(summary),
                            caption=sentence(f"{endpoint_ips.FLAG_NOTE}; {network_text}"), only=FILES))  # fmt: skip
    pictures = described(images, crossplots.CAPTIONS)
    first = crossplots.answer_figure(pictures)
    blocks += [Text(f"percentiles: {stats.PERCENTILE_METHOD}; {UNITS}", only=TERMINAL),
               Warnings(tuple(summary.warnings), only=TERMINAL),
               Figures(tuple(image for image in pictures if image not in first))]  # fmt: skip
    if folder is not None:
        blocks.append(Text(f"wrote cells.csv, cells.json, report.md, index.html and plots to {folder}", only=TERMINAL))
    header = CELLS.header(summary.cells[0], shared) if summary.cells else ()
    return Report(summary.title, network_text, blocks, answer=answer(summary, first), header=header,
                  links=run_sections.across_links([run["run_id"] for run in summary.runs], folder),
                  limits=summary.limits)  # fmt: skip


def answer(summary: Across, figure: tuple) -> list:
    """What the runs found, first: the best cell named, the aggregate against concurrency, the
    plot of the measure against what was swept, the answer's table (report.answer_table: every
    cell against the model's median where there is one), and what makes the figures incomplete."""
    names = summary.varying
    table = report.answer_table(summary.cells, key_title(names), lambda row: key_text(row, names),
                                [run.get("scale") for run in summary.runs])  # fmt: skip
    text = report.finding(summary.cells, lambda row: cell_label(row, names))
    return [Text(" ".join(filter(None, [text, aggregate_trend(summary)])), only=FILES), Figures(figure, headed=False),
            table, Warnings(tuple(summary.warnings), only=FILES)]  # fmt: skip


def aggregate_trend(summary: Across) -> str:
    """`Aggregate throughput against concurrency: 0.05 GB/s at 1, 0.19 at 4`, per combination of
    the other varying fields; empty unless concurrency varies."""
    if "concurrency_limit" not in summary.varying:
        return ""
    others = [name for name in summary.varying if name != "concurrency_limit"]
    lines: dict[str, list[str]] = {}
    for row in sorted(summary.cells, key=lambda r: r["concurrency_limit"]):
        if row.get("aggregate_gb_per_s") is not None:
            lines.setdefault(cell_label(row, others) if others else "", []).append(
                f"{row['aggregate_gb_per_s']:.3g} GB/s at {row['concurrency_limit']}")
    parts = [f"{name + ': ' if name else ''}{', '.join(found)}" for name, found in lines.items()]
    return f"Aggregate throughput against concurrency: {'; '.join(parts)}." if parts else ""


def _how(summary: Across, every: str) -> list:
    """The files' account of the runs (a table of them), what made the report, and the methods."""
    runs_table = [["run", "backend", "stack", "network", "cells", "downloads", "msgs/s sent", "version"]]
    runs_table += [[r["run_id"], r["backend"], r["stack"], r["network"], r["cells"], r["downloads"],
                    r["send_rate_per_s"], r["version"]] for r in summary.runs]  # fmt: skip
    methods = summary.methods
    return [
        Text(" ".join(f"Figures: {label}." for label in run_sections.labels(summary.network, summary.limits)), only=FILES),
        Heading("How it was made"),
        Table("Runs", runs_table, headed=False, labels=4, only=FILES),  # run, backend, stack, network
        Text(f"Report made by s3-fanout {summary.version} ({summary.environment})."
             + (f" Every cell: {every}." if every else ""), only=FILES),
        Heading("Methods"),
        Text(f"- Units: {methods['units']}.\n- Percentiles: {methods['percentiles']}.\n"
             f"- Confidence intervals (median and p99 of MB/s per cell): {methods['confidence_intervals']}.\n"
             f"- Achieved concurrency: peak, and time-weighted mean in the steady window ({methods['steady_window']}), per run.",
             only=FILES),
        Text(f"- Every statistic is over the {methods['at_target']} (the table of achieved concurrency counts those "
             "left out); the plot of throughput against concurrency shows every download.", only=FILES),
    ]  # fmt: skip


def cell_label(row: dict, names) -> str:
    """`MB 1024, size 1 GiB, arch x86_64`: the named fields of a cell (fanout.results.cells)."""
    return CELLS.short_label(row, names)


def key_title(names: list[str]) -> list[str]:
    """The titles of the row labels: a column per field that varies (fanout.results.tables repeats
    them beside each part of a split table, or moves them into its row key, as one column
    each so that no label has to be cut)."""
    return [CELLS.declared[name].short_title for name in names]


def key_text(row: dict, names: list[str]) -> list[str]:
    """The row labels: the row's values of `names`, in key_title's order."""
    return [CELLS.text(name, row[name]) for name in names]


def metric_rows(summary: Across, metric: str) -> list[list]:
    rows: list[list] = [[*key_title(summary.varying), "n", *cell_stats.STATS]]
    for row in summary.cells:
        rows.append([*key_text(row, summary.varying), row["n"],
                     *(row.get(cell_stats.column(metric, stat)) for stat in cell_stats.STATS)])  # fmt: skip
    return rows


def ci_rows(summary: Across) -> list[list]:
    rows: list[list] = [[*key_title(summary.varying), "n",
             *(title for stat in stats.CI_STATISTICS for title in (f"{stat} MB/s", f"{stat} {stats.CONFIDENCE:.0%} CI"))]]
    for row in summary.cells:
        rows.append([*key_text(row, summary.varying), row["n"], *(value for stat in stats.CI_STATISTICS for value in
                     (row.get(cell_stats.column("mb_per_s", stat)), _interval(row, stat)))])  # fmt: skip
    return rows


def _interval(row: dict, name: str) -> str:
    low, high = (row.get(cell_stats.ci_column(name, end)) for end in cell_stats.CI_ENDS)
    return "-" if low is None else f"{tables.fmt(low)}-{tables.fmt(high)}"


def concurrency_rows(summary: Across) -> list[list]:
    rows: list[list] = [[*key_title(summary.varying), "target", "peak", "steady mean", "at target", "left out", "cold starts",
             "cold share"]]  # fmt: skip
    for row in summary.cells:
        share = row["cold_start_share"]
        rows.append([*key_text(row, summary.varying), row["target"], row["peak_concurrency"], row["steady_mean_concurrency"],
                     row["n"], row.get("n_excluded"), row["cold_starts"], "-" if share is None else f"{share:.1%}"])  # fmt: skip
    return rows


def prediction_rows(summary: Across) -> list[list] | None:
    return report.prediction_rows(summary.cells, key_title(summary.varying),
                                  lambda row: key_text(row, summary.varying))


def concurrency_note(summary: Across) -> str:
    """What the concurrency table's columns mean: the steady window, and which downloads the
    statistics tables keep (summaries written before the at-target split have no definition)."""
    note = f"steady mean: {concurrency.STEADY_DEFINITION}, per run"
    definition = summary.methods.get("at_target")
    return f"{note}; at target: {definition}; left out: the others" if definition else note


COST_NOTE = ("bill: the REPORT lines' Billed Duration x memory, requests, /tmp (simulated durations on the local "
             "backend); estimate: fanout fire's; - when a run's report predates it")


def cost_rows(summary: Across) -> list[list]:
    rows: list[list] = [[*key_title(summary.varying), "bill", "estimate", "bill/estimate"]]
    for row in summary.cells:
        rows.append([*key_text(row, summary.varying), row.get("lambda_billed_usd"), row.get("lambda_estimated_usd"),
                     row.get("bill_over_estimate")])  # fmt: skip
    return rows


def pressure_rows(summary: Across) -> list[list]:
    rows: list[list] = [[*key_title(summary.varying), *report.PRESSURE_HEADERS]]
    for row in summary.cells:
        rows.append([*key_text(row, summary.varying), *(row.get(name) for name in report.PRESSURE_COLUMNS)])
    return rows


def accounting_rows(summary: Across) -> list[list]:
    rows: list[list] = [[*key_title(summary.varying), "sent", "done", "failed", "dead-lettered", "complete", "error records"]]
    for row in summary.cells:
        complete = {True: "yes", False: "NO", None: "unknown"}[row["complete"]]
        rows.append([*key_text(row, summary.varying), row["sent"], row["done"], row["failed"], row["dead_lettered"], complete,
                     row["errors"]])  # fmt: skip
    return rows


def write(summary: Across, out_dir: Path) -> Path:
    """cells.json (the summary less the samples), cells.csv, the plots, report.md and index.html."""
    out_dir.mkdir(parents=True, exist_ok=True)
    runs.write_json(out_dir / "cells.json", summary.to_json())
    predicted = [report.PREDICTED] if any(report.PREDICTED in row for row in summary.cells) else []
    columns = [*CELLS.across, "limits", "runs", "n", *cell_stats.COLUMNS, *cell_stats.CI_COLUMNS, *cell_stats.SECONDS_CI_COLUMNS,
               *aggregate.COLUMNS, *CELL_COLUMNS,
               *predicted]  # fmt: skip
    held = {run["run_id"]: run.get("limits", "") for run in summary.runs}  # none in a cells.json saved before
    rows = [dict(row, runs=" ".join(row["runs"]), limits=run_record.distinct_limits(held[run] for run in row["runs"]))
            for row in summary.cells]  # fmt: skip
    runs.write_csv(out_dir / "cells.csv", columns, rows, "ignore")
    images = crossplots.draw(summary, out_dir, CELLS.long_label)
    report_files.write(sections(summary, tuple(images), out_dir), out_dir)
    return out_dir


def endpoint_rows(summary: Across) -> list[list]:
    """The per-address table of every cell that has addresses, labelled by the cell."""
    rows: list[list] = [["cell", *endpoint_ips.TITLES]]
    return rows + [[row["cell"], *(row.get(c) for c in endpoint_ips.COLUMNS)] for row in summary.endpoint_ips]
