"""The transfer workload's report: a table per operation in the published tables' shape, the
speedup against THREADS=1, the request cost per GB beside the speed, and MB/s against threads per
part size.

Every output carries the run's network label, and says when uploads were unshaped. Statistics,
methods and files: drivers/fanout/workloads/transfer/README.md (report).
"""

import json
from dataclasses import asdict, dataclass
from typing import ClassVar

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fanout.local import backends  # noqa: E402
from fanout.local import network  # noqa: E402
from fanout.results import cells, figures, report_files, run_folders as runs  # noqa: E402
from fanout.results import run_record, run_sections, stats, summary as summaries  # noqa: E402
from fanout.results.summary import Row, RunSummary  # noqa: E402
from fanout.results.sections import FILES, TERMINAL, Block, Heading, Report, Table, Text, images as described, on_only, sentence  # noqa: E402
from fanout.workloads.transfer import WORKLOAD, costs as transfer_costs  # noqa: E402

CELLS = cells.of(WORKLOAD)
PLOT = "transfer.png"
CAPTION = ("Median throughput (decimal MB/s) with its 95% CI against threads, a panel per operation and a line per "
           "part size and the other tuning that varies")
TUNING = tuple(f.name for f in WORKLOAD.cells if f.name != "operation")
UNITS = ("seconds: the operation's wall time in the function (time.monotonic); MB/s: bytes moved / seconds, "
         "decimal (1 MB = 10^6 bytes); $/GB: S3 Standard request prices, us-east-1, per 10^9 bytes moved")  # fmt: skip
UNSHAPED = ("uploads unshaped: this run's network model has no upload parameters (upload_*), so PUT and part "
            "bodies went at loopback speed")  # fmt: skip
COLUMNS = ["n", "s p50", "s p50 95% CI", "s p90", "s p99", "MB/s p50", "MB/s p50 95% CI", "speedup vs 1 thread",
           "speedup 95% CI", "requests/msg", "$/GB requests", "retries", "503s"]  # fmt: skip


def shaping(record: run_record.RunRecord) -> str:
    """What the label adds about uploads: UNSHAPED on the local backend when the model shaped
    none (fanout.local.network.shapes_uploads), else nothing."""
    return UNSHAPED if backends.simulated(record.backend) and not network.shapes_uploads(record.network) else ""


@dataclass
class Body:
    """What the transfer report adds to every run's summary (fanout.results.summary): whether
    uploads were shaped, its units and methods, and a row of statistics per cell (cell_rows)."""

    LAYOUT: ClassVar[tuple[str, ...]] = ("run", "network", "limits", "shaping", "units", "percentiles", "ci_method",
                                         "counts", "dead_lettered", "rows")  # fmt: skip
    COUNTS: ClassVar[dict[str, str]] = summaries.count_names("messages")

    shaping: str
    units: str
    percentiles: str
    ci_method: str
    rows: list[Row]


Summary = RunSummary[Body]


def build(stack, record: run_record.RunRecord) -> Summary:
    """Everything the report shows (summary.json is this, less the records)."""
    got = summaries.collect(stack, record, WORKLOAD.name, WORKLOAD.query, "messages")
    return summarize(record, got.records, got.header.counts.in_query, got.header.dead_lettered)


def summarize(record: run_record.RunRecord, records: list[Row], in_query: int, dead_lettered: list[int]) -> Summary:
    """build()'s summary from what it fetched: the run's records, the messages the saved query
    counted and the seqs found dead-lettered."""
    header = summaries.header_of(record, records, WORKLOAD.name, in_query, dead_lettered)
    messages = [r for r in records if r.get("event") == WORKLOAD.name]
    return summaries.new(header, Body(shaping(record), UNITS, stats.PERCENTILE_METHOD, stats.CI_METHOD, cell_rows(messages)))


def cell_rows(messages: list[dict]) -> list[dict]:
    """One row per cell: the statistics of its messages, and its speedup against the cell that
    differs only in THREADS=1 (none without one)."""
    by_cell: dict = {}
    for r in messages:
        by_cell.setdefault(CELLS.key(r), []).append(r)
    rows = []
    for cell, mine in sorted(by_cell.items(), key=lambda item: item[0].sort_key()):
        seconds = [r["seconds"] for r in mine]
        speeds = [r["mb_per_s"] for r in mine]
        s, mb = stats.describe(seconds), stats.describe(speeds)
        [s_ci], [mb_ci] = stats.intervals(seconds, [50]), stats.intervals(speeds, [50])
        base = by_cell.get(_at_one_thread(cell))
        speedup = speedup_ci = None
        if base and cell.threads not in (0, 1):
            base_seconds = [r["seconds"] for r in base]
            speedup = float(np.median(base_seconds) / np.median(seconds))
            [speedup_ci] = stats.ratio_intervals(seconds, base_seconds, [50])
        moved = sum(r["bytes"] for r in mine)
        requests = [sum(r["requests"].values()) for r in mine]
        every: dict[str, int] = {}
        for r in mine:
            for name, n in r["requests"].items():
                every[name] = every.get(name, 0) + n
        rows.append({**cell.as_dict(), "n": len(mine), "seconds": s, "seconds_p50_ci": s_ci, "mb_per_s": mb,
                     "mb_per_s_p50_ci": mb_ci, "speedup": speedup, "speedup_ci": speedup_ci,
                     "requests_per_message": float(np.mean(requests)), "requests": every,
                     "cost_per_gb": transfer_costs.cost_per_gb(every, moved),
                     "retries": sum(r["retries"] for r in mine), "slowdowns": sum(r["slowdowns"] for r in mine)})  # fmt: skip
    return rows


