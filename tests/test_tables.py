"""Console tables at 80 columns: every table the tool prints, with the longest labels it can
produce, keeps every column and header whole within the width (fanout.results.tables); the layouts
themselves (whole, split beside repeated labels, numbered rows with a key)."""

import io
import json
import random
import re

import pytest
from crossrun.support import make_run
from rich.console import Console
from test_endpoint_ips import table_of, with_addresses
from test_report import DOWNLOAD, MIB, report_lines, summary_of, synthetic_records
from test_workloads import calls

from fanout.workloads.download import across as crossrun, endpoint_ips, report
from fanout import insights
from fanout.results import markdown, run_folders as runs, run_record, stats, summary as summaries, tables, terminal
from fanout.workloads.download import compare as download_compare
from fanout.workloads.latency import report as latency_report

WIDTH = 80
LONG_STRATEGY = "ranged connections=16 chunk_size=64MiB"
LONG_TAG = "baseline-before-the-sdk-upgrade"


def whole(text: str, value: str) -> bool:
    """Does `value` appear as a whole cell: after a line start or a space, before two spaces or
    the end of its line? ("p50" inside "p50 95% CI" does not.)"""
    return re.search(rf"(?:^|\s){re.escape(value)}(?=\s\s|\s*$)", text, flags=re.MULTILINE) is not None


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    """Run folders go into the test's own results directory."""
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))


@pytest.fixture
def console():
    """A recording console of 80 columns, the reports' terminal."""
    return Console(width=WIDTH, record=True, file=io.StringIO())


@pytest.fixture
def printed(monkeypatch, console):
    """Each table printed on `console` as (title, rows, the text it printed): the real
    print_table runs, its input is kept."""
    shown, real = [], tables.print_table

    def keep(on, title, rows, note="", labels=None):
        before = len(on.export_text(clear=False))
        real(on, title, rows, note, labels)
        shown.append((title, rows, on.export_text(clear=False)[before:]))

    monkeypatch.setattr(tables, "print_table", keep)
    return shown


def assert_whole(shown: list) -> None:
    """Every line within 80 columns; every title, header and value of every table whole."""
    assert shown
    for title, rows, text in shown:
        too_wide = [line for line in text.splitlines() if len(line) > WIDTH]
        assert not too_wide, (title, too_wide)
        assert title in text
        for header in rows[0]:
            assert whole(text, str(header)), (title, header, text)
        for row in rows[1:]:
            for value in row:
                assert whole(text, tables.fmt(value)), (title, tables.fmt(value), text)


# ---- the layouts --------------------------------------------------------------------------------

PERCENTILES = (10, 25, 50, 75, 90, 99)


def rows_with(labels: dict, percentiles=PERCENTILES) -> list[list]:
    """Two rows, memory MB 512 and 10240, with the other `labels` (header -> value); n and a
    figure per percentile."""
    header = ["memory MB", *labels, "n", *(f"p{p} MB/s" for p in percentiles)]
    figures = [1000.0 + 11.1 * i for i in range(len(percentiles))]
    return [header, *([memory, *labels.values(), 40, *figures] for memory in (512, 10240))]


def test_a_table_that_fits_is_printed_whole_and_once(printed, console):
    tables.print_table(console, "Throughput", rows_with({}, (50, 99)))
    [(_, _, text)] = printed
    assert text.count("Throughput") == 1 and "row 1" not in text
    assert_whole(printed)


def test_a_wide_table_splits_its_figures_beside_the_repeated_labels(printed, console):
    tables.print_table(console, "Throughput", rows_with({}, range(1, 13)))
    [(_, _, text)] = printed
    assert "Throughput (1 of 2)" in text and "Throughput (2 of 2)" in text
    first, second = text.split("Throughput (2 of 2)")
    for part in (first, second):  # each part names its rows: the label's header and values
        assert whole(part, "memory MB") and whole(part, "512") and whole(part, "10240")
    assert "row 1" not in text
    assert_whole(printed)


