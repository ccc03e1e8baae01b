"""The seqread workload's report: the published fio table's shape, local and remote side by side.

Per JOBS x FILE_SIZE and path, aggregate MiB/s (binary, as the published figures) across
messages, block completion latencies, the remote/local ratio with its bootstrap interval, the
remote reads' transfer cost and a plot, each with the network label. Methods and files:
drivers/fanout/workloads/seqread/README.md (report).
"""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fanout import insights
from fanout.common.sizes import format_size
from fanout.results import deadletters, figures, log_records as run_logs, report_files, run_folders as runs, run_record
from fanout.results import run_sections, stats
from fanout.results.sections import FILES, TERMINAL, Block, Heading, Report, Table, Text, images as described, on_only, sentence
from fanout.workloads.seqread import WORKLOAD, costs as seqread_costs

UNITS = ("aggregate MiB/s = bytes of all JOBS / seconds from the first request to the last byte / 2^20 "
         "(binary, as the published fio figures); latency in ms (time.monotonic in the function)")  # fmt: skip
SOURCES = ("local", "remote")
KEY = ("jobs", "file_size", "block", "depth")  # a row
TABLE_TITLE = "Sequential reads: aggregate MiB/s (binary) across messages"
PLOT = "seqread.png"
CAPTION = "Aggregate MiB/s of one function's parallel readers against JOBS, a line per file size and path (median, p10-p90 bars)"


def build(stack, record: run_record.RunRecord) -> dict:
    """Everything the report shows, as plain data (summary.json is this, less the records)."""
    run_id = record.run_id
    start_ms, end_ms = runs.run_window(record)
    records = run_logs.run_records(insights.fetch_events(stack, start_ms, end_ms), run_id)
    reads = [r for r in records if r.get("event") == WORKLOAD.name]
    query = insights.run_saved(stack, WORKLOAD.query, f'run_id = "{run_id}"', start_ms, end_ms)
    done = {r["seq"] for r in records if r.get("outcome") == "done"}
    return {
        "run": record.to_json(), "network": record.network_label(), "limits": record.limits_label(), "units": UNITS,
        "percentiles": stats.PERCENTILE_METHOD, "ci_method": stats.CI_METHOD,
        "counts": {"sent": len(record.sent_seqs()), "seqs_done": len(done), "messages": len(reads),
                   "in_query": sum(int(row["messages"]) for row in query),
                   "error_records": sum(r.get("event") == "error" for r in records)},
        "dead_lettered": sorted(deadletters.peek(stack, run_id, set(record.sent_seqs()) - done)),
        "rows": rows(reads),
        "cost": run_cost_lines(reads, record),
        "records": records,
    }  # fmt: skip


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


def table(summary: dict) -> list[list]:
    head = ["jobs", "file size", "block", "depth"]
    for source in SOURCES:
        head += [f"{source} n", f"{source} p50", f"{source} p10", f"{source} p90", f"{source} clat p50 ms",
                 f"{source} clat p99 ms"]  # fmt: skip
    head += ["remote/local", "95% CI"]
    body = []
    for row in summary["rows"]:
        line = [row["jobs"], format_size(row["file_size"]), format_size(row["block"]), row["depth"]]
        for source in SOURCES:
            f = row[source]
            line += [f["n"], *(f"{f[s]:.1f}" for s in ("p50", "p10", "p90", "clat_p50_ms", "clat_p99_ms"))] if f else ["-"] * 6
        ci = row.get("ratio_ci")
        line += [f"{row['ratio']:.3f}" if "ratio" in row else "-", f"{ci[0]:.3f}-{ci[1]:.3f}" if ci else "-"]
        body.append(line)
    return [head, *body]


def warnings(summary: dict) -> list[str]:
    """What makes the table incomplete (runs.incomplete)."""
    return runs.incomplete(summary, "messages", summary["counts"]["messages"])


def sections(summary: dict, images: tuple = ()) -> Report:
    """The report as sections (fanout.results.sections): the table, the inter-region transfer
    cost, the counts and units, the plot."""
    run, c = summary["run"], summary["counts"]
    found = warnings(summary)
    main: list[Block] = [main_table(summary)]
    blocks = [
        *run_sections.opening(summary, "seqread", run_sections.labels(summary),
                              f"options {run['parameters'].get('workload_options')}",
                              f"{c['sent']} sent, {c['seqs_done']} done, {c['error_records']} error records, "
                              f"{len(summary['dead_lettered'])} dead-lettered", found),
        *on_only(main, TERMINAL), *cost(summary),
        *run_sections.closing(summary, f"sent {c['sent']}: {c['seqs_done']} done, error records {c['error_records']}",
                              found),
    ]  # fmt: skip
    return Report(f"s3-fanout seqread run {run['run_id']}", summary["network"], blocks,
                  answer=run_sections.answer(main, described(images, {PLOT: CAPTION}), found),
                  links=run_sections.run_links(summary), limits=summary.get("limits", ""))