def _at_one_thread(cell):
    return CELLS.Cell(**{**{name: getattr(cell, name) for name in CELLS.fields}, "threads": 1})


def _ci(ci) -> str:
    return "-" if not ci else f"{ci[0]:.4g} - {ci[1]:.4g}"


def _num(value, digits: str = ".4g") -> str:
    return "-" if value is None else format(value, digits)


def operation_table(rows: list[dict], operation: str) -> list[list]:
    """The published tables' shape: the tuning that varies down, seconds and MB/s across."""
    mine = [r for r in rows if r["operation"] == operation]
    shown = [name for name in TUNING if len({str(r[name]) for r in mine}) > 1] or ["threads"]
    table = [[CELLS.declared[name].title for name in shown] + COLUMNS]
    for r in mine:
        cell = CELLS.key(r)
        table.append([cell.text(name) for name in shown] + [
            r["n"], _num(r["seconds"]["p50"]), _ci(r["seconds_p50_ci"]), _num(r["seconds"]["p90"]),
            _num(r["seconds"]["p99"]), _num(r["mb_per_s"]["p50"]), _ci(r["mb_per_s_p50_ci"]), _num(r["speedup"], ".3g"),
            _ci(r["speedup_ci"]), _num(r["requests_per_message"], ".4g"), _num(r["cost_per_gb"], ".2e"), r["retries"],
            r["slowdowns"]])  # fmt: skip
    return table


def operations(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(r["operation"] for r in rows))


def warnings(summary: Summary) -> list[str]:
    """What makes the tables incomplete (summaries.incomplete)."""
    return summaries.incomplete(summary.header, "messages")


def labels(summary: Summary) -> list[str]:
    return [summary.header.network] + ([summary.body.shaping] if summary.body.shaping else [])


def operation_tables(rows: list[dict], ci_method: str) -> list[Block]:
    """A table per operation, the tuning that varies labelling its rows."""
    found: list[Block] = []
    for operation in operations(rows):
        table = operation_table(rows, operation)
        found.append(Table(operation, table, ci_method, sentence(ci_method), labels=len(table[0]) - len(COLUMNS)))
    return found


def sections(summary: Summary, images: tuple = ()) -> Report:
    """The report as sections (fanout.results.sections): the labels, a table per operation, the
    counts and units, the plot."""
    h, body = summary.header, summary.body
    c, dead = h.counts, len(h.dead_lettered)
    found = warnings(summary)
    main = operation_tables(body.rows, body.ci_method)
    blocks = [
        *run_sections.opening(h, "transfer", [*labels(summary), *run_sections.labels(h.network, h.limits)[1:]],
                              f"options {h.run.parameters.workload_options}",
                              f"{c.sent} sent, {c.done} done, {c.error_records} error records, {dead} dead-lettered",
                              body.units, body.percentiles),
        *on_only(main, TERMINAL),
        *run_sections.closing(f"sent {c.sent}: {c.done} done, {c.measured} transfer records, "
                              f"error records {c.error_records}, dead-lettered {dead}", found, body.units, body.percentiles),
    ]  # fmt: skip
    return Report(f"s3-fanout transfer run {h.run.run_id}", "; ".join(labels(summary)), blocks,
                  answer=run_sections.answer(main, described(images, {PLOT: CAPTION}), found),
                  links=run_sections.run_links(h.run), limits=h.limits or "")


def flat(rows: list[dict], extra: dict) -> list[dict]:
    """The rows as CSV lines: the cell's fields with `extra` (network and limits) after them, the
    statistics flattened, CIs as low and high."""
    out = []
    for r in rows:
        line = {name: r[name] for name in CELLS.across if name in r} | extra
        line |= {"n": r["n"], **{f"seconds_{k}": r["seconds"][k] for k in ("p50", "p90", "p99", "avg")},
                 "seconds_p50_ci_low": (r["seconds_p50_ci"] or [None])[0], "seconds_p50_ci_high": (r["seconds_p50_ci"] or [None, None])[1],
                 "mb_per_s_p50": r["mb_per_s"]["p50"], "speedup": r["speedup"],
                 "speedup_ci_low": (r["speedup_ci"] or [None])[0], "speedup_ci_high": (r["speedup_ci"] or [None, None])[1],
                 "requests_per_message": r["requests_per_message"], "cost_per_gb": r["cost_per_gb"],
                 "retries": r["retries"], "slowdowns": r["slowdowns"]}  # fmt: skip
        out.append(line)
    return out