def test_labels_too_long_to_share_a_table_give_way_to_numbered_rows_and_a_key(printed, console):
    tables.print_table(console, "Throughput", rows_with({"strategy": LONG_STRATEGY}))
    [(_, _, text)] = printed
    figures, key = text.split(tables.KEY_TITLE)
    assert "(1 of" not in figures and LONG_STRATEGY not in figures  # the figures fit in one table, by number
    assert re.search(r"^ ?1\s+512\s+" + re.escape(LONG_STRATEGY), key, flags=re.MULTILINE)
    assert re.search(r"^ ?2\s+10240\s+" + re.escape(LONG_STRATEGY), key, flags=re.MULTILINE)
    assert_whole(printed)


def test_a_column_wider_than_the_console_is_printed_whole_rather_than_clipped(printed, console):
    wide = "x" * (WIDTH + 10)
    tables.print_table(console, "Wide", [["n", "value"], [1, wide]])
    assert wide in printed[0][2]


# ---- every table the tool prints ----------------------------------------------------------------

LONG_CELLS = [DOWNLOAD.Cell(memory, limit, size, strategy, tag)
              for memory, limit, size, strategy, tag in [(10240, 1000, 1024 * MIB, LONG_STRATEGY, LONG_TAG),
                                                         (10240, 1000, 1024 * MIB, "download_file", LONG_TAG),
                                                         (10240, 1000, 64 * MIB, "stream chunk_size=256KiB", "b"),
                                                         (512, 4, 1024 * MIB, "download_file", LONG_TAG)]]  # fmt: skip


def test_one_runs_report_keeps_every_table_whole(printed, console):
    records, _ = synthetic_records(per_cell=40, cell_keys=LONG_CELLS)
    records = with_addresses(records)
    events = [{"timestamp": 1_700_000_000_000 + i, "message": f"REPORT RequestId: {i}\tDuration: 812.34 ms\tBilled "
               "Duration: 813 ms\tMemory Size: 10240 MB\tMax Memory Used: 95 MB"} for i in range(20)]  # fmt: skip
    summary = summary_of(records, sent=len(records), lambda_report=report_lines(events))
    summary.body.endpoint_ips = table_of(records)
    summary.body.endpoint_ips_excluded = endpoint_ips.excluded([r for r in records if r["event"] == "download"])
    terminal.show(report.sections(summary), console)
    titles = {title for title, _, _ in printed}
    assert {*(title + report.AT_TARGET_TITLE for title, _ in report.METRICS.values()), report.EVERY_DOWNLOAD_TITLE,
            "Achieved concurrency", report.ENDPOINT_TITLE, "Lambda REPORT lines"} <= titles  # fmt: skip
    assert any(title.startswith("Strategies at") for title in titles)
    assert_whole(printed)


def long_runs(tag: str, first: int, median_s: float) -> list[str]:
    """Runs whose cells differ in memory, concurrency and strategy, under a long tag."""
    cells = [(10240, 1000, LONG_STRATEGY), (10240, 4, "download_file"), (512, 1000, "stream chunk_size=256KiB")]
    return [make_run(first + i, memory=memory, concurrency=limit, strategy=strategy, tag=tag, per_slot=1,
                     median_s=median_s, seed=first + i)[0]
            for i, (memory, limit, strategy) in enumerate(cells)]  # fmt: skip


def test_the_report_across_runs_keeps_every_table_whole_and_names_each_statistic(printed, console, tmp_path):
    ids = long_runs(LONG_TAG, 1, 0.5) + long_runs("arm", 4, 0.5)
    terminal.show(crossrun.sections(crossrun.build(ids, tmp_path / "out", "t")), console)
    assert_whole(printed)
    [(_, ci_rows, _)] = [entry for entry in printed if "95% CIs" in entry[0]]
    assert ci_rows[0][-4:] == ["p50 MB/s", "p50 95% CI", "p99 MB/s", "p99 95% CI"]


