"""The per-endpoint-address table: which S3 addresses served a cell's downloads faster or slower.

Rows come from the saved query `endpoint-ips`; to each this adds, from the download records
(exact on both backends), the bootstrap interval of the address's median and a `slower` or
`faster` flag against the cell's overall median. Method and caveats: docs/strategies.md,
*Endpoint addresses* (the table).
"""

import numpy as np

from fanout.results import cells, stats
from fanout.workloads.download import WORKLOAD

CELLS = cells.of(WORKLOAD)  # the download workload's cells

FLAG_NOTE = (f"MB/s decimal; p50 CI: {stats.CI_METHOD}, of the address's downloads; overall p50: the cell's "
             f"median over downloads whose requests all reached one address ({stats.PERCENTILE_METHOD}); "
             "flag: the address's p50 CI excludes the overall p50; p50 requests/s: the median of each download's "
             "requests over its seconds")  # fmt: skip
COLUMNS = ("endpoint_ip", "downloads", "mb_per_s_p10", "mb_per_s_p50", "mb_per_s_p90", "p50_ci_low", "p50_ci_high",
           "overall_p50", "flag", "first_byte_ms_p50", "requests_per_s_p50")  # fmt: skip
TITLES = ("address", "n", "p10 MB/s", "p50 MB/s", "p90 MB/s", "p50 CI low", "p50 CI high", "overall p50", "flag",
          "p50 first byte ms", "p50 requests/s")  # fmt: skip


def table(rows: list[dict], downloads: list[dict]) -> list[dict]:
    """The query's rows, each with its p50 CI, the cell's overall p50 and its flag."""
    by_cell: dict[cells.Cell, dict[str, list[float]]] = {}
    for d in downloads:
        if d.get("endpoint_ip"):
            by_cell.setdefault(CELLS.key(d), {}).setdefault(d["endpoint_ip"], []).append(d["bytes"] / d["seconds"] / 1e6)
    result = []
    for row in rows:
        addresses = by_cell.get(CELLS.key(row), {})
        mine = addresses.get(row["endpoint_ip"], [])
        overall = float(np.median([v for values in addresses.values() for v in values])) if addresses else None
        [ci] = stats.intervals(mine, [50]) if mine else [None]
        result.append(dict(row, p50_ci_low=ci and ci[0], p50_ci_high=ci and ci[1], overall_p50=overall,
                           flag=flag(ci, overall)))  # fmt: skip
    return result


def from_records(downloads: list[dict]) -> list[dict]:
    """The table computed from the records alone, as the report across runs computes every
    figure: the query's columns with numpy's percentiles (the local evaluator's method), then
    table()'s. Rows in the query's order within a cell: fastest median first."""
    groups: dict[tuple, list[dict]] = {}
    for d in downloads:
        if d.get("endpoint_ip"):
            groups.setdefault((CELLS.key(d), d["endpoint_ip"]), []).append(d)
    rows = []
    for (cell, address), mine in groups.items():
        rates = [d["bytes"] / d["seconds"] / 1e6 for d in mine]
        p10, p50, p90 = np.percentile(rates, [10, 50, 90])
        first_bytes = [d["first_byte_seconds"] * 1000 for d in mine if d.get("first_byte_seconds") is not None]
        rates_of_requests = [d["requests_per_s"] for d in mine if d.get("requests_per_s") is not None]
        rows.append({**{name: getattr(cell, name) for name in CELLS.fields}, "endpoint_ip": address,
                     "downloads": len(mine), "mb_per_s_p10": float(p10), "mb_per_s_p50": float(p50),
                     "mb_per_s_p90": float(p90),
                     "first_byte_ms_p50": float(np.median(first_bytes)) if first_bytes else None,
                     "requests_per_s_p50": float(np.median(rates_of_requests)) if rates_of_requests else None})  # fmt: skip
    rows.sort(key=lambda row: (CELLS.key(row).sort_key(), -row["mb_per_s_p50"]))
    return table(rows, downloads)


def flag(ci: tuple[float, float] | None, overall: float | None) -> str:
    """`slower` or `faster` when the interval excludes the overall median, else empty."""
    if ci is None or overall is None:
        return ""
    return "slower" if ci[1] < overall else "faster" if ci[0] > overall else ""


def compares(rows: list[dict]) -> bool:
    """Does some cell have more than one address? (Else the table has nothing to compare.)"""
    return len({CELLS.key(row) for row in rows}) < len(rows)


def excluded(downloads: list[dict]) -> int:
    """Downloads without one endpoint address (requests to several, or crt): not in the table."""
    return sum(not d.get("endpoint_ip") for d in downloads)


def rows_for_display(rows: list[dict], columns: tuple[str, ...]) -> list[list]:
    """The table as rows of text-able values: the cell fields that vary, then COLUMNS."""
    header = [*(CELLS.titles[name] for name in columns), *TITLES]
    return [header] + [[*(CELLS.key(row).text(name) for name in columns), *(row.get(c) for c in COLUMNS)]
                       for row in rows]  # fmt: skip
