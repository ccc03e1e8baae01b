"""The seqread workload's report: the published fio table's shape, local and remote side by side.

Per JOBS x FILE_SIZE and path, aggregate MiB/s (binary, as the published figures) across
messages, block completion latencies, the remote/local ratio with its bootstrap interval, the
remote reads' transfer cost and a plot, each with the network label. Methods and files:
drivers/fanout/workloads/seqread/README.md (report).
"""

import json
from dataclasses import asdict, dataclass
from typing import ClassVar

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fanout.common.sizes import format_size
from fanout.results import figures, report_files, run_folders as runs, run_record
from fanout.results import run_sections, stats, summary as summaries
from fanout.results.summary import Row, RunSummary
from fanout.results.sections import FILES, TERMINAL, Block, Heading, Report, Table, Text, images as described, on_only, sentence
from fanout.workloads.seqread import WORKLOAD, costs as seqread_costs

UNITS = ("aggregate MiB/s = bytes of all JOBS / seconds from the first request to the last byte / 2^20 "
         "(binary, as the published fio figures); latency in ms (time.monotonic in the function)")  # fmt: skip
SOURCES = ("local", "remote")
KEY = ("jobs", "file_size", "block", "depth")  # a row
TABLE_TITLE = "Sequential reads: aggregate MiB/s (binary) across messages"
PLOT = "seqread.png"
CAPTION = "Aggregate MiB/s of one function's parallel readers against JOBS, a line per file size and path (median, p10-p90 bars)"


@dataclass
class Body:
    """What the seqread report adds to every run's summary (fanout.results.summary): its units and
    methods, a row per JOBS x FILE_SIZE (rows) and the remote reads' transfer cost lines."""

    LAYOUT: ClassVar[tuple[str, ...]] = ("run", "network", "limits", "units", "percentiles", "ci_method", "counts",
                                         "dead_lettered", "rows", "cost")  # fmt: skip
    COUNTS: ClassVar[dict[str, str]] = summaries.count_names("messages")

    units: str
    percentiles: str
    ci_method: str
    rows: list[Row]
    cost: list[str]


Summary = RunSummary[Body]


def build(stack, record: run_record.RunRecord) -> Summary:
    """Everything the report shows (summary.json is this, less the records)."""
    got = summaries.collect(stack, record, WORKLOAD.name, WORKLOAD.query, "messages")
    reads = got.of_event(WORKLOAD.name)
    return summaries.new(got.header, Body(UNITS, stats.PERCENTILE_METHOD, stats.CI_METHOD, rows(reads),
                                          run_cost_lines(reads, record)))  # fmt: skip


def rows(reads: list[dict]) -> list[dict]:
    """One row per JOBS x FILE_SIZE (x BLOCK x DEPTH): each path's figures and the ratio."""
    result = []
    for key in sorted({tuple(r[k] for k in KEY) for r in reads}):
        mine = [r for r in reads if tuple(r[k] for k in KEY) == key]
        row = dict(zip(KEY, key))
        for source in SOURCES:
            row[source] = path_figures([r for r in mine if r["source"] == source])
        if row["local"] and row["remote"]:
            local, remote = ([r["mib_per_s"] for r in mine if r["source"] == s] for s in SOURCES)
            row["ratio"] = row["remote"]["p50"] / row["local"]["p50"]
            [row["ratio_ci"]] = stats.ratio_intervals(local, remote, [50])
        result.append(row)
    return result


def path_figures(reads: list[dict]) -> dict | None:
    if not reads:
        return None
    p10, p50, p90 = np.percentile([r["mib_per_s"] for r in reads], [10, 50, 90])
    return {"n": len(reads), "p10": p10, "p50": p50, "p90": p90,
            "clat_p50_ms": float(np.median([r["clat_p50_ms"] for r in reads])),
            "clat_p99_ms": float(np.median([r["clat_p99_ms"] for r in reads])),
            "retries": sum(r["retries"] for r in reads), "throttled": sum(r["throttled"] for r in reads)}  # fmt: skip


