"""The download workload's report of one run: its tables, files and plots (`fanout report`,
fanout.stages.report, calls it through fanout.workloads.download.driver).

Tables come from the saved queries restricted to the run, and the main ones from the records
themselves over the downloads that ran at target (fanout.results.concurrency,
fanout.results.stats), so that the queue mapping's ramp is not mixed into a cell. Units,
percentile methods and the files written: docs/experiment.md, *report*, and
docs/statistics.md, *Downloads at target*. Across runs: fanout.workloads.download.across.
"""

import functools
import re
import textwrap
import time
from dataclasses import dataclass, replace
from typing import ClassVar

from fanout.workloads.download import prediction, strategies
from fanout.results import aggregate, cells, concurrency, report_files, run_cost, log_records as run_logs, run_folders as runs, run_record, run_sections, stats, sweep_folders as sweeps, tables
from fanout.results import summary as summaries
from fanout.results.summary import Row, RunSummary
from fanout.workloads.download import pressure
from fanout.results.sections import FILES, TERMINAL, Figures, Heading, Report, Table, Text, Warnings, images as described, links, sentence
from fanout.workloads.download import cell_stats, endpoint_ips, plots
from fanout.workloads.download.cell_stats import METRICS, STATS
from fanout import insights
from fanout.local import backends
from fanout.workloads.download import WORKLOAD, costs as download_costs
from fanout.local.network import truth
from fanout.common.sizes import format_size

CELLS = cells.of(WORKLOAD)  # the download workload's cells

WINDOW_NOTE = "REPORT lines in the run's time window"
QUERY_TABLES = {  # summary key -> (title, caption)
    "cold_starts": ("Cold starts", WINDOW_NOTE),
    "lambda_report": ("Lambda REPORT lines", WINDOW_NOTE),
    "errors": ("Errors", ""),
    "timeline": ("Byte-arrival timelines (p10, p50, p90)",
                 "per download: sustained = tail rate, burst = bytes before the rate falls to it, peak over "
                 "1 s (decimal MB/s); first_byte = first request's first-byte latency, ttfb = first chunk (s)"),
    "platform_errors": ("Platform errors", "crashes, timeouts, init failures: platform lines in the run's time window"),
}
TRUTH_NOTE = ("estimated from the records (medians; burst: first download of each environment) "
              "next to the model's injected values; MB/s decimal")
TRUTH_LABELS = {  # ground-truth parameter -> (label with unit, factor from the row's unit)
    "sustained_mb_per_s": ("sustained MB/s", 1),
    "burst_bytes": ("burst bytes", 1),
    "first_byte_seconds": ("first byte ms", 1000),
}
INSIDE_BURST = "(a)"  # marks an estimate of a download that ended inside its burst
NOT_ESTIMABLE = "not estimable"  # what the table shows in place of such an estimate
UPPER_BOUND = "(b)"  # marks a first-byte estimate with late emulator answers
STRATEGY_COLUMNS = {  # strategy-comparison column -> title
    "strategy": "strategy", "downloads": "n", "mb_per_s_p10": "p10 MB/s", "mb_per_s_p50": "p50 MB/s",
    "mb_per_s_p90": "p90 MB/s", "ttfb_ms_p50": "p50 TTFB ms", "ttfb_ms_p90": "p90 TTFB ms", "requests_avg": "requests",
    "connections_avg": "connections",
}  # fmt: skip
STRATEGY_NOTE = ("fastest median first; MB/s decimal; TTFB: first byte of the download; requests, "
                 "connections: mean per download (none for crt)")
ENDPOINT_TITLE = "Throughput by endpoint address"
METRIC_COLUMN = "metric"  # query tables: the column naming what a row's statistics are of
PRESSURE_TITLE = "Throttling and CPU"
PRESSURE_COLUMNS = ("keys", "retries", "slowdowns", "throttled_downloads", "cpu_share_p50", "cpu_allowance", "flags")
PRESSURE_HEADERS = ("keys", "retries", "503s", "dl with 503", "CPU/wall p50", "CPU share", "flags")  # theirs, in order
PREDICTED = cell_stats.PREDICTED
PREDICTION_TITLE = "Measured against the model"
PREDICTION_NOTE = ("predicted: the model's median download seconds for the cell's object, strategy and "
                   "downloads per environment; measured: the p50 above")
HONOURED = (0.9, 1.1)  # measured/predicted within this range: the machine delivered what the model allows
STAT_COLUMN = re.compile(r"^(?P<metric>.+)_(?P<stat>min|max|avg|p\d+)$")
REPORT_LINE_SLACK_MS = 10_000  # REPORT lines follow the last record by the invocation's end


def _run(summary: "Summary") -> run_record.RunRecord:
    """The run record a summary holds (as run.json does)."""
    return summary.header.run


@dataclass
class Body:
    """What the download report adds to every run's summary (fanout.results.summary): the cells
    of the saved percentile query joined with their records' figures, the other saved queries'
    rows, the ground truth, the endpoint addresses, the cost, the SDK sets, and once reported the
    figures at target. The fields with a default are those an older summary may lack."""

    LAYOUT: ClassVar[tuple[str, ...]] = (
        "run", "network", "limits", "counts", "cells", "steady_definition", "units", "strategies", "errors", "timeline",
        "ground_truth", "endpoint_ips", "endpoint_ips_excluded", "dead_lettered", "cold_starts", "lambda_report", "cost",
        "platform_errors", "lambda_window_ms", "sdk")  # fmt: skip
    COUNTS: ClassVar[dict[str, str]] = {"requested": "requested", "sent": "sent", "measured": "download_records",
                                        "done": "seqs_downloaded", "in_query": "in_percentile_table",
                                        "error_records": "error_records"}  # fmt: skip

    cells: list[Row]
    steady_definition: str
    units: dict[str, str]
    strategies: list[Row]
    errors: list[Row]
    timeline: list[Row]
    ground_truth: list[Row]
    cold_starts: list[Row]
    lambda_report: list[Row]
    platform_errors: list[Row]
    lambda_window_ms: list[int]
    endpoint_ips: list[Row] | None = None
    endpoint_ips_excluded: int | None = None
    cost: dict | None = None
    sdk: list[Row] | None = None
    at_target_fraction: float | None = None
    at_target: dict | None = None


