"""The per-endpoint-address table: counts and percentiles from the saved query, the bootstrap
interval of each address's median, the cell's overall median and the flags; and the report
printing and writing it."""

import io

import numpy as np
import pytest
from rich.console import Console

from fanout.workloads.download import endpoint_ips, report
from fanout import insights
from fanout.results import run_folders as runs, stats, terminal

from test_report import CELLS, as_events, summary_of, synthetic_records

SLOW, FAST = "10.0.0.3", ("10.0.0.1", "10.0.0.2")


def with_addresses(records, seed=1, slow_factor=0.5, mixed_every=9):
    """Spread the downloads over three addresses, those on SLOW taking 1/slow_factor as long;
    every mixed_every-th download reached two addresses (no endpoint_ip)."""
    rng = np.random.default_rng(seed)
    out = []
    for i, r in enumerate(records):
        if r["event"] != "download":
            out.append(r)
            continue
        ip = [SLOW, *FAST][int(rng.integers(0, 3))]
        seconds = r["seconds"] / (slow_factor if ip == SLOW else 1)
        r = dict(r, seconds=seconds, request_ips=f"{ip} {ip}", first_byte_seconds=seconds / 20)
        if i % mixed_every == 0:
            r["request_ips"] = f"{ip} {FAST[0] if ip != FAST[0] else FAST[1]}"
        else:
            r["endpoint_ip"] = ip
        out.append(r)
    return out


def table_of(records):
    rows = insights.evaluate(insights.load_query("endpoint-ips"), as_events(records)).rows
    return endpoint_ips.table(rows, [r for r in records if r["event"] == "download"])


def test_the_slow_address_is_flagged_and_the_figures_are_the_records():
    from scipy import stats as scipy_stats  # the reference: imported here, not by every worker's collection

    records, _ = synthetic_records(seed=2, per_cell=150, cell_keys=CELLS[:1])
    records = with_addresses(records)
    table = table_of(records)
    mine = [r for r in records if r.get("endpoint_ip")]
    rates = {ip: [r["bytes"] / r["seconds"] / 1e6 for r in mine if r["endpoint_ip"] == ip] for ip in (SLOW, *FAST)}
    overall = np.median([v for values in rates.values() for v in values])
    assert {row["endpoint_ip"] for row in table} == set(rates)
    for row in table:
        values = rates[row["endpoint_ip"]]
        assert row["downloads"] == len(values)
        assert row["mb_per_s_p50"] == pytest.approx(np.percentile(values, 50))
        assert row["overall_p50"] == pytest.approx(overall)
        ci = scipy_stats.bootstrap((values,), np.median, n_resamples=stats.RESAMPLES, method="percentile",
                                   confidence_level=0.95, rng=np.random.default_rng(stats.SEED)).confidence_interval
        assert (row["p50_ci_low"], row["p50_ci_high"]) == pytest.approx((ci.low, ci.high), rel=1e-9)
        expected = "slower" if ci.high < overall else "faster" if ci.low > overall else ""
        assert row["flag"] == expected
    assert {row["endpoint_ip"]: row["flag"] for row in table}[SLOW] == "slower"
    assert endpoint_ips.excluded([r for r in records if r["event"] == "download"]) == len(
        [r for r in records if r["event"] == "download" and "endpoint_ip" not in r])


def test_addresses_that_do_not_differ_are_not_flagged():
    """Same distribution on every address (fixed seeds: a 95% interval would flag one address
    in twenty by chance, not these)."""
    records, _ = synthetic_records(seed=4, per_cell=150, cell_keys=CELLS[:1])
    table = table_of(with_addresses(records, slow_factor=1.0))
    assert len(table) == 3 and [row["flag"] for row in table] == ["", "", ""]


def test_one_download_has_no_interval_and_no_flag():
    records, _ = synthetic_records(seed=5, per_cell=1, cell_keys=CELLS[:1])
    [row] = table_of([dict(records[0], endpoint_ip=SLOW, request_ips=SLOW)])
    assert (row["downloads"], row["p50_ci_low"], row["p50_ci_high"], row["flag"]) == (1, None, None, "")


