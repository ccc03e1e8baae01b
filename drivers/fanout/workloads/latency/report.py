"""The latency workload's report: latency against object size, per storage class and operation.

Tables of n, p50, p90, p99 and mean seconds per size, the Express/Standard ratio of medians with
its bootstrap interval when both classes ran, and a log-log plot, each with the run's network
label. Methods and files: drivers/fanout/workloads/latency/README.md (report).
"""

import json
from dataclasses import asdict, dataclass
from typing import ClassVar

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fanout.results import cells, figures, report_files, run_folders as runs, run_record
from fanout.results import run_sections, stats, summary as summaries
from fanout.results.summary import Row, RunSummary
from fanout.results.sections import FILES, TERMINAL, Block, Heading, Report, Table, Text, images as described, on_only, sentence
from fanout.common import function_modules
from fanout.local import backends
from fanout.workloads.latency import WORKLOAD
from fanout.common.sizes import format_decimal_size as format_size

_definition = function_modules.load("latency")
CLIENTS, ORDERS = _definition.CLIENTS, _definition.ORDERS
QUERY = WORKLOAD.query
CELLS = cells.of(WORKLOAD)  # a query row's or a record's cell: memory, concurrency, storage, operation, size, tag
STATS = ("p50", "p90", "p99", "avg")
# (operation, record field, title): what a column group measures.
MEASURES = (("put", "seconds", "put"), ("get", "seconds", "get"), ("get", "first_byte_seconds", "get first byte"))
LINE_STYLES = {"put": ("-", "o"), "get": ("--", "s"), "get first byte": (":", "^")}  # measure -> (line, marker)
RATIO = ("express", "standard")  # numerator, denominator
MEDIAN_TITLE = "Median latency by size and storage class (s)"
PLOT = "latency.png"
CAPTION = "Median latency against object size per storage class and measure (log-log), with the p10-p90 band"
UNITS = "seconds, measured in the function with the monotonic clock; sizes in decimal units (1 KB = 1000 bytes)"


def _seconds(value) -> str:
    """Four significant digits: local figures are milliseconds, a 100 MB transfer is seconds."""
    return "-" if value is None else f"{value:.4g}"


@dataclass
class Body:
    """What the latency report adds to every run's summary (fanout.results.summary): its units and
    methods, the saved query's rows (a cell each) and the Express/Standard ratios."""

    LAYOUT: ClassVar[tuple[str, ...]] = ("run", "network", "limits", "units", "percentiles", "ci_method", "counts", "dead_lettered",
                        "rows", "ratios")  # fmt: skip
    COUNTS: ClassVar[dict[str, str]] = summaries.count_names("calls")

    units: str
    percentiles: str
    ci_method: str
    rows: list[Row]
    ratios: list[Row]


Summary = RunSummary[Body]


def build(stack, record: run_record.RunRecord) -> Summary:
    """Everything the report shows (summary.json is this, less the records)."""
    got = summaries.collect(stack, record, WORKLOAD.name, QUERY, "calls")
    return summaries.new(got.header, Body(UNITS, backends.get(record.stack.backend).percentile_method, stats.CI_METHOD,
                                          got.rows, ratios(got.of_event(WORKLOAD.name))))  # fmt: skip


def ratios(calls: list[dict]) -> list[dict]:
    """Express/Standard ratio of medians per size and measure, with its bootstrap CI; none
    unless both classes were measured."""
    found = []
    for operation, field, title in MEASURES:
        for size in sorted({r["size"] for r in calls}):
            a, b = (_values(calls, storage, operation, field, size) for storage in reversed(RATIO))
            if a and b:
                [ci] = stats.ratio_intervals(a, b, [50])
                found.append({"size": size, "measure": title, "n": [len(b), len(a)],
                              "ratio_p50": float(np.median(b) / np.median(a)), "ci": ci})  # fmt: skip
    return found


def _values(calls, storage, operation, field, size) -> list[float]:
    return [r[field] for r in calls if _at(CELLS.key(r), storage, operation, size) and r.get(field) is not None]


def _at(cell, storage: str, operation: str, size: int | None = None) -> bool:
    """Is `cell` of this class and operation (and size, when given)?"""
    return (cell.storage, cell.operation) == (storage, operation) and size in (None, cell.size)


def groups(rows: list[dict]) -> list[tuple[str, str, str, str]]:
    """(storage, operation, query column prefix, measure title) of every column group present."""
    classes = sorted({row["storage"] for row in rows})
    return [(storage, operation, field, title) for storage in classes for operation, field, title in MEASURES
            if any(row["storage"] == storage and row["operation"] == operation for row in rows)]  # fmt: skip


def size_table(rows: list[dict], storage: str, operation: str, field: str) -> list[list]:
    """Rows = size: n, p50, p90, p99, avg of one class and measure."""
    table: list[list] = [["size", "n", *STATS]]
    for row in sorted((r for r in rows if _at(CELLS.key(r), storage, operation)), key=CELLS.sort_key):
        table.append([CELLS.key(row).text("size"), int(row["calls"]), *(_seconds(row[f"{field}_{s}"]) for s in STATS)])
    return table


