"""The seqread workload's report: the published fio table's shape, local and remote side by side.

Rows: JOBS x FILE_SIZE (and BLOCK, DEPTH when a run has several). Columns, per path (FROM=local,
FROM=remote): messages, aggregate MiB/s of the group, median, p10 and p90 across messages
(binary: 2^20 bytes/s, as the published figures), and the median across messages of each
message's block completion-latency p50 and p99 (ms); then the remote/local ratio of median MiB/s
with its 95% bootstrap confidence interval (fanout.results.stats: percentile method, 10,000
resamples, fixed seed, each path resampled on its own). Percentiles across messages: numpy's
default, type 7. The saved query seqread-percentiles counts the messages it sees, so that a
partial query is flagged. The plot: aggregate MiB/s (median, p10-p90 bars) against JOBS, one line
per FILE_SIZE and path. The data-transfer cost of the remote reads, per GB and for the run, from
the price table (costs.py), or its one-line refusal. Every output carries the network label.

Writes into results/<run_id>/: records.jsonl, seqread.csv, summary.json, report.md, seqread.png.
"""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fanout import insights
from fanout.common import registry as workloads
from fanout.common.sizes import format_size
from fanout.local import network
from fanout.results import deadletters, figures, log_records as run_logs, run_folders as runs, stats, tables
from fanout.workloads.seqread import costs as seqread_costs

WORKLOAD = workloads.get("seqread")
UNITS = ("aggregate MiB/s = bytes of all JOBS / seconds from the first request to the last byte / 2^20 "
         "(binary, as the published fio figures); latency in ms (time.monotonic in the function)")  # fmt: skip
SOURCES = ("local", "remote")
KEY = ("jobs", "file_size", "block", "depth")  # a row


def build(stack, record: dict) -> dict:
    run_id = record["run_id"]
    start_ms, end_ms = runs.run_window(record)
    records = run_logs.run_records(insights.fetch_events(stack, start_ms, end_ms), run_id)
    reads = [r for r in records if r.get("event") == WORKLOAD.name]
    query = insights.run_saved(stack, WORKLOAD.query, f'run_id = "{run_id}"', start_ms, end_ms)
    done = {r["seq"] for r in records if r.get("outcome") == "done"}
    remote = record["stack"].get("remote_region", "")
    return {
        "run": record, "network": network.label(record), "units": UNITS,
        "percentiles": stats.PERCENTILE_METHOD, "ci_method": stats.CI_METHOD,
        "counts": {"sent": len(runs.sent_seqs(record)), "seqs_done": len(done), "messages": len(reads),
                   "in_query": sum(int(row["messages"]) for row in query),
                   "error_records": sum(r.get("event") == "error" for r in records)},
        "dead_lettered": sorted(deadletters.peek(stack, run_id, set(runs.sent_seqs(record)) - done)),
        "rows": rows(reads),
        "cost": cost_lines(reads, remote, record["stack"]["region"]),
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


def show(summary: dict) -> None:
    run, c = summary["run"], summary["counts"]
    tables.console.print(f"[bold]run {run['run_id']}[/] (seqread) on the {run['backend']} backend, "
                         f"stack {run['stack']['stack']!r}\n[bold]{summary['network']}[/]", highlight=False)  # fmt: skip
    tables.print_table("Sequential reads: aggregate MiB/s (binary) across messages", table(summary),
                       summary["ci_method"], labels=4)  # fmt: skip
    for line in [*summary["cost"], f"sent {c['sent']}: {c['seqs_done']} done, error records {c['error_records']}",
                 f"units: {summary['units']}; percentiles: {summary['percentiles']}"]:  # fmt: skip
        tables.console.print(line, highlight=False)
    for warning in warnings(summary):
        tables.console.print(f"[bold red]WARNING:[/] {warning}")


def write(summary: dict, plots_too: bool = True) -> list:
    written = runs.write_summary(summary)
    folder = runs.run_dir(summary["run"]["run_id"])
    grid = table(summary)
    written.append(runs.write_csv(folder / "seqread.csv", [*grid[0], "network"],
                                  [dict(zip(grid[0], line), network=summary["network"]) for line in grid[1:]]))
    images = [figures.save(figure(summary), folder / "seqread.png")] if summary["rows"] else []
    return [*written, *images, runs.write_text(folder / "report.md", markdown(summary, images))]


def markdown(summary: dict, images: list) -> str:
    run = summary["run"]
    parts = [f"# s3-fanout seqread run {run['run_id']}", f"- **{summary['network']}**",
             f"Units: {summary['units']}. Percentiles: {summary['percentiles']}. Ratio CI: {summary['ci_method']}.",
             *(f"**Warning:** {w}" for w in warnings(summary)),
             "## Aggregate MiB/s by JOBS and FILE_SIZE", tables.markdown_table(table(summary)),
             "## Inter-region transfer", *(f"- {line}" for line in summary["cost"]),
             "## Plots", *(f"![{image.stem}]({image.name})" for image in images)]  # fmt: skip
    return "\n\n".join(parts) + "\n"


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
    """The table over the records of several runs (a sweep's cells), as one run's."""
    reads = [r for run_id in run_ids for r in runs.load_records(run_id, WORKLOAD.name) if r.get("event") == WORKLOAD.name]
    labels = sorted({network.label(runs.load(run_id)) for run_id in run_ids})
    record = runs.load(run_ids[0])
    summary = {"title": title, "runs": run_ids, "network": "; ".join(labels), "units": UNITS,
               "percentiles": stats.PERCENTILE_METHOD, "ci_method": stats.CI_METHOD, "rows": rows(reads),
               "cost": cost_lines(reads, record["stack"].get("remote_region", ""), record["stack"]["region"])}  # fmt: skip
    tables.console.print(f"[bold]{title}[/]: seqread across {len(run_ids)} runs; {summary['network']}", highlight=False)
    tables.print_table("Sequential reads: aggregate MiB/s (binary) across messages", table(summary),
                       summary["ci_method"], labels=4)  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    grid = table(summary)
    runs.write_csv(folder / "seqread.csv", grid[0], [dict(zip(grid[0], line)) for line in grid[1:]])
    runs.write_text(folder / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    if summary["rows"]:
        figures.save(figure(summary), folder / "seqread.png")
    runs.write_text(folder / "report.md", "\n\n".join([f"# {title}", f"- **{summary['network']}**",
                                                       f"Units: {UNITS}.", tables.markdown_table(grid),
                                                       *summary["cost"], "![seqread](seqread.png)"]) + "\n")  # fmt: skip
    return summary