def main_table(summary: dict) -> Table:
    """The answer: aggregate MiB/s by JOBS, file size and path (the ratio's CI method its note)."""
    return Table(TABLE_TITLE, table(summary), summary["ci_method"], f"Ratio CI: {sentence(summary['ci_method'])}",
                 labels=4)  # jobs, file size, block, depth


def cost(summary: dict) -> list[Block]:
    """What the remote reads cost."""
    return [Heading("Inter-region transfer"),
            Text("\n".join(f"- {line}" for line in summary["cost"]), only=FILES),
            *(Text(line, only=TERMINAL) for line in summary["cost"])]  # fmt: skip


def write(summary: dict, plots_too: bool = True) -> list:
    """The report's files in results/<run_id>/, each written atomically; returns their paths.
    Its one plot is drawn also for a sweep's cell (`plots_too` is the drivers' interface)."""
    written = runs.write_summary(summary)
    folder = runs.run_dir(summary["run"]["run_id"])
    written.append(write_csv(summary, folder, {"network": summary["network"]}))
    images = [figures.save(figure(summary), folder / PLOT)] if summary["rows"] else []
    return [*written, *images, *report_files.write(sections(summary, tuple(images)), folder)]


def write_csv(summary: dict, folder, extra: dict):
    """seqread.csv: the table's lines, with `extra`'s columns."""
    grid = table(summary)
    return runs.write_csv(folder / "seqread.csv", [*grid[0], *extra], [dict(zip(grid[0], line), **extra) for line in grid[1:]])


def figure(summary: dict):
    """Aggregate MiB/s against JOBS: one line per FILE_SIZE and path (median, p10-p90 bars)."""
    fig, ax = plt.subplots(figsize=(figures.WIDTH, 5.5), layout="constrained")
    sizes = sorted({row["file_size"] for row in summary["rows"]})
    for i, size in enumerate(sizes):
        for source, style in zip(SOURCES, ("-", "--")):
            points = [(row["jobs"], row[source]) for row in summary["rows"] if row["file_size"] == size and row[source]]
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
    return figures.caption(fig, summary["network"])


def across(run_ids: list[str], folder, title: str) -> dict:
    """The table over the records of several runs (a sweep's cells), as one run's. Writes
    seqread.csv, summary.json, seqread.png, report.md and index.html into `folder`."""
    reads = [r for run_id in run_ids for r in runs.load_records(run_id, WORKLOAD.name) if r.get("event") == WORKLOAD.name]
    records = [runs.load(run_id) for run_id in run_ids]
    labels = sorted({record.network_label() for record in records})
    summary = {"title": title, "runs": run_ids, "network": "; ".join(labels),
               "limits": run_record.limits_label(records), "units": UNITS,
               "percentiles": stats.PERCENTILE_METHOD, "ci_method": stats.CI_METHOD, "rows": rows(reads),
               "cost": run_cost_lines(reads, records[0])}  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    write_csv(summary, folder, {"network": summary["network"]})
    runs.write_text(folder / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    images = (figures.save(figure(summary), folder / PLOT),) if summary["rows"] else ()
    report_files.write(across_sections(summary, folder, images), folder)
    return summary


def across_sections(summary: dict, folder=None, images: tuple = ()) -> Report:
    """across()'s summary as sections: the network, the units, the table and the cost, the plot;
    on the terminal, what it wrote into `folder`."""
    blocks: list[Block] = [
        Text(f"{summary['title']}: seqread across {len(summary['runs'])} runs; {summary['network']}", "bold",
             only=TERMINAL),
        *(Text(line, "bold", only=TERMINAL) for line in run_sections.labels(summary)[1:]),  # Lambda's limits
        *on_only([main_table(summary)], TERMINAL),
        Heading(run_sections.HOW_TITLE),
        Text("\n".join(f"- **{label}**" for label in run_sections.labels(summary)), only=FILES),
        Text(f"Units: {summary['units']}. Percentiles: {summary['percentiles']}.", only=FILES),
        *cost(summary),
    ]  # fmt: skip
    if folder is not None:
        blocks.append(Text(f"wrote seqread.csv, summary.json, seqread.png, report.md, index.html to {folder}",
                           only=TERMINAL))  # fmt: skip
    return Report(summary["title"], summary["network"], blocks,
                  answer=run_sections.answer([main_table(summary)], described(images, {PLOT: CAPTION}), []),
                  links=run_sections.across_links(summary["runs"], folder), limits=summary.get("limits", ""))