Summary = RunSummary[Body]
UNITS = {"seconds": "s", "mb_per_s": "decimal MB/s (10^6 bytes/s)", "mbit_per_s": "decimal Mbit/s (10^6 bits/s)"}


def build(stack, record: run_record.RunRecord) -> Summary:
    """Everything the report shows (summary.json is this, less the records)."""
    got = summaries.collect(stack, record, "download", "download-percentiles", "downloads")
    run_id, (start_ms, end_ms), events = record.run_id, got.window, got.events
    downloads = got.of_event("download")
    by_run = f'run_id = "{run_id}"'
    lambda_start, lambda_end = lambda_window(record, [t for t, _ in run_logs.run_events(events, run_id)])
    lambda_report = insights.run_saved(stack, "lambda-report", None, lambda_start, lambda_end)
    return summaries.new(got.header, Body(
        cells=with_predictions(join_cells(percentile_table(got.rows), downloads, record.cpu_scale()), record, downloads),
        steady_definition=concurrency.STEADY_DEFINITION, units=UNITS,
        strategies=insights.run_saved(stack, "strategy-comparison", by_run, start_ms, end_ms),
        errors=insights.run_saved(stack, "errors", by_run, start_ms, end_ms),
        timeline=insights.run_saved(stack, "download-timeline", by_run, start_ms, end_ms),
        ground_truth=truth.compare(backends.simulated(record.backend), record.network, downloads, events),
        endpoint_ips=endpoint_ips.table(insights.run_saved(stack, "endpoint-ips", by_run, start_ms, end_ms), downloads),
        endpoint_ips_excluded=endpoint_ips.excluded(downloads),
        cold_starts=insights.run_saved(stack, "cold-starts", None, lambda_start, lambda_end),
        lambda_report=lambda_report, cost=run_cost.summary(record, lambda_report, download_costs.cell_estimate),
        platform_errors=insights.run_saved(stack, "platform-errors", None, lambda_start, lambda_end),
        lambda_window_ms=[lambda_start, lambda_end], sdk=pressure.sdk_sets(got.records)))  # fmt: skip


AT_TARGET_VERSION = 2  # what summary.body.at_target holds: 2 added the intervals and the aggregate figures


def at_target(summary: "Summary") -> dict:
    """The summary's statistics over the downloads that ran at target (docs/statistics.md), at
    the summary's `at_target_fraction` (fanout report --at-target; 90% by default), and each
    cell's aggregate figures over every download, computed from its records and kept as
    summary.body.at_target (recomputed when a saved one is of an older AT_TARGET_VERSION); returns that."""
    if summary.body.at_target_fraction is None:
        summary.body.at_target_fraction = concurrency.AT_TARGET_FRACTION
    fraction, saved = summary.body.at_target_fraction, summary.body.at_target or {}
    if saved.get("fraction") == fraction and saved.get("version") == AT_TARGET_VERSION:
        return saved
    downloads = [r for r in summary.header.records if r.get("event") == "download"]
    by_cell: dict = {}
    for download, ran in zip(downloads, concurrency.ran_at_of(downloads)):
        by_cell.setdefault(CELLS.key(download), []).append((download, ran))
    rows = []
    for cell, members in sorted(by_cell.items(), key=lambda item: item[0].sort_key()):
        group, ran_at = [d for d, _ in members], [r for _, r in members]
        target = group[0].get("concurrency_limit") or 1
        kept = [d for d, r in members if r is None or concurrency.held_target(r, target, fraction)]
        rows.append(cell.as_dict() | {"n": len(kept), "n_all": len(members), "n_excluded": len(members) - len(kept)}
                    | concurrency.reach(group, ran_at) | _statistics(kept) | aggregates(group))  # fmt: skip
    summary.body.at_target = {"fraction": fraction, "definition": concurrency.at_target_definition(fraction), "cells": rows,
                            "percentiles": stats.PERCENTILE_METHOD, "version": AT_TARGET_VERSION}  # fmt: skip
    return summary.body.at_target


def _statistics(downloads: list[dict]) -> dict:
    """seconds, MB/s and Mbit/s statistics of `downloads`, with the intervals of the medians and
    p99s of seconds and MB/s (none without any)."""
    if not downloads:
        return {}
    seconds, mb_per_s = [d["seconds"] for d in downloads], [d["bytes"] / d["seconds"] / 1e6 for d in downloads]
    return (cell_stats.of(seconds, mb_per_s).columns() | cell_stats.intervals(mb_per_s).columns()
            | cell_stats.intervals(seconds, "seconds").columns())