def test_compare_keeps_every_table_whole_with_a_flag_column_and_its_legend(printed, console):
    a, b = long_runs(LONG_TAG, 1, 0.5), long_runs("after-the-sdk-upgrade", 4, 0.25)
    terminal.show(download_compare.sections(download_compare.compare(a, b)), console)
    assert_whole(printed)
    assert [title for title, _, _ in printed] == [f"{name} throughput (MB/s, decimal)" for name in stats.CI_STATISTICS]
    for _, rows, text in printed:
        assert rows[0][-1] == download_compare.FLAG_TITLE
        assert {row[-1] for row in rows[1:]} <= {"yes", "no", "-"}
        legend = " ".join(text.split())
        assert "95% CI of B - A excludes 0" in legend and "no (the CI spans 0) is not evidence that nothing changed" in legend


def latency_run(number: int, reps: int) -> str:
    """A latency run's folder: both classes, sizes up to 100 MB."""
    rng = random.Random(number)
    run_id = f"20260101T{number:06d}Z-{number:06x}"
    sizes = (1, 1000, 100 * 10**6)
    records = calls(rng, "standard", 1.0, sizes=sizes, reps=reps) + calls(rng, "express", 0.25, sizes=sizes, reps=reps)
    runs.save(run_record.RunRecord.from_json({"run_id": run_id, "backend": "local", "stack": {"stack": "s", "backend": "local"}, "sent": 1, "failed_seqs": [],
               "first_send_ms": None, "parameters": {"messages": 1, "workload_options": {"reps": reps}}}))  # fmt: skip
    (runs.run_dir(run_id) / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run_id


def test_latency_reports_keep_every_table_whole(printed, console, tmp_path):
    ids = [latency_run(1, 12), latency_run(2, 100)]
    across = latency_report.across(ids, tmp_path / "across", "sweep 20260101T000000Z-abcdef (fresh execution environments)")
    terminal.show(latency_report.across_sections(across), console)
    records = [json.loads(line) for line in (runs.run_dir(ids[0]) / "records.jsonl").read_text().splitlines()]
    events = [{"timestamp": 1_700_000_000_000 + i, "message": json.dumps(r)} for i, r in enumerate(records)]
    summary = {
        "run": {"run_id": ids[0], "backend": "local", "stack": {"stack": "s", "memory": 1024}, "parameters": {}},
        "network": "measured on AWS",
        "units": latency_report.UNITS, "percentiles": "exact", "ci_method": stats.CI_METHOD,
        "counts": {"sent": 1, "seqs_done": 1, "calls": len(records), "in_query": len(records), "error_records": 0},
        "dead_lettered": [], "rows": insights.evaluate(insights.load_query(latency_report.QUERY), events).rows,
        "ratios": latency_report.ratios(records),
    }  # fmt: skip
    terminal.show(latency_report.sections(summaries.from_json(summary, latency_report.Body)), console)
    titles = [title for title, _, _ in printed]
    assert "Latency by run, class, measure and size (s)" in titles and "Express / Standard, ratio of medians" in titles
    assert "express: get first byte (s)" in titles
    assert_whole(printed)


def test_a_latency_report_says_which_client_made_the_calls_and_in_what_order(console):
    def opening(options: dict) -> str:
        summary = {"run": {"run_id": "r", "backend": "local", "stack": {"stack": "s", "memory": 1024},
                           "parameters": {"workload_options": options}},
                   "network": "measured on AWS", "units": latency_report.UNITS, "percentiles": "exact",
                   "ci_method": stats.CI_METHOD, "dead_lettered": [], "rows": [], "ratios": [],
                   "counts": {"sent": 1, "seqs_done": 1, "calls": 0, "in_query": 0, "error_records": 0}}  # fmt: skip
        return markdown.document(latency_report.sections(summaries.from_json(summary, latency_report.Body)))

    source = opening({"sizes": [1], "reps": 10, "storage": [], "order": "by-class", "client": "per-call"})
    assert "a new client per call, built before its timer" in source and "every repetition of a class, then" in source
    before = opening({"sizes": [1], "reps": 10, "storage": []})  # a run sent before both were options
    assert "one pooled client per message" in before and "the classes in turn within each repetition" in before


def test_a_published_figure_is_shown_as_transcribed_while_ours_are_rounded():
    assert [tables.fmt(tables.Exact(v)) for v in (12.04, 596.1, 95)] == ["12.04", "596.1", "95"]
    assert [tables.fmt(v) for v in (12.04, 596.1)] == ["12.0", "596"]