def median_table(rows: list[dict]) -> list[list]:
    """The answer: rows = size; a column per storage class and measure, its median (the tables
    per class and measure hold the other statistics)."""
    present = groups(rows)
    table = [["size", *(f"{storage} {title} p50 (s)" for storage, _, _, title in present)]]
    keyed = [(CELLS.key(row), row) for row in rows]
    for size in sorted({cell.size for cell, _ in keyed}):
        line: list = [format_size(size)]
        for storage, operation, field, _ in present:
            match = [row for cell, row in keyed if _at(cell, storage, operation, size)]
            line.append(_seconds(match[0][f"{field}_p50"]) if match else "-")
        table.append(line)
    return table


def ratio_table(found: list[dict]) -> list[list]:
    table = [["size", "measure", "n express/standard", "p50 ratio", "p50 ratio 95% CI"]]
    for r in found:
        ci = f"{r['ci'][0]:.3g} - {r['ci'][1]:.3g}" if r["ci"] else "-"
        table.append([format_size(r["size"]), r["measure"], f"{r['n'][0]}/{r['n'][1]}", f"{r['ratio_p50']:.3g}", ci])
    return table


def warnings(summary: Summary) -> list[str]:
    """What makes the tables incomplete (summaries.incomplete)."""
    return summaries.incomplete(summary.header, "calls")


def sections(summary: Summary, images: tuple = ()) -> Report:
    """The report as sections (fanout.results.sections): the files open with the medians by size
    and storage class, the Express / Standard ratios and the plot; a table per class and measure
    (the terminal's, narrow) follows."""
    h, body = summary.header, summary.body
    c, options = h.counts, h.run.parameters.workload_options or {}
    dead = len(h.dead_lettered)
    found = warnings(summary)
    blocks: list[Block] = run_sections.opening(
        h, "latency", run_sections.labels(h.network, h.limits), f"sizes {options.get('sizes')}, reps {options.get('reps')}, "
        f"storage {options.get('storage') or 'every deployed class'}, {calls_made(options)}", f"{c.sent} sent, {c.done} done, "
        f"{c.measured} calls, {c.error_records} error records, {dead} dead-lettered", body.units, body.percentiles)
    main: list[Block] = [Table(MEDIAN_TITLE, median_table(body.rows), labels=1, headed=False, only=FILES)
                         ] if body.rows else []  # fmt: skip
    blocks += [Table(f"{storage}: {title} (s)", size_table(body.rows, storage, operation, field))
               for storage, operation, field, title in groups(body.rows)]  # fmt: skip
    if body.ratios:
        main.append(Table("Express / Standard, ratio of medians", ratio_table(body.ratios), body.ci_method,
                          sentence(body.ci_method), labels=2))  # size and measure  # fmt: skip
    blocks += on_only(main, TERMINAL)
    blocks += run_sections.closing(f"sent {c.sent}: {c.done} done, {c.measured} calls, error records "
                                   f"{c.error_records}, dead-lettered {dead}", found, body.units, body.percentiles)  # fmt: skip
    return Report(f"s3-fanout latency run {h.run.run_id}", h.network, blocks,
                  answer=run_sections.answer(main, described(images, {PLOT: CAPTION}), found),
                  links=run_sections.run_links(h.run), limits=h.limits or "")


def calls_made(options: dict) -> str:
    """How the run's calls were made: the client of each call and the order of the repetitions
    (a run sent before both were options made them as today's defaults)."""
    client = options.get("client", CLIENTS[0])
    order = options.get("order", ORDERS[0])
    made = ("a new client per call, built before its timer (each call opens its own connection)" if client == "per-call"
            else "one pooled client per message (connections reused)")
    turns = ("every repetition of a class, then the next class's" if order == "by-class"
             else "the classes in turn within each repetition")
    return f"{made}; {turns}"


def write(summary: Summary, plots_too: bool = True) -> list:
    """The report's files in results/<run_id>/, each written atomically; returns their paths.
    Its one plot is drawn also for a sweep's cell (`plots_too` is the drivers' interface)."""
    written = summaries.write(summary)
    folder = runs.run_dir(summary.run_id)
    rows, h = summary.body.rows, summary.header
    held = h.label_columns()
    written.append(runs.write_csv(folder / "latency.csv", [*(rows[0] if rows else []), *held], [dict(row, **held) for row in rows]))
    labels = run_sections.labels(h.network, h.limits)
    images = [figures.save(figure(rows, h.records, labels), folder / PLOT)] if rows else []
    return [*written, *images, *report_files.write(sections(summary, tuple(images)), folder)]