def percentile_table(rows: list[dict]) -> list[dict]:
    """download-percentiles rows as cells: cell keys, n, and seconds/MB/s/Mbit/s statistics."""
    table = []
    for row in rows:
        cell = {key: row.get(key) for key in CELLS.fields}
        cell["n"] = int(row["downloads"])
        seconds, mb_per_s = (cell_stats.Statistics.of({stat: row[cell_stats.column(metric, stat)] for stat in STATS})
                             for metric in ("seconds", "mb_per_s"))  # fmt: skip
        table.append(cell | cell_stats.CellStats(seconds, mb_per_s).columns())
    return table


def join_cells(table: list[dict], downloads: list[dict], cpu_scale: float = 1.0) -> list[dict]:
    """The percentile table's cells, in numeric order, each with its records' concurrency,
    throttling, CPU (against the allowance divided by `cpu_scale`) and keys (fanout.workloads.download.pressure)."""
    by_cell: dict[tuple, list[dict]] = {}
    for download in downloads:
        by_cell.setdefault(CELLS.key(download), []).append(download)
    joined = [dict(row, **achieved_concurrency(by_cell.get(CELLS.key(row), [])),
                   **pressure.cell_figures(by_cell.get(CELLS.key(row), []), cpu_scale)) for row in table]  # fmt: skip
    return sorted(joined, key=CELLS.sort_key)


def aggregates(downloads: list[dict]) -> dict:
    """A cell's aggregate GB/s and GET/s over its steady window (fanout.results.aggregate)."""
    return aggregate.of(downloads, downloads[0].get("concurrency_limit") if downloads else None, gets)


def gets(download: dict) -> int | None:
    """The GetObject requests of a download: its record's S3 responses less the HeadObject its
    strategy sends first (none known for crt, whose requests botocore never sees)."""
    if download.get("requests") is None:
        return None
    return max(0, download["requests"] - _heads(download.get("strategy") or "", download["bytes"]))


@functools.cache
def _heads(strategy: str, size: int) -> int:
    return strategies.parse(strategy).heads(size) if strategy else 0


def with_predictions(cell_rows: list[dict], record: run_record.RunRecord, downloads: list[dict]) -> list[dict]:
    """The cells, each with the model's predicted median seconds (`predicted_seconds_p50`,
    fanout.workloads.download.prediction.cell_prediction) where the run has one: local runs under a model."""
    counts: dict = {}
    for download in downloads:
        counts[CELLS.key(download)] = counts.get(CELLS.key(download), 0) + 1
    for row in cell_rows:
        predicted = prediction.cell_prediction(record.backend, record.network, row, counts.get(CELLS.key(row), 0))
        row |= {} if predicted is None else {PREDICTED: predicted}
    return cell_rows


def achieved_concurrency(downloads: list[dict]) -> dict:
    """Peak and steady-part mean of overlapping downloads, the target, and cold starts."""
    intervals = [(d["start_ms"], d["end_ms"]) for d in downloads if "start_ms" in d and "end_ms" in d]
    if not intervals:
        return {"target": None, "peak_concurrency": 0, "steady_mean_concurrency": 0.0, "cold_starts": 0, "cold_start_share": None}
    target = downloads[0].get("concurrency_limit")
    window = concurrency.steady_window(intervals, target)
    cold = sum(bool(d.get("cold_start")) for d in downloads)
    return {
        "target": target,
        "peak_concurrency": concurrency.peak(intervals),
        "steady_mean_concurrency": round(concurrency.mean(intervals, *window), 2),
        "steady_window_ms": [round(window[0]), round(window[1])],
        "cold_starts": cold,
        "cold_start_share": round(cold / len(downloads), 4),
    }


def lambda_window(record: run_record.RunRecord, record_times_ms: list[int]) -> tuple[int, int]:
    """First send to the run's last record (plus slack): where the run's REPORT lines are."""
    start = record.first_send_ms or int(time.time() * 1000)
    last = max(record_times_ms, default=record.last_send_ms or start)
    return start, int(last) + REPORT_LINE_SLACK_MS


def warnings(summary: "Summary") -> list[str]:
    """What makes the tables untrustworthy or incomplete, loudly; redrawn from the saved files
    the report says the same, so the way out is to read the logs again (runs.refresh_hint)."""
    c, result = summary.header.counts, []
    accounted = c.done + len(summary.header.dead_lettered)
    again = runs.refresh_hint(_run(summary).run_id)
    if accounted < c.sent:
        result.append(
            f"only {c.done} of {c.sent} sent messages have a download record "
            f"({len(summary.header.dead_lettered)} dead-lettered): this report is incomplete (the run was not "
            f"finished, or logs were still arriving); run `make wait`, then {again}"
        )
    if c.in_query != c.measured:
        result.append(
            f"the percentile query saw {c.in_query} downloads but the log group holds "
            f"{c.measured}: the query results are partial; in a minute, {again}"
        )
    if c.measured > c.done:
        result.append(f"{c.measured - c.done} messages were downloaded twice (SQS delivers at least once)")
    if c.requested is not None and c.sent < c.requested:
        result.append(f"{c.requested - c.sent} of {c.requested} messages were never sent (see run.json)")
    result += [line for cell in _cells(summary) if (line := not_honoured(cell, CELLS.label(cell)))]
    result += [line for n, line in few_at_target(summary) if not n]
    return result + list(filter(None, [pressure.sdk_warning(summary.body.sdk or [])]))


def notes(summary: "Summary") -> list[str]:
    """Information beside the tables: the cells whose at-target figures stand on fewer than
    ENOUGH_AT_TARGET downloads (the documented MULTIPLIER=10 gives such cells), and how many
    messages would give enough. A cell with none at target is a warning instead."""
    return [line for n, line in few_at_target(summary) if n]


