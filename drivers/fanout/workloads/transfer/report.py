"""The transfer workload's report: a table per operation in the published tables' shape (the
tuning down, seconds and MB/s across), the speedup against THREADS=1, the request cost per GB
beside the speed, and MB/s against threads per part size.

Statistics from the records (one per message): p50, p90 and p99 of seconds and p50 of MB/s
(decimal, 10^6 bytes/s), numpy's percentiles (type 7); the 95% bootstrap CI of each p50 and of
the speedup, the ratio of the p50 seconds at THREADS=1 to the row's (fanout.results.stats:
percentile method, 10,000 resamples, fixed seed; the two rows resampled independently). Request
cost per GB: the records' requests by kind at S3 Standard prices over the bytes moved (costs.py).
The saved query transfer-percentiles gives the same cells' percentiles on AWS (`make query`).

Every output carries the run's network label; on the local backend the uploads' figures also say
they are unshaped: the shaping proxy shapes what S3 sends, not what the function sends
(fanout.local.network.proxy), so PUT and part bodies go at loopback speed.

Writes into results/<run_id>/: records.jsonl, summary.json, transfer.csv, report.md, transfer.png.
"""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from fanout import insights  # noqa: E402
from fanout.common import registry as workloads  # noqa: E402
from fanout.local import network  # noqa: E402
from fanout.results import cells, deadletters, figures, log_records as run_logs, run_folders as runs, stats, tables  # noqa: E402
from fanout.workloads.transfer import costs as transfer_costs  # noqa: E402

WORKLOAD = workloads.get("transfer")
CELLS = cells.of(WORKLOAD)
TUNING = tuple(f.name for f in WORKLOAD.cells if f.name != "operation")
UNITS = ("seconds: the operation's wall time in the function (time.monotonic); MB/s: bytes moved / seconds, "
         "decimal (1 MB = 10^6 bytes); $/GB: S3 Standard request prices, us-east-1, per 10^9 bytes moved")  # fmt: skip
UNSHAPED = ("uploads unshaped: the local network model shapes what S3 sends, not PUT or part bodies "
            "(needs upload shaping, issue 21)")  # fmt: skip
COLUMNS = ["n", "s p50", "s p50 95% CI", "s p90", "s p99", "MB/s p50", "MB/s p50 95% CI", "speedup vs 1 thread",
           "speedup 95% CI", "requests/msg", "$/GB requests", "retries", "503s"]  # fmt: skip


def build(stack, record: dict) -> dict:
    """Everything the report shows, as plain data (summary.json is this, less the records)."""
    run_id = record["run_id"]
    start_ms, end_ms = runs.run_window(record)
    records = run_logs.run_records(insights.fetch_events(stack, start_ms, end_ms), run_id)
    rows = insights.run_saved(stack, WORKLOAD.query, f'run_id = "{run_id}"', start_ms, end_ms)
    messages = [r for r in records if r.get("event") == "transfer"]
    done = {r["seq"] for r in records if r.get("outcome") == "done"}
    return {
        "run": record,
        "network": network.label(record),
        "shaping": UNSHAPED if record["backend"] == "local" else "",
        "units": UNITS,
        "percentiles": stats.PERCENTILE_METHOD,
        "ci_method": stats.CI_METHOD,
        "counts": {"sent": len(runs.sent_seqs(record)), "seqs_done": len(done), "messages": len(messages),
                   "in_query": sum(int(row["messages"]) for row in rows),
                   "error_records": sum(r.get("event") == "error" for r in records)},  # fmt: skip
        "dead_lettered": sorted(deadletters.peek(stack, run_id, set(runs.sent_seqs(record)) - done)),
        "rows": cell_rows(messages),
        "records": records,
    }


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
        every = {}
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


def warnings(summary: dict) -> list[str]:
    c = summary["counts"]
    again = runs.refresh_hint(summary["run"]["run_id"])
    result = []
    if c["seqs_done"] + len(summary["dead_lettered"]) < c["sent"]:
        result.append(f"only {c['seqs_done']} of {c['sent']} sent messages are done "
                      f"({len(summary['dead_lettered'])} dead-lettered): this report is incomplete; run `make wait`, then {again}")  # fmt: skip
    if c["in_query"] != c["messages"]:
        result.append(f"the percentile query saw {c['in_query']} messages but the log group holds {c['messages']}: "
                      f"in a minute, {again}")  # fmt: skip
    return result


def labels(summary: dict) -> list[str]:
    return [summary["network"]] + ([summary["shaping"]] if summary.get("shaping") else [])


def show(summary: dict) -> None:
    run, c = summary["run"], summary["counts"]
    tables.console.print(f"[bold]run {run['run_id']}[/] (transfer) on the {run['backend']} backend, stack {run['stack']['stack']!r}")
    for label in labels(summary):
        tables.console.print(f"[bold]{label}[/]", highlight=False)
    for operation in operations(summary["rows"]):
        table = operation_table(summary["rows"], operation)
        tables.print_table(f"{operation}", table, summary["ci_method"], labels=len(table[0]) - len(COLUMNS))
    tables.console.print(f"sent {c['sent']}: {c['seqs_done']} done, {c['messages']} transfer records, error records "
                         f"{c['error_records']}, dead-lettered {len(summary['dead_lettered'])}", highlight=False)  # fmt: skip
    tables.console.print(f"units: {summary['units']}; percentiles: {summary['percentiles']}", highlight=False)
    for warning in warnings(summary):
        tables.console.print(f"[bold red]WARNING:[/] {warning}")


