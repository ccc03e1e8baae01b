"""The download workload's `fanout compare A B` (fanout.stages.compare): did the median or p99
throughput change between A and B?

Per matching cell, the change B - A in median and p99 throughput and its 95% bootstrap interval,
flagged when it excludes 0. How cells are matched and what a flag means: docs/statistics.md,
*compare*.
"""

from fanout.results import cells, concurrency, run_folders as runs, run_record, stats, tables
from fanout.results.sections import Report, Table, Text
from fanout.workloads.download import across as crossrun
from fanout.workloads.download import WORKLOAD
from fanout.common.errors import FanoutError

CELLS = cells.of(WORKLOAD)  # the download workload's cells
FLAG_TITLE = "CI excl. 0"  # the flag column's header; its values are "yes", "no" or "-" (no CI)
FLAG_LEGEND = (f"{FLAG_TITLE}: yes when the {stats.CONFIDENCE:.0%} CI of B - A excludes 0 (lies wholly above or "
               "below it); no (the CI spans 0) is not evidence that nothing changed: changes out to the CI's ends "
               "remain plausible")  # fmt: skip


def compare(a_ids: list[str], b_ids: list[str], at_target: float = concurrency.AT_TARGET_FRACTION) -> dict:
    """Per matching cell the change in median and p99 throughput with its CI, over the downloads
    that ran at target (fanout.workloads.download.across); unmatched cells."""
    a = _side(a_ids, at_target)
    b = _side(b_ids, at_target)
    for name, side, ids in (("A", a, a_ids), ("B", b, b_ids)):
        if not side:
            raise FanoutError(f"no download of {name} ({', '.join(ids)}) ran at target ({at_target:.0%} of its "
                              "concurrency): nothing to compare; AT_TARGET= lower keeps the downloads that ran below it "
                              "(docs/statistics.md)")  # fmt: skip
    values = {name: ({c[name] for c in a}, {c[name] for c in b}) for name in CELLS.across}
    fields = [name for name, (in_a, in_b) in values.items() if len(in_a) > 1 or len(in_b) > 1]
    differ = [name for name, (in_a, in_b) in values.items() if name not in fields and in_a != in_b]
    a_by, b_by = _by_match(a, fields), _by_match(b, fields)
    matched = [_change(key, fields, a_by[key], b_by[key]) for key in a_by if key in b_by]
    return {
        "a": {"runs": a_ids, "label": _side_label(a, differ), "network": sorted({c["network"] for c in a}),
              "limits": run_record.limits_label(runs.load(run_id) for run_id in a_ids)},
        "b": {"runs": b_ids, "label": _side_label(b, differ), "network": sorted({c["network"] for c in b}),
              "limits": run_record.limits_label(runs.load(run_id) for run_id in b_ids)},
        "match_on": fields,
        "differ_in": differ,
        "cells": matched,
        "only_in_a": [crossrun.cell_label(a_by[key], fields) for key in a_by if key not in b_by],
        "only_in_b": [crossrun.cell_label(b_by[key], fields) for key in b_by if key not in a_by],
        "method": stats.CI_METHOD + ", each side resampled independently",
        "downloads": concurrency.at_target_definition(at_target),
    }


def _side(run_ids: list[str], at_target: float) -> list[dict]:
    """Each cell of the runs as its fields plus "mb_per_s": the throughputs of its downloads at target."""
    by_cell, _ = crossrun.group([crossrun.load(run_id) for run_id in run_ids])
    result = []
    for cell in sorted(by_cell, key=crossrun.sort_key):
        downloads = crossrun.at_target_of(cell, by_cell[cell], at_target)
        if downloads:
            result.append(cell.as_dict() | {"mb_per_s": crossrun.samples(downloads)["mb_per_s"]})
    return result


def _by_match(side: list[dict], fields: list[str]) -> dict[tuple, dict]:
    return {tuple(cell[name] for name in fields): cell for cell in side}


def _side_label(side: list[dict], differ: list[str]) -> str:
    return crossrun.cell_label(side[0], differ) if side and differ else ""


def _change(key: tuple, fields: list[str], a: dict, b: dict) -> dict:
    row = dict(zip(fields, key)) | {"n_a": len(a["mb_per_s"]), "n_b": len(b["mb_per_s"])}
    before, after = stats.describe(a["mb_per_s"]), stats.describe(b["mb_per_s"])
    cis = stats.difference_intervals(a["mb_per_s"], b["mb_per_s"], list(stats.CI_STATISTICS.values()))
    for name, ci in zip(stats.CI_STATISTICS, cis):
        row[name] = {"a": before[name], "b": after[name], "change": after[name] - before[name], "ci": ci,
                     "changed": stats.excludes_zero(ci)}  # fmt: skip
    return row


def change_rows(result: dict, name: str) -> list[list]:
    """The table of statistic `name` (p50, p99): each header names the statistic, so that a
    table split to fit the console still says what every column holds."""
    fields = result["match_on"]
    rows = [[*crossrun.key_title(fields), "n A", "n B", f"{name} A", f"{name} B", f"{name} B-A", f"{name} B-A %",
             f"{name} B-A {stats.CONFIDENCE:.0%} CI", FLAG_TITLE]]  # fmt: skip
    for cell in result["cells"]:
        change = cell[name]
        ci = "-" if change["ci"] is None else f"{tables.fmt(change['ci'][0])} to {tables.fmt(change['ci'][1])}"
        rows.append([*crossrun.key_text(cell, fields), cell["n_a"], cell["n_b"], change["a"], change["b"],
                     change["change"], f"{change['change'] / change['a']:+.0%}" if change["a"] else "-", ci,
                     "-" if change["ci"] is None else "yes" if change["changed"] else "no"])  # fmt: skip
    return rows


def sections(result: dict) -> Report:
    """The comparison as the terminal shows it (fanout.results.sections): the sides, a table per
    statistic, the cells found on one side only, and the methods."""
    lines = []
    for side in ("a", "b"):
        label = f" ({result[side]['label']})" if result[side]["label"] else ""
        limits = f"; {result[side]['limits']}" if result[side]["limits"] else ""  # none on AWS
        lines.append(f"{side.upper()}: {', '.join(result[side]['runs'])}{label}; {'; '.join(result[side]['network'])}"
                     f"{limits}")  # fmt: skip
    fields = result["match_on"]
    lines.append(f"cells matched on: {', '.join(crossrun.key_title(fields)) or 'nothing (one cell a side)'}")
    networks = sorted({*result["a"]["network"], *result["b"]["network"]})
    network = networks[0] if len(networks) == 1 else "networks differ, see A and B"
    shown = [Table(f"{name} throughput (MB/s, decimal)", change_rows(result, name), f"{FLAG_LEGEND}; {network}",
                   labels=len(fields)) for name in stats.CI_STATISTICS]  # fmt: skip
    after = [f"only in {side.upper()}: {label}" for side in ("a", "b") for label in result[f"only_in_{side}"]]
    after += [f"CI: {result['method']}; percentiles: {stats.PERCENTILE_METHOD}", f"over the {result['downloads']}"]
    return Report("compare", network, [*map(Text, lines), *shown, *map(Text, after)])