def few_at_target(summary: "Summary") -> list[tuple[int, str]]:
    """(downloads at target, concurrency.few_at_target's line) of each cell with too few."""
    fraction, found = at_target(summary)["fraction"], []
    for cell in _cells(summary):
        # A summary saved before most_ran_at and span_s were kept has no such line to give.
        if "n" in cell and cell["target"] and "most_ran_at" in cell:
            line = concurrency.few_at_target(CELLS.label(cell), cell["n"], cell["n_all"], cell["target"], fraction,
                                             cell["most_ran_at"], cell["span_s"])  # fmt: skip
            found += [(cell["n"], line)] if line else []
    return found


# ---- output ----------------------------------------------------------------------------------


def sections(summary: "Summary", images: tuple = ()) -> Report:
    """The report as sections (fanout.results.sections): the terminal's few lines and the files'
    account of how the run was made, the tables at target, the other tables, and `images`."""
    at_target(summary)  # before anything is drawn or written: the summary keeps it
    varying = CELLS.varying([CELLS.key(cell) for cell in summary.body.cells])
    shared = tuple(i for i, name in enumerate(CELLS.fields) if name not in varying)  # on the terminal, said once
    blocks = [*_terminal_header(summary, varying), *_how(summary), *(Text(f"note: {line}") for line in notes(summary))]
    at = at_target(summary)["cells"]
    if not any(cell["n"] for cell in at):
        blocks.append(Text(NONE_AT_TARGET, "bold"))
    for metric, (title, caption) in METRICS.items() if any(cell["n"] for cell in at) else ():
        blocks.append(Table(title + AT_TARGET_TITLE, _metric_rows(at, metric), note=caption, shared=shared))
    blocks += [
        Table(EVERY_DOWNLOAD_TITLE, _metric_rows(summary.body.cells, "mb_per_s"), note=EVERY_DOWNLOAD_NOTE,
              caption=sentence(EVERY_DOWNLOAD_NOTE), shared=shared),
        Table("Achieved concurrency", _concurrency_rows(summary), note=_concurrency_note(summary),
              caption=sentence(_concurrency_note(summary, " ")), shared=shared),
        aggregate_table(_cells(summary), list(CELLS.titles.values()),
                        lambda cell: [CELLS.key(cell).text(name) for name in CELLS.fields], shared),
    ]  # fmt: skip
    predicted = _prediction_rows(summary)
    if predicted:  # local runs under a model only
        blocks.append(Table(PREDICTION_TITLE, predicted, note=PREDICTION_NOTE, caption=sentence(PREDICTION_NOTE),
                            labels=len(CELLS.fields), shared=shared))  # fmt: skip
    blocks.append(Table(PRESSURE_TITLE, _pressure_rows(summary.body.cells), note=pressure.NOTE, caption=sentence(pressure.NOTE),
                        labels=len(CELLS.fields), shared=shared))  # fmt: skip
    for title, rows in strategy_tables(summary.body.strategies):  # one strategy: the tables above say it all
        alone = len(rows) == 2  # one strategy, which the header states: its column goes
        blocks.append(Table(title, rows, note=STRATEGY_NOTE, caption=sentence(STRATEGY_NOTE), labels=1,
                            shared=(0,) if alone else (), only=FILES if alone else None))  # fmt: skip
    for name, (title, caption) in QUERY_TABLES.items():
        if getattr(summary.body, name):
            rows, common = query_rows(getattr(summary.body, name), said=tuple(n for n in CELLS.fields if n not in varying))
            note = "; ".join(filter(None, [common, caption]))
            labels = rows[0].index(METRIC_COLUMN) + 1 if METRIC_COLUMN in rows[0] else 0
            blocks.append(Table(title, rows, note=note, caption=note, labels=labels))
    if summary.body.ground_truth:
        blocks.append(truth_table(summary.body.ground_truth))
    if summary.body.endpoint_ips:  # on the terminal only when a cell has several addresses to compare
        note = _endpoint_note(summary)
        blocks.append(Table(ENDPOINT_TITLE, endpoint_ips.rows_for_display(summary.body.endpoint_ips, CELLS.fields),
                            note=note, caption=sentence(note), labels=len(CELLS.fields) + 1, shared=shared,
                            only=None if endpoint_ips.compares(summary.body.endpoint_ips) else FILES))  # fmt: skip
    pictures = described(images, plots.CAPTIONS)
    first = tuple(image for image in pictures if image.path.name == plots.ANSWER)
    rest = tuple(image for image in pictures if image not in first)
    joined = _cells(summary)
    return Report(f"s3-fanout run {summary.run_id}", summary.header.network,
                  [*blocks, *_closing(summary), Figures(rest)], answer=answer(summary, shared, first),
                  header=CELLS.header(joined[0], [n for n in CELLS.fields if n not in varying]) if joined else (),
                  links=_links(summary), limits=summary.header.limits or "")  # fmt: skip


ANSWER_COLUMNS = ("at target", "p50 MB/s (95% CI)", "p99 MB/s (95% CI)", "p50 s (95% CI)", "p99 s (95% CI)",
                  "aggregate GB/s", "GET/s")  # fmt: skip
MODEL_COLUMNS = ("model p50 s", "measured/model")