def flat(rows: list[dict], extra: dict) -> list[dict]:
    """The rows as CSV lines: statistics flattened, CIs as low and high."""
    out = []
    for r in rows:
        line = {name: r[name] for name in CELLS.across if name in r}
        line |= {"n": r["n"], **{f"seconds_{k}": r["seconds"][k] for k in ("p50", "p90", "p99", "avg")},
                 "seconds_p50_ci_low": (r["seconds_p50_ci"] or [None])[0], "seconds_p50_ci_high": (r["seconds_p50_ci"] or [None, None])[1],
                 "mb_per_s_p50": r["mb_per_s"]["p50"], "speedup": r["speedup"],
                 "speedup_ci_low": (r["speedup_ci"] or [None])[0], "speedup_ci_high": (r["speedup_ci"] or [None, None])[1],
                 "requests_per_message": r["requests_per_message"], "cost_per_gb": r["cost_per_gb"],
                 "retries": r["retries"], "slowdowns": r["slowdowns"], **extra}  # fmt: skip
        out.append(line)
    return out


def write(summary: dict, plots_too: bool = True) -> list:
    """The report's files in results/<run_id>/, each written atomically; returns their paths."""
    written = runs.write_summary(summary)
    folder = runs.run_dir(summary["run"]["run_id"])
    lines = flat(summary["rows"], {"network": "; ".join(labels(summary))})
    if lines:
        written.append(runs.write_csv(folder / "transfer.csv", list(lines[0]), lines))
    images = [figures.save(figure(summary["rows"], labels(summary)), folder / "transfer.png")] if summary["rows"] else []
    return [*written, *images, runs.write_text(folder / "report.md", markdown(summary, images))]


def markdown(summary: dict, images: list) -> str:
    run, c = summary["run"], summary["counts"]
    parts = [f"# s3-fanout transfer run {run['run_id']}", *(f"- **{label}**" for label in labels(summary)),
             f"- backend {run['backend']}, stack {run['stack']['stack']!r}, {run['stack']['memory']} MB; options "
             f"{run['parameters'].get('workload_options')}\n- messages: {c['sent']} sent, {c['seqs_done']} done, "
             f"{c['error_records']} error records, {len(summary['dead_lettered'])} dead-lettered",
             f"Units: {summary['units']}. Percentiles: {summary['percentiles']}. {summary['ci_method']}."]  # fmt: skip
    parts += [f"**Warning:** {w}" for w in warnings(summary)]
    for operation in operations(summary["rows"]):
        parts += [f"## {operation}", tables.markdown_table(operation_table(summary["rows"], operation))]
    parts += ["## Plots"] + [f"![{image.stem}]({image.name})" for image in images]
    return "\n\n".join(parts) + "\n"


def figure(rows: list[dict], caption: list[str]):
    """p50 MB/s against threads (log 2), one panel per operation and one line per part size and
    the other varying fields, the p50's 95% CI as error bars."""
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
    return figures.caption(fig, "; ".join(caption))


def across(run_ids: list[str], folder, title: str) -> dict:
    """The tables of the runs' records together (a sweep's closing report): one row per cell."""
    messages, network_labels = [], set()
    for run_id in run_ids:
        record = runs.load(run_id)
        messages += [r for r in runs.load_records(run_id, "transfer") if r.get("event") == "transfer"]
        network_labels.add(network.label(record) + (f"; {UNSHAPED}" if record["backend"] == "local" else ""))
    rows = cell_rows(messages)
    tables.console.print(f"[bold]{title}[/]: transfer across {len(run_ids)} runs; {'; '.join(sorted(network_labels))}",
                         highlight=False)  # fmt: skip
    parts = [f"# {title}", *(f"- **{label}**" for label in sorted(network_labels)),
             f"Units: {UNITS}. Percentiles: {stats.PERCENTILE_METHOD}. {stats.CI_METHOD}."]  # fmt: skip
    for operation in operations(rows):
        table = operation_table(rows, operation)
        tables.print_table(operation, table, stats.CI_METHOD, labels=len(table[0]) - len(COLUMNS))
        parts += [f"## {operation}", tables.markdown_table(table)]
    folder.mkdir(parents=True, exist_ok=True)
    lines = flat(rows, {"network": "; ".join(sorted(network_labels))})
    runs.write_csv(folder / "cells.csv", list(lines[0]), lines)
    summary = {"title": title, "runs": run_ids, "units": UNITS, "percentiles": stats.PERCENTILE_METHOD, "rows": rows}
    runs.write_text(folder / "cells.json", json.dumps(summary, indent=2, default=str) + "\n")
    image = figures.save(figure(rows, sorted(network_labels)), folder / "transfer.png")
    parts += ["## Plots", f"![{image.stem}]({image.name})"]
    runs.write_text(folder / "report.md", "\n\n".join(parts) + "\n")
    return summary