def write(summary: Summary, plots_too: bool = True) -> list:
    """The report's files in results/<run_id>/, each written atomically; returns their paths.
    Its one plot is drawn also for a sweep's cell (`plots_too` is the drivers' interface)."""
    written = summaries.write(summary)
    folder, rows = runs.run_dir(summary.run_id), summary.body.rows
    lines = flat(rows, {"network": "; ".join(labels(summary)), "limits": summary.header.limits or ""})
    if lines:
        written.append(runs.write_csv(folder / "transfer.csv", list(lines[0]), lines))
    caption = run_sections.labels("; ".join(labels(summary)), summary.header.limits)
    images = [figures.save(figure(rows, caption), folder / PLOT)] if rows else []
    return [*written, *images, *report_files.write(sections(summary, tuple(images)), folder)]


def figure(rows: list[dict], caption: list[str]):
    """p50 MB/s against threads (log 2), one panel per operation and one line per part size and
    the other varying fields, the p50's 95% CI as error bars; `caption` under it, a line each."""
    ops = operations(rows)
    fig, axes = plt.subplots(1, len(ops), figsize=(figures.WIDTH, 5), layout="constrained", squeeze=False)
    for ax, operation in zip(axes[0], ops):
        mine = [r for r in rows if r["operation"] == operation]
        varying = [n for n in TUNING if n != "threads" and len({str(r[n]) for r in mine}) > 1]
        lines: dict = {}
        for r in mine:
            lines.setdefault(tuple(CELLS.key(r).text(n) for n in ["part_size", *varying]), []).append(r)
        for key, points in lines.items():
            points.sort(key=lambda r: r["threads"])
            x = [max(r["threads"], 1) for r in points]
            y = [r["mb_per_s"]["p50"] for r in points]
            low = [y_ - (r["mb_per_s_p50_ci"] or (y_, y_))[0] for y_, r in zip(y, points)]
            high = [(r["mb_per_s_p50_ci"] or (y_, y_))[1] - y_ for y_, r in zip(y, points)]
            ax.errorbar(x, y, yerr=[low, high], marker="o", capsize=3, label=f"part {key[0]}" + "".join(f", {k}" for k in key[1:]))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("THREADS")
        ax.set_ylabel("MB/s (decimal), p50 with 95% CI")
        ax.set_title(operation)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize="small")
    figures.title(fig, "S3 transfer speed against threads, per part size")
    return figures.caption(fig, caption)


@dataclass
class Across:
    """The summary of a report across runs (cells.json, in this order): a row per cell of the
    runs' records together."""

    title: str
    runs: list[str]
    networks: list[str]
    limits: str
    units: str
    percentiles: str
    ci_method: str
    rows: list[Row]


def across(run_ids: list[str], folder, title: str) -> Across:
    """The tables of the runs' records together (a sweep's closing report): one row per cell.
    Writes cells.csv, cells.json, transfer.png, report.md and index.html into `folder`."""
    messages, network_labels, records = [], set(), [runs.load(run_id) for run_id in run_ids]
    for run_id, record in zip(run_ids, records):
        messages += [r for r in runs.load_records(run_id, "transfer") if r.get("event") == "transfer"]
        network_labels.add("; ".join(filter(None, [record.network_label(), shaping(record)])))
    rows = cell_rows(messages)
    summary = Across(title, run_ids, sorted(network_labels), run_record.limits_label(records), UNITS,
                     stats.PERCENTILE_METHOD, stats.CI_METHOD, rows)  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    lines = flat(rows, {"network": "; ".join(summary.networks), "limits": summary.limits})
    runs.write_csv(folder / "cells.csv", list(lines[0]), lines)
    runs.write_text(folder / "cells.json", json.dumps(asdict(summary), indent=2, default=str) + "\n")
    image = figures.save(figure(rows, run_sections.labels("; ".join(summary.networks), summary.limits)), folder / PLOT)
    report_files.write(across_sections(summary, folder, (image,)), folder)
    return summary


def across_sections(summary: Across, folder=None, images: tuple = ()) -> Report:
    """across()'s summary as sections: the networks, the units, a table per operation, the plot;
    on the terminal, what it wrote into `folder`."""
    networks, limits = summary.networks, list(filter(None, [summary.limits]))
    main = operation_tables(summary.rows, summary.ci_method)
    blocks: list[Block] = [
        Text(f"{summary.title}: transfer across {len(summary.runs)} runs; {'; '.join(networks)}", "bold", only=TERMINAL),
        *(Text(line, "bold", only=TERMINAL) for line in limits),
        *on_only(main, TERMINAL),
        Heading(run_sections.HOW_TITLE),
        Text("\n".join(f"- **{label}**" for label in [*networks, *limits]), only=FILES),
        Text(f"Units: {summary.units}. Percentiles: {summary.percentiles}.", only=FILES),
    ]  # fmt: skip
    if folder is not None:
        blocks.append(Text(f"wrote cells.csv, cells.json, transfer.png, report.md, index.html to {folder}", only=TERMINAL))
    return Report(summary.title, "; ".join(networks), blocks,
                  answer=run_sections.answer(main, described(images, {PLOT: CAPTION}), []),
                  links=run_sections.across_links(summary.runs, folder), limits=summary.limits)