def answer(summary: "Summary", shared: tuple[int, ...], figure: tuple) -> list:
    """What the run found, first: the answer's sentence, the one plot that shows it, the answer's
    table (answer_table; after the plot, which then stays on the first screen however many cells
    there are), and what makes the figures incomplete."""
    joined = _cells(summary)
    varying = CELLS.varying([CELLS.key(cell) for cell in joined])
    table = answer_table(joined, list(CELLS.titles.values()),
                         lambda cell: [CELLS.key(cell).text(name) for name in CELLS.fields],
                         [(_run(summary).network or {}).get("scale")], shared)  # fmt: skip
    return [Text(finding(joined, lambda cell: CELLS.label(cell, varying)), only=FILES), Figures(figure, headed=False),
            table, Warnings(tuple(warnings(summary)), only=FILES)]  # fmt: skip


def answer_table(cell_rows: list[dict], titles: list[str], key_text, scales: list[float | None],
                 shared: tuple[int, ...] = ()) -> Table:  # fmt: skip
    """Per cell (labelled by `titles` and `key_text(cell)`) the median and p99 throughput and
    seconds of the downloads at target with their intervals, how many ran at target, the
    aggregate figures and, under a model, the model's median; `scales`: the network scales the
    figures were made at (None: none, or AWS)."""
    predicted = any(PREDICTED in cell for cell in cell_rows)
    rows: list[list] = [[*titles, *ANSWER_COLUMNS, *(MODEL_COLUMNS if predicted else ())]]
    for cell in cell_rows:
        rows.append([*key_text(cell), at_target_share(cell),
                     *(with_ci(cell, metric, stat) for metric in ("mb_per_s", "seconds") for stat in stats.CI_STATISTICS),
                     cell.get("aggregate_gb_per_s"), cell.get("aggregate_gets_per_s"),
                     *([cell.get(PREDICTED), ratio(cell)] if predicted else [])])  # fmt: skip
    note = answer_note(scales, predicted)
    return Table("Answer", rows, note=note, footnotes=(sentence(note),), labels=len(titles), shared=shared,
                 headed=False, only=FILES)  # fmt: skip


AGGREGATE_TITLE = "Aggregate over the steady window"
AGGREGATE_NOTE = ("Every download of the cell within its steady window, pro rata at its edges (docs/statistics.md, "
                  f"Aggregate figures); {aggregate.UNITS}")  # fmt: skip
AGGREGATE_TERMINAL = ("bytes of every download within the steady window / its length, pro rata at its\n  "
                      "edges (decimal GB/s); GET/s: GetObject requests per second (none for crt)")  # fmt: skip


def aggregate_table(cell_rows: list[dict], titles: list[str], key_text, shared: tuple[int, ...] = ()) -> Table:
    """Per cell the steady window's length and the aggregate GB/s and GET/s over it."""
    rows: list[list] = [[*titles, "window s", "aggregate GB/s", "GET/s"]]
    rows += [[*key_text(cell), cell.get("aggregate_window_s"), cell.get("aggregate_gb_per_s"),
              cell.get("aggregate_gets_per_s")] for cell in cell_rows]  # fmt: skip
    return Table(AGGREGATE_TITLE, rows, note=AGGREGATE_TERMINAL, caption=sentence(AGGREGATE_NOTE), labels=len(titles),
                 shared=shared)  # fmt: skip


def at_target_share(cell: dict) -> str:
    """`68 of 80 (85%)`: the downloads at target among the cell's."""
    n, n_all = cell.get("n"), cell.get("n_all")
    return "-" if not n_all else f"{n} of {n_all} ({n / n_all:.0%})"


def with_ci(cell: dict, metric: str, stat: str) -> str:
    """`42.5 (41.9-42.6)`: a statistic and its interval, as the tables format numbers."""
    value = cell.get(cell_stats.column(metric, stat))
    low, high = (cell.get(cell_stats.ci_column(stat, end, metric)) for end in cell_stats.CI_ENDS)
    if value is None:
        return "-"
    return tables.fmt(value) + ("" if low is None else f" ({tables.fmt(low)}-{tables.fmt(high)})")


def finding(cell_rows: list[dict], label) -> str:
    """The answer in a sentence or two: the best cell (named by `label(cell)` when there are
    several), its median and aggregate, and whether the machine delivered the model's figures."""
    median = cell_stats.column("mb_per_s", "p50")
    measured = [cell for cell in cell_rows if cell.get(median) is not None]
    if not measured:
        return "No download ran at target: the tables below are of every download."
    best = max(measured, key=lambda cell: cell[median])
    where = f"The best cell, {label(best)}, reached" if len(cell_rows) > 1 else "Downloads at target reached"
    text = (f"{where} a median {with_ci(best, 'mb_per_s', 'p50')} MB/s per download, "
            f"{with_ci(best, 'seconds', 'p50')} s each ({best['n']} of {best['n_all']} at target)")  # fmt: skip
    if best.get("aggregate_gb_per_s") is not None:
        text += f"; together its downloads received {best['aggregate_gb_per_s']:.3g} GB/s over the steady window"
    value = ratio(best)
    if value is not None:
        verdict = "the model's figures" if HONOURED[0] <= value <= HONOURED[1] else "not the model's figures"
        text += f". The model predicted {tables.fmt(best[PREDICTED])} s: measured/predicted {value:g}, {verdict}"
    return text + "."


def answer_note(scales: list[float | None], predicted: bool) -> str:
    """The answer table's units and methods, and what the network scales do to the aggregate."""
    note = (f"Over the downloads at target; 95% CI: {stats.CI_METHOD}; aggregate: the bytes all the cell's downloads "
            f"received within its steady window over its length, and the GETs they made within it per second "
            f"(pro rata at the window's edges; - for crt, which reports no requests): {aggregate.UNITS}")  # fmt: skip
    scaled = sorted({scale for scale in scales if scale and scale != 1})
    if scaled:
        at = " and ".join(f"{scale:g}" for scale in scaled)
        note += (f"; simulated at network scale {at}: every rate, the aggregate too, is the model's divided by the "
                 "scale (first-byte waits are not)")  # fmt: skip
    if predicted:
        note += f"; model: the model's median download seconds for the cell ({PREDICTION_TITLE})"
    return note


