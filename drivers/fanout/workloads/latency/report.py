"""The latency workload's report: latency against object size, per storage class and operation.

Tables of n, p50, p90, p99 and mean seconds per size, the Express/Standard ratio of medians with
its bootstrap interval when both classes ran, and a log-log plot, each with the run's network
label. Methods and files: drivers/fanout/workloads/latency/README.md (report).
"""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fanout.results import cells, deadletters, figures, log_records as run_logs, report_files, run_folders as runs, run_record
from fanout.results import run_sections, stats
from fanout.results.sections import FILES, TERMINAL, Block, Heading, Report, Table, Text, images as described, on_only, sentence
from fanout import insights
from fanout.common import backends, function_modules
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


def _run(summary: dict) -> run_record.RunRecord:
    """The run record a summary holds (as run.json does)."""
    return run_record.RunRecord.from_json(summary["run"])


def build(stack, record: run_record.RunRecord) -> dict:
    """Everything the report shows, as plain data (summary.json is this, less the records)."""
    run_id = record.run_id
    start_ms, end_ms = runs.run_window(record)
    records = run_logs.run_records(insights.fetch_events(stack, start_ms, end_ms), run_id)
    calls = [r for r in records if r.get("event") == "latency"]
    rows = insights.run_saved(stack, QUERY, f'run_id = "{run_id}"', start_ms, end_ms)
    done = {r["seq"] for r in records if r.get("outcome") == "done"}
    return {
        "run": record.to_json(),
        "network": record.network_label(),
        "limits": record.limits_label(),
        "units": UNITS,
        "percentiles": backends.get(record.stack.backend).percentile_method,
        "ci_method": stats.CI_METHOD,
        "counts": {"sent": len(record.sent_seqs()), "seqs_done": len(done), "calls": len(calls),
                   "in_query": sum(int(row["calls"]) for row in rows),
                   "error_records": sum(r.get("event") == "error" for r in records)},  # fmt: skip
        "dead_lettered": sorted(deadletters.peek(stack, run_id, set(record.sent_seqs()) - done)),  # the others ended
        "rows": rows,
        "ratios": ratios(calls),
        "records": records,
    }


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


def warnings(summary: dict) -> list[str]:
    """What makes the tables incomplete (runs.incomplete)."""
    return runs.incomplete(summary, "calls", summary["counts"]["calls"])


def sections(summary: dict, images: tuple = ()) -> Report:
    """The report as sections (fanout.results.sections): the files open with the medians by size
    and storage class, the Express / Standard ratios and the plot; a table per class and measure
    (the terminal's, narrow) follows."""
    run, c, p = summary["run"], summary["counts"], summary["run"]["parameters"]
    options = p.get("workload_options", {})
    found = warnings(summary)
    blocks: list[Block] = run_sections.opening(
        summary, "latency", run_sections.labels(summary), f"sizes {options.get('sizes')}, reps {options.get('reps')}, "
        f"storage {options.get('storage') or 'every deployed class'}, {calls_made(options)}", f"{c['sent']} sent, {c['seqs_done']} done, "
        f"{c['calls']} calls, {c['error_records']} error records, {len(summary['dead_lettered'])} dead-lettered", found)
    main: list[Block] = [Table(MEDIAN_TITLE, median_table(summary["rows"]), labels=1, headed=False, only=FILES)
                         ] if summary["rows"] else []  # fmt: skip
    blocks += [Table(f"{storage}: {title} (s)", size_table(summary["rows"], storage, operation, field))
               for storage, operation, field, title in groups(summary["rows"])]  # fmt: skip
    if summary["ratios"]:
        main.append(Table("Express / Standard, ratio of medians", ratio_table(summary["ratios"]), summary["ci_method"],
                          sentence(summary["ci_method"]), labels=2))  # size and measure  # fmt: skip
    blocks += on_only(main, TERMINAL)
    blocks += run_sections.closing(summary, f"sent {c['sent']}: {c['seqs_done']} done, {c['calls']} calls, error records "
                                            f"{c['error_records']}, dead-lettered {len(summary['dead_lettered'])}",
                                   found)  # fmt: skip
    return Report(f"s3-fanout latency run {run['run_id']}", summary["network"], blocks,
                  answer=run_sections.answer(main, described(images, {PLOT: CAPTION}), found),
                  links=run_sections.run_links(summary), limits=summary.get("limits", ""))


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


def write(summary: dict, plots_too: bool = True) -> list:
    """The report's files in results/<run_id>/, each written atomically; returns their paths.
    Its one plot is drawn also for a sweep's cell (`plots_too` is the drivers' interface)."""
    written = runs.write_summary(summary)
    folder = runs.run_dir(_run(summary).run_id)
    columns = [*summary["rows"][0], "network"] if summary["rows"] else ["network"]
    written.append(runs.write_csv(folder / "latency.csv", columns,
                                  [dict(row, network=summary["network"]) for row in summary["rows"]]))
    images = [plot(summary, folder / PLOT)] if summary["rows"] else []
    return [*written, *images, *report_files.write(sections(summary, tuple(images)), folder)]


def plot(summary: dict, path):
    """Write latency.png (figure()); returns its path."""
    return figures.save(figure(summary), path)


def figure(summary: dict):
    """Log-log: median latency against size per class and measure, p10-p90 band (from records),
    in milliseconds when every call took less than a second; captioned with the network."""
    calls = [r for r in summary["records"] if r.get("event") == "latency"]
    present = groups(summary["rows"])
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
    return figures.caption(fig, summary["network"])


def across(run_ids: list[str], folder, title: str) -> dict:
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
                                     "network": record.network_label()})  # fmt: skip
    summary = {"title": title, "runs": run_ids, "units": UNITS, "percentiles": stats.PERCENTILE_METHOD, "rows": rows,
               "limits": run_record.limits_label(records)}
    folder.mkdir(parents=True, exist_ok=True)
    runs.write_csv(folder / "cells.csv", list(rows[0]), rows)
    runs.write_text(folder / "cells.json", json.dumps(summary, indent=2) + "\n")
    report_files.write(across_sections(summary, folder), folder)
    return summary


def across_sections(summary: dict, folder=None) -> Report:
    """across()'s summary as sections: the networks, the units, one table; on the terminal, what
    it wrote into `folder`."""
    table = [["run", "reps", "client", "storage", "measure", "size", "n", *STATS]]
    table += [[r["run_id"], r["reps"], r.get("client", CLIENTS[0]), r["storage"], r["measure"], format_size(r["size"]), r["n"],
               *(_seconds(r[s]) for s in STATS)] for r in summary["rows"]]  # fmt: skip
    labels = sorted({r["network"] for r in summary["rows"]})
    main: list[Block] = [Table("Latency by run, class, measure and size (s)", table, UNITS, labels=6, headed=False)]  # run to size
    blocks: list[Block] = [Text(f"{summary['title']}: latency across {len(summary['runs'])} runs; {'; '.join(labels)}", "bold",
                   only=TERMINAL), *on_only(main, TERMINAL),
              Heading(run_sections.HOW_TITLE),
              *(Text(f"- **{label}**", only=FILES) for label in [*labels, *filter(None, [summary.get("limits")])]),
              Text(f"Units: {UNITS}. Percentiles: {stats.PERCENTILE_METHOD}.", only=FILES)]  # fmt: skip
    if folder is not None:
        blocks.append(Text(f"wrote cells.csv, cells.json, report.md, index.html to {folder}", only=TERMINAL))
    return Report(summary["title"], "; ".join(labels), blocks, answer=on_only(main, FILES),
                  links=run_sections.across_links(summary["runs"], folder), limits=summary.get("limits", ""))