def figure(rows: list[Row], records: list[Row], labels: list[str]):
    """Log-log: median latency against size per class and measure (the query's `rows`), p10-p90
    band (from the `records`), in milliseconds when every call took less than a second;
    captioned with the run's `labels` (network, limits)."""
    calls = [r for r in records if r.get("event") == "latency"]
    present = groups(rows)
    fig, ax = plt.subplots(figsize=(figures.WIDTH, 5.5), layout="constrained")
    colors = {storage: f"C{i}" for i, storage in enumerate(dict.fromkeys(g[0] for g in present))}
    factor, unit = figures.time_unit([r["seconds"] for r in calls])  # a call's whole time: its longest
    for storage, operation, field, title in present:
        sizes, p10, p50, p90 = [], [], [], []
        for size in sorted({r["size"] for r in calls}):
            values = _values(calls, storage, operation, field, size)
            if values:
                low, mid, high = np.percentile(values, [10, 50, 90]) * factor
                sizes.append(size)
                p10.append(low)
                p50.append(mid)
                p90.append(high)
        line, marker = LINE_STYLES[title]
        ax.plot(sizes, p50, color=colors[storage], linestyle=line, marker=marker, label=f"{storage} {title}")
        ax.fill_between(sizes, p10, p90, color=colors[storage], alpha=0.12)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Object size (bytes; 10^3 = 1 KB, 10^6 = 1 MB)")
    ax.set_ylabel(f"Latency ({unit}; line: median, band: p10-p90)")
    figures.title(fig, "S3 request latency against object size")
    ax.grid(True, which="both", alpha=0.3)
    figures.legend(fig, *ax.get_legend_handles_labels(), title="colour: storage class\nline: measure")
    return figures.caption(fig, labels)


@dataclass
class Across:
    """The summary of a report across runs (cells.json, in this order): a row per run, class,
    measure and size."""

    title: str
    runs: list[str]
    units: str
    percentiles: str
    rows: list[Row]
    limits: str


def across(run_ids: list[str], folder, title: str) -> Across:
    """Per run (a sweep's cell: its sizes and reps), storage class, measure and size: n, p50,
    p90, p99 and mean seconds computed from the runs' records.jsonl (numpy's percentiles, type 7)."""
    rows, records = [], [runs.load(run_id) for run_id in run_ids]
    for run_id, record in zip(run_ids, records):
        calls = [r for r in runs.load_records(run_id, "latency") if r.get("event") == "latency"]
        options = record.parameters.workload_options or {}
        for storage in sorted({r["storage"] for r in calls}):
            for operation, field, measure in MEASURES:
                for size in sorted({r["size"] for r in calls}):
                    values = _values(calls, storage, operation, field, size)
                    if values:
                        described = stats.describe(values)
                        rows.append({"run_id": run_id, "reps": options.get("reps"),
                                     "client": options.get("client", CLIENTS[0]), "storage": storage, "measure": measure,
                                     "size": size, "n": described["n"], **{s: described[s] for s in STATS},
                                     "network": record.network_label(), "limits": record.limits_label()})  # fmt: skip
    summary = Across(title, run_ids, UNITS, stats.PERCENTILE_METHOD, rows, run_record.limits_label(records))
    folder.mkdir(parents=True, exist_ok=True)
    runs.write_csv(folder / "cells.csv", list(rows[0]), rows)
    runs.write_text(folder / "cells.json", json.dumps(asdict(summary), indent=2) + "\n")
    report_files.write(across_sections(summary, folder), folder)
    return summary


def across_sections(summary: Across, folder=None) -> Report:
    """across()'s summary as sections: the networks, the units, one table; on the terminal, what
    it wrote into `folder`."""
    table = [["run", "reps", "client", "storage", "measure", "size", "n", *STATS]]
    table += [[r["run_id"], r["reps"], r.get("client", CLIENTS[0]), r["storage"], r["measure"], format_size(r["size"]), r["n"],
               *(_seconds(r[s]) for s in STATS)] for r in summary.rows]  # fmt: skip
    labels = sorted({r["network"] for r in summary.rows})
    main: list[Block] = [Table("Latency by run, class, measure and size (s)", table, UNITS, labels=6, headed=False)]  # run to size
    blocks: list[Block] = [Text(f"{summary.title}: latency across {len(summary.runs)} runs; {'; '.join(labels)}", "bold",
                   only=TERMINAL), *on_only(main, TERMINAL),
              Heading(run_sections.HOW_TITLE),
              *(Text(f"- **{label}**", only=FILES) for label in [*labels, *filter(None, [summary.limits])]),
              Text(f"Units: {UNITS}. Percentiles: {stats.PERCENTILE_METHOD}.", only=FILES)]  # fmt: skip
    if folder is not None:
        blocks.append(Text(f"wrote cells.csv, cells.json, report.md, index.html to {folder}", only=TERMINAL))
    return Report(summary.title, "; ".join(labels), blocks, answer=on_only(main, FILES),
                  links=run_sections.across_links(summary.runs, folder), limits=summary.limits)