def _links(summary: "Summary") -> tuple:
    """The run's sweep's page and its study's, when it was a sweep's cell."""
    run, tags = _run(summary), {cell["experiment_tag"] for cell in summary.body.cells}
    if not run.sweep or not run.sweep.sweep_id or len(tags) != 1:
        return ()
    return links(runs.run_dir(run.run_id), sweeps.related(run.sweep.sweep_id, tags.pop()))





def _terminal_header(summary: "Summary", varying: tuple[str, ...]) -> list:
    """The terminal's first lines: the run, its network, SDK, sweep cell, and the cell values
    every row shares (its tables then leave those columns out)."""
    run = _run(summary)
    first, *sets = sdk_lines(summary)
    lines = [Text(f"run {run.run_id} on the {run.backend} backend, stack {run.stack.stack!r}", "bold"),
             Text(summary.header.network, "bold"),
             *([Text(summary.header.limits, "bold")] if summary.header.limits else []),
             Text("\n".join([first, *(textwrap.fill(line, 78, initial_indent="  ", subsequent_indent="    ")
                                      for line in sets)]))]  # fmt: skip
    if run.sweep:
        lines.append(Text(sweep_note(run.sweep)))
    shared = tuple(name for name in CELLS.fields if name not in varying)
    if summary.body.cells and shared:
        which = "cell" if len(summary.body.cells) == 1 else "every cell"
        lines.append(Text(f"{which}: {CELLS.label(summary.body.cells[0], shared)}"))
    return [replace(line, only=TERMINAL) for line in lines]


def _closing(summary: "Summary") -> list:
    """The terminal's last lines (counts, methods, cost, warnings) and the files' cost section."""
    c = summary.header.counts
    lines = [f"sent {c.sent}: download records {c.measured} ({c.done} seqs), "
             f"error records {c.error_records}, dead-lettered {len(summary.header.dead_lettered)}",
             f"percentiles: {_percentiles(summary)}",
             *(run_cost.lines(summary.body.cost) if summary.body.cost is not None else [])]  # runs reported before it existed
    blocks = [*(Text(line, only=TERMINAL) for line in lines), Warnings(tuple(warnings(summary)), only=TERMINAL)]
    if summary.body.cost is not None:
        blocks += [Heading("Cost"), Text("\n".join(f"- {line.strip()}" for line in run_cost.lines(summary.body.cost)),
                                         only=FILES), Text(run_cost.NOTE, only=FILES)]  # fmt: skip
    return blocks


def prediction_rows(cell_rows: list[dict], keys, key_text) -> list[list] | None:
    """Measured against predicted median seconds per cell, None when no cell has a prediction
    (AWS runs, runs without a model, runs reported before predictions existed). `keys` are the
    row label's titles and `key_text(row)` its values."""
    if not any(PREDICTED in row for row in cell_rows):
        return None
    rows = [[*keys, "measured p50 s", "predicted p50 s", "measured/predicted"]]
    return rows + [[*key_text(row), row.get("seconds_p50"), row.get(PREDICTED), ratio(row)] for row in cell_rows]


def ratio(row: dict) -> float | None:
    """measured/predicted median seconds of a cell (None without both)."""
    measured, predicted = row.get("seconds_p50"), row.get(PREDICTED)
    return None if measured is None or not predicted else round(measured / predicted, 3)


def not_honoured(row: dict, label: str) -> str | None:
    """One line when a cell's measured/predicted is outside HONOURED: its figures are this
    machine's, not the model's."""
    value = ratio(row)
    if value is None or HONOURED[0] <= value <= HONOURED[1]:
        return None
    return (f"cell {label}: measured/predicted median seconds {value:g}, outside {HONOURED[0]:g}-{HONOURED[1]:g}: "
            "this machine did not honour the model (CPU or emulator bound), so these figures are not the model's; "
            "use a larger NETWORK_SCALE or fewer environments (CONCURRENCY)")


def sdk_lines(summary: "Summary") -> list[str]:
    """The SDK the stack was deployed with (SDK=), then each version set the records name."""
    deployed = _run(summary).stack.sdk
    where = "the function's zip" if deployed == "bundled" else "the Lambda runtime's own"
    sets = [f"{pressure.sdk_text(s)}: {s['records']} records" for s in summary.body.sdk or []]
    return [f"SDK={deployed} ({where}); the records ran on:", *(sets or ["versions not in the records"])]


def _pressure_rows(cell_rows: list[dict], columns: tuple[str, ...] = CELLS.fields) -> list[list]:
    rows: list[list] = [[*(CELLS.titles[name] for name in columns), *PRESSURE_HEADERS]]
    for cell in cell_rows:
        key = CELLS.key(cell)
        rows.append([*(key.text(name) for name in columns), *(cell.get(name) for name in PRESSURE_COLUMNS)])
    return rows