def test_cells_are_compared_within_themselves():
    records, _ = synthetic_records(seed=6, per_cell=60, cell_keys=CELLS[:2])
    table = table_of(with_addresses(records))
    by_cell = {}
    for row in table:
        by_cell.setdefault(endpoint_ips.CELLS.key(row), set()).add(row["overall_p50"])
    assert len(by_cell) == 2 and all(len(overalls) == 1 for overalls in by_cell.values())


def test_each_address_has_the_median_of_its_downloads_requests_per_second():
    """repeated's measure: per address, the median of each download's requests over its seconds,
    by the query and from the records alike."""
    records, _ = synthetic_records(seed=8, per_cell=60, cell_keys=CELLS[:1])
    records = [dict(r, requests=100, requests_per_s=100 / r["seconds"]) if r["event"] == "download" else r
               for r in with_addresses(records)]  # fmt: skip
    downloads = [r for r in records if r["event"] == "download"]
    for table in (table_of(records), endpoint_ips.from_records(downloads)):
        for row in table:
            mine = [100 / r["seconds"] for r in downloads if r.get("endpoint_ip") == row["endpoint_ip"]]
            assert row["requests_per_s_p50"] == pytest.approx(np.median(mine))
        slow = next(row for row in table if row["endpoint_ip"] == SLOW)
        assert all(slow["requests_per_s_p50"] < row["requests_per_s_p50"] for row in table if row is not slow)


def test_from_records_equals_the_query_path():
    """The report across runs computes the table from the records; the single-run report from
    the saved query: the same rows."""
    records, _ = synthetic_records(seed=7, per_cell=60, cell_keys=CELLS[:2])
    records = with_addresses(records)
    downloads = [r for r in records if r["event"] == "download"]
    via_query, direct = table_of(records), endpoint_ips.from_records(downloads)
    assert len(direct) == len(via_query) == 6
    for a, b in zip(via_query, direct):
        assert endpoint_ips.CELLS.key(a) == endpoint_ips.CELLS.key(b)
        for column in endpoint_ips.COLUMNS:
            expected = b[column] if isinstance(b[column], str | None) else pytest.approx(b[column])
            assert a.get(column) == expected, column  # a field with no value (requests_per_s here) is left out
        assert a["first_byte_ms_p50"] is not None


def test_the_report_prints_and_writes_the_table(monkeypatch, tmp_path):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path))
    records, _ = synthetic_records(seed=2, per_cell=150, cell_keys=CELLS[:1])
    records = with_addresses(records)
    summary = summary_of(records, sent=len(records))
    summary.body.endpoint_ips = table_of(records)
    summary.body.endpoint_ips_excluded = endpoint_ips.excluded([r for r in records if r["event"] == "download"])
    output = io.StringIO()
    console = Console(file=output, width=100)
    terminal.show(report.sections(summary), console)
    text = " ".join(output.getvalue().split())  # the note wraps at the console's width
    assert report.ENDPOINT_TITLE in text and "slower" in text and "percentile method" in text
    assert f"{summary.body.endpoint_ips_excluded} downloads reached several addresses" in text
    report.write(summary, plots_too=False)
    written = (runs.run_dir(summary.run_id) / "report.md").read_text()
    section = written.split(f"## {report.ENDPOINT_TITLE}")[1]
    assert "| address |" in section and f"| {SLOW} |" in section and "slower" in section

    one = [dict(r, endpoint_ip=SLOW) if r["event"] == "download" else r for r in records]
    summary.body.endpoint_ips = table_of(one)
    output.truncate(0)
    terminal.show(report.sections(summary), console)  # one address per cell: nothing to compare on screen; report.md keeps it
    assert len(summary.body.endpoint_ips) == 1 and report.ENDPOINT_TITLE not in output.getvalue()