def cost_lines(reads: list[dict], remote_region: str, function_region: str) -> list[str]:
    """What the remote reads cost in transfer: per GB and for this run, or the refusal."""
    remote_bytes = sum(r["bytes"] for r in reads if r["source"] == "remote")
    if not remote_bytes:
        return ["no remote reads: no inter-region transfer"]
    price = seqread_costs.transfer_price(remote_region, function_region)
    lines = seqread_costs.transfer_lines(remote_region, function_region)
    if price is not None:
        gb = remote_bytes / seqread_costs.GB
        lines.append(f"this run read {gb:,.3f} GB across regions: ${gb * price:,.4f} on AWS")
    return lines


def run_cost_lines(reads: list[dict], record: run_record.RunRecord) -> list[str]:
    """cost_lines between the run's stack's region and its remote region (a deploy-level output)."""
    return cost_lines(reads, record.stack.extra.get("remote_region", ""), record.stack.region)


def table(rows: list[Row]) -> list[list]:
    head = ["jobs", "file size", "block", "depth"]
    for source in SOURCES:
        head += [f"{source} n", f"{source} p50", f"{source} p10", f"{source} p90", f"{source} clat p50 ms",
                 f"{source} clat p99 ms"]  # fmt: skip
    head += ["remote/local", "95% CI"]
    body = []
    for row in rows:
        line = [row["jobs"], format_size(row["file_size"]), format_size(row["block"]), row["depth"]]
        for source in SOURCES:
            f = row[source]
            line += [f["n"], *(f"{f[s]:.1f}" for s in ("p50", "p10", "p90", "clat_p50_ms", "clat_p99_ms"))] if f else ["-"] * 6
        ci = row.get("ratio_ci")
        line += [f"{row['ratio']:.3f}" if "ratio" in row else "-", f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else "-"]
        body.append(line)
    return [head, *body]


def warnings(summary: Summary) -> list[str]:
    """What makes the table incomplete (summaries.incomplete)."""
    return summaries.incomplete(summary.header, "messages")


def sections(summary: Summary, images: tuple = ()) -> Report:
    """The report as sections (fanout.results.sections): the table, the inter-region transfer
    cost, the counts and units, the plot."""
    h, body = summary.header, summary.body
    c = h.counts
    found = warnings(summary)
    main: list[Block] = [main_table(body.rows, body.ci_method)]
    blocks = [
        *run_sections.opening(h, "seqread", run_sections.labels(h.network, h.limits),
                              f"options {h.run.parameters.workload_options}",
                              f"{c.sent} sent, {c.done} done, {c.error_records} error records, "
                              f"{len(h.dead_lettered)} dead-lettered", body.units, body.percentiles),
        *on_only(main, TERMINAL), *cost(body.cost),
        *run_sections.closing(f"sent {c.sent}: {c.done} done, error records {c.error_records}", found, body.units,
                              body.percentiles),
    ]  # fmt: skip
    return Report(f"s3-fanout seqread run {h.run.run_id}", h.network, blocks,
                  answer=run_sections.answer(main, described(images, {PLOT: CAPTION}), found),
                  links=run_sections.run_links(h.run), limits=h.limits or "")


def main_table(rows: list[Row], ci_method: str) -> Table:
    """The answer: aggregate MiB/s by JOBS, file size and path (the ratio's CI method its note)."""
    return Table(TABLE_TITLE, table(rows), ci_method, f"Ratio CI: {sentence(ci_method)}",
                 labels=4)  # jobs, file size, block, depth


def cost(lines: list[str]) -> list[Block]:
    """What the remote reads cost."""
    return [Heading("Inter-region transfer"),
            Text("\n".join(f"- {line}" for line in lines), only=FILES),
            *(Text(line, only=TERMINAL) for line in lines)]  # fmt: skip


def write(summary: Summary, plots_too: bool = True) -> list:
    """The report's files in results/<run_id>/, each written atomically; returns their paths.
    Its one plot is drawn also for a sweep's cell (`plots_too` is the drivers' interface)."""
    written = summaries.write(summary)
    folder, rows, h = runs.run_dir(summary.run_id), summary.body.rows, summary.header
    written.append(write_csv(rows, folder, h.label_columns()))
    images = [figures.save(figure(rows, run_sections.labels(h.network, h.limits)), folder / PLOT)] if rows else []
    return [*written, *images, *report_files.write(sections(summary, tuple(images)), folder)]