def query_rows(rows: list[dict], said: tuple[str, ...] = ()) -> tuple[list[list], str]:
    """A saved query's rows as a table, and the values all its rows share (as `name value, ...`)
    but those of the columns `said`, which the report states once above its tables.

    Columns named <metric>_<stat> (seconds_p50...) become one row per metric with a column per
    statistic; the other columns then repeat on every metric row, so those that are the same
    on every row leave the table for the shared text (with one metric, nothing repeats).
    """
    matched = [m for m in map(STAT_COLUMN.match, rows[0]) if m]
    stat_columns = [m.string for m in matched]
    if not stat_columns:
        return [list(rows[0])] + [list(row.values()) for row in rows], ""
    metrics = list(dict.fromkeys(m["metric"] for m in matched))
    stats = list(dict.fromkeys(m["stat"] for m in matched))
    plain = [c for c in rows[0] if c not in stat_columns]
    shared = [c for c in plain if len({row[c] for row in rows}) == 1] if len(metrics) > 1 else []
    plain = [c for c in plain if c not in shared]
    table = [[*plain, METRIC_COLUMN, *stats]]
    for row in rows:
        for metric in metrics:
            table.append([*(row[c] for c in plain), metric, *(row.get(f"{metric}_{stat}") for stat in stats)])
    return table, ", ".join(f"{c} {tables.fmt(rows[0][c])}" for c in shared if c not in said)


def truth_table(rows: list[dict]) -> Table:
    """The ground-truth table (fanout.local.network.truth rows), its notes below it."""
    return Table("Ground truth", _truth_rows(rows), note=TRUTH_NOTE, caption=sentence(TRUTH_NOTE),
                 footnotes=tuple(_truth_notes(rows)), labels=2)  # memory size and parameter


def _truth_rows(rows: list[dict]) -> list[list]:
    """The ground truth as a table narrow enough for 80 columns: short labels with their units,
    and a mark where a note (_truth_notes) qualifies the estimate."""
    table: list[list] = [["memory MB", "parameter", "injected", "estimated", "ratio", "n"]]
    for row in rows:
        label, factor = TRUTH_LABELS.get(row["parameter"], (row["parameter"].replace("_", " "), 1))
        mark = _truth_mark(row)
        estimated = _scaled(row["estimated"], factor) if _estimable(row) else NOT_ESTIMABLE
        table.append([row["memory_size"], f"{label} {mark}".strip(), _scaled(row["injected"], factor),
                      estimated, row["ratio"] if _estimable(row) else None, row["downloads"]])
    return table


def _estimable(row: dict) -> bool:
    """Could the run's object show this parameter? (A summary saved before `estimable` was kept:
    the sustained rate and burst of an object within the burst could not.)"""
    return row.get("estimable", not (row["inside_burst"] and row["parameter"] in truth.BUCKET_PARAMETERS))


def _truth_mark(row: dict) -> str:
    if row["parameter"] == "first_byte_seconds":
        return UPPER_BOUND if row.get("late") else ""
    return INSIDE_BURST if row["inside_burst"] else ""


def _truth_notes(rows: list[dict]) -> list[str]:
    """What the marks of _truth_rows say: the first-byte estimate is an upper bound when the
    emulator answered some requests later than their drawn latency (fanout.local.network.late)."""
    notes = []
    if any(_truth_mark(row) == INSIDE_BURST for row in rows):
        notes.append(f"{INSIDE_BURST} {NOT_ESTIMABLE}: the object is no larger than the burst, so a download "
                     "never drains the bucket nor reaches the sustained rate; an object larger than the "
                     "burst shows both")  # fmt: skip
    for row in rows:
        if _truth_mark(row) == UPPER_BOUND:
            notes.append(f"{UPPER_BOUND} {row['memory_size']} MB: {row['late']} of {row['requests']} requests' "
                         "emulator answer exceeded the drawn latency: estimate is an upper bound")
    return notes


def _scaled(value, factor: float):
    return value if value is None or factor == 1 else value * factor


def _endpoint_note(summary: "Summary") -> str:
    left_out = summary.body.endpoint_ips_excluded
    return endpoint_ips.FLAG_NOTE + (f"; {left_out} downloads reached several addresses (or none known: crt) and "
                                     "are left out" if left_out else "")  # fmt: skip


def sweep_note(sweep: run_record.RunSweep) -> str:
    """Which sweep cell a run was, and whether it started with fresh execution environments."""
    return f"sweep {sweep.sweep_id}, cell {sweep.cell}: {sweep.environments} execution environments"


def strategy_tables(rows: list[dict]) -> list[tuple[str, list[list]]]:
    """strategy-comparison rows as one table per memory size and object size, whose rows are
    the strategies (in the query's order: fastest median first)."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["memory_size"], row["bytes"]), []).append(row)
    return [(f"Strategies at {memory} MB, object {format_size(int(size))}",
             [list(STRATEGY_COLUMNS.values())] + [[row.get(c) for c in STRATEGY_COLUMNS] for row in group])
            for (memory, size), group in groups.items()]  # fmt: skip


AT_TARGET_TITLE = ", downloads at target"
EVERY_DOWNLOAD_TITLE = "Throughput (MB/s), every download (the saved query)"
NONE_AT_TARGET = "No download ran at target (see the warning below); the table of every download:"
EVERY_DOWNLOAD_NOTE = "the queue mapping's ramp and the run's tail included; decimal MB/s"


def _metric_rows(cell_rows: list[dict], metric: str, columns: tuple[str, ...] = CELLS.fields) -> list[list]:
    rows: list[list] = [[*(CELLS.titles[name] for name in columns), "n", *STATS]]
    for cell in cell_rows:
        key = CELLS.key(cell)
        rows.append([*(key.text(name) for name in columns), cell["n"], *(cell.get(cell_stats.column(metric, stat)) for stat in STATS)])
    return rows


def _cells(summary: "Summary") -> list[dict]:
    """Each cell's achieved concurrency (from every download) with its figures at target."""
    by_key = {CELLS.key(cell): cell for cell in at_target(summary)["cells"]}
    return [cell | {k: v for k, v in by_key.get(CELLS.key(cell), {}).items() if k not in CELLS.fields}
            for cell in summary.body.cells]  # fmt: skip


def _concurrency_rows(summary: "Summary", columns: tuple[str, ...] = CELLS.fields) -> list[list]:
    rows: list[list] = [[*(CELLS.titles[name] for name in columns), "target", "peak", "steady mean", "at target",
                         "left out", "cold starts", "cold share"]]  # fmt: skip
    for cell in _cells(summary):
        key, share = CELLS.key(cell), cell["cold_start_share"]
        rows.append([*(key.text(name) for name in columns), cell["target"], cell["peak_concurrency"],
                     cell["steady_mean_concurrency"], cell.get("n"), cell.get("n_excluded"), cell["cold_starts"],
                     "-" if share is None else f"{share:.1%}"])  # fmt: skip
    return rows


def _prediction_rows(summary: "Summary", columns: tuple[str, ...] = CELLS.fields) -> list[list] | None:
    return prediction_rows(_cells(summary), [CELLS.titles[name] for name in columns],
                           lambda cell: [CELLS.key(cell).text(name) for name in columns])


def _concurrency_note(summary: "Summary", between: str = "\n  ") -> str:
    return f"steady: {summary.body.steady_definition};{between}at target: {at_target(summary)['definition']}"


def _percentiles(summary: "Summary", between: str = "\n  ") -> str:
    """How the percentiles were computed: the tables at target from the records, the saved
    query's on the run's backend (a run that does not record it cannot say)."""
    backend = summary.header.run.backend
    method = backends.get(backend).percentile_method if backend else "not recorded"
    return f"at target, from the records:{between}{stats.PERCENTILE_METHOD};{between}every download: {method}"


CSV_COLUMNS = [*CELLS.fields, "n", "n_all", "n_excluded", *cell_stats.COLUMNS, *cell_stats.CI_COLUMNS,
               *cell_stats.SECONDS_CI_COLUMNS, *aggregate.COLUMNS, "target",
               "peak_concurrency", "steady_mean_concurrency", "cold_starts", "cold_start_share", *PRESSURE_COLUMNS,
               "at_target_fraction", "network", "limits"]  # summary.csv: the figures at target


def write(summary: "Summary", plots_too: bool = True) -> list:
    """The report's files in results/<run_id>/, each written atomically; returns their paths.
    Without the plots (`plots_too` False) when only the records and tables are wanted, as a
    sweep writes for each cell."""
    at_target(summary)  # before summary.json is written: it keeps the figures at target
    written = summaries.write(summary)
    folder = runs.run_dir(_run(summary).run_id)
    h = summary.header
    rows = [dict(cell, **h.label_columns(), at_target_fraction=at_target(summary)["fraction"])
            for cell in _cells(summary)]  # fmt: skip
    columns = CSV_COLUMNS + ([PREDICTED] if any(PREDICTED in row for row in rows) else [])  # old runs: none
    written.append(runs.write_csv(folder / "summary.csv", columns, rows, "ignore"))
    fraction = at_target(summary)["fraction"]
    labels = run_sections.labels(h.network, h.limits)
    images = plots.draw(h.records, summary.body.cells, labels, fraction, folder) if plots_too else []
    return [*written, *images, *report_files.write(sections(summary, tuple(images)), folder)]


def _how(summary: "Summary") -> list:
    """The files' account of how the run was made, its units and methods."""
    run, c = _run(summary), summary.header.counts
    s, p = run.stack, run.parameters
    options = p.workload_options or {}
    how = [
        f"- **{summary.header.network}**",
        *([f"- **{summary.header.limits}**"] if summary.header.limits else []),
        f"- backend: {run.backend}; stack {s.stack!r} in {s.region}" + (f" (emulator {s.endpoint})" if s.endpoint else ""),
        f"- function: {s.memory} MB, reserved concurrency {s.concurrency}, {s.architecture}, "
        f"timeout {s.timeout} s, batch size {s.batch_size}, DLQ after {s.max_receive_count} receives",
        f"- object: s3://{s.bucket}/{s.object_key}, {s.object_size:,} bytes; strategy {options.get('strategy')} ({options.get('strategy_from')})",
        f"- messages: {p.messages:,} requested, {c.sent:,} sent at {run.send_rate_per_s} msgs/s; "
        f"tag {p.experiment_tag!r}" + (f"; injected failures: {p.inject_failures}" if p.inject_failures else ""),
        f"- records: {c.measured} downloads ({c.done} seqs), {c.error_records} errors, "
        f"{len(summary.header.dead_lettered)} messages in the dead-letter queue",
        f"- version: {run.version}",
        f"- {' '.join(sdk_lines(summary))}",
    ]
    if run.sweep:
        how.append(f"- {sweep_note(run.sweep)}")
    texts = [
        "\n".join(how),
        "Units: download time in seconds (wall clock, measured in the function); throughput in decimal "
        "units, MB/s = bytes / s / 10^6 and Mbit/s = 8 x MB/s (the field `mbps` of records.jsonl is Mbit/s).",
        f"Percentiles: {_percentiles(summary, ' ')}.",
        f"Tables at target: over the {at_target(summary)['definition']}; the table of every download follows them.",
    ]
    return [Heading("How the run was made"), *(Text(text, only=FILES) for text in texts)]