def write_csv(rows: list[Row], folder, extra: dict):
    """seqread.csv: the table's lines, with `extra`'s columns."""
    grid = table(rows)
    return runs.write_csv(folder / "seqread.csv", [*grid[0], *extra], [dict(zip(grid[0], line), **extra) for line in grid[1:]])


def figure(rows: list[Row], labels: list[str]):
    """Aggregate MiB/s against JOBS: one line per FILE_SIZE and path (median, p10-p90 bars),
    captioned with the run's `labels` (network, limits)."""
    fig, ax = plt.subplots(figsize=(figures.WIDTH, 5.5), layout="constrained")
    sizes = sorted({row["file_size"] for row in rows})
    for i, size in enumerate(sizes):
        for source, style in zip(SOURCES, ("-", "--")):
            points = [(row["jobs"], row[source]) for row in rows if row["file_size"] == size and row[source]]
            if points:
                jobs = [j for j, _ in points]
                mid = np.array([f["p50"] for _, f in points])
                err = [mid - [f["p10"] for _, f in points], np.array([f["p90"] for _, f in points]) - mid]
                ax.errorbar(jobs, mid, yerr=err, color=f"C{i}", linestyle=style, marker="o", capsize=3,
                            label=f"{format_size(size)} {source}")  # fmt: skip
    ax.set_xlabel("JOBS (parallel readers in one function)")
    ax.set_ylabel("Aggregate MiB/s (binary; median, bars p10-p90)")
    figures.title(fig, "Sequential read throughput against readers, per file size and path")
    ax.grid(True, alpha=0.3)
    figures.legend(fig, *ax.get_legend_handles_labels(), title="colour: file size\nline: path")
    return figures.caption(fig, labels)


@dataclass
class Across:
    """The summary of a report across runs (its summary.json): the table over their records."""

    title: str
    runs: list[str]
    network: str
    limits: str
    units: str
    percentiles: str
    ci_method: str
    rows: list[Row]
    cost: list[str]


def across(run_ids: list[str], folder, title: str) -> Across:
    """The table over the records of several runs (a sweep's cells), as one run's. Writes
    seqread.csv, summary.json, seqread.png, report.md and index.html into `folder`."""
    reads = [r for run_id in run_ids for r in runs.load_records(run_id, WORKLOAD.name) if r.get("event") == WORKLOAD.name]
    records = [runs.load(run_id) for run_id in run_ids]
    labels = sorted({record.network_label() for record in records})
    summary = Across(title, run_ids, "; ".join(labels), run_record.limits_label(records), UNITS, stats.PERCENTILE_METHOD,
                     stats.CI_METHOD, rows(reads), run_cost_lines(reads, records[0]))  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(summary.rows, folder, {"network": summary.network, "limits": summary.limits})
    runs.write_text(folder / "summary.json", json.dumps(asdict(summary), indent=2, default=str) + "\n")
    labels = run_sections.labels(summary.network, summary.limits)
    images = (figures.save(figure(summary.rows, labels), folder / PLOT),) if summary.rows else ()
    report_files.write(across_sections(summary, folder, images), folder)
    return summary


def across_sections(summary: Across, folder=None, images: tuple = ()) -> Report:
    """across()'s summary as sections: the network, the units, the table and the cost, the plot;
    on the terminal, what it wrote into `folder`."""
    labels = run_sections.labels(summary.network, summary.limits)
    main = main_table(summary.rows, summary.ci_method)
    blocks: list[Block] = [
        Text(f"{summary.title}: seqread across {len(summary.runs)} runs; {summary.network}", "bold", only=TERMINAL),
        *(Text(line, "bold", only=TERMINAL) for line in labels[1:]),  # Lambda's limits
        *on_only([main], TERMINAL),
        Heading(run_sections.HOW_TITLE),
        Text("\n".join(f"- **{label}**" for label in labels), only=FILES),
        Text(f"Units: {summary.units}. Percentiles: {summary.percentiles}.", only=FILES),
        *cost(summary.cost),
    ]  # fmt: skip
    if folder is not None:
        blocks.append(Text(f"wrote seqread.csv, summary.json, seqread.png, report.md, index.html to {folder}",
                           only=TERMINAL))  # fmt: skip
    return Report(summary.title, summary.network, blocks,
                  answer=run_sections.answer([main], described(images, {PLOT: CAPTION}), []),
                  links=run_sections.across_links(summary.runs, folder), limits=summary.limits)
