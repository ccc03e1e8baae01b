"""The workload registry and the latency workload's driver side: fire's messages, the memory
check, the cost model, the saved query and the report's statistics."""

import json
import math
import random

import numpy as np
import pytest
from latency_calls import calls
from test_fire import drain, make_stack, queue, results  # noqa: F401 - fixtures

from fanout.results import cells, run_folders as runs, stats, summary as summaries
from fanout import cli, insights
from fanout.cloud import costs
from fanout.stages import fire, report as reporting
from fanout.common import function_modules, paths
from fanout.workloads import registry as workloads
from fanout.common.workload import SHARED_CELL_FIELDS
from fanout.workloads.latency import storage
from fanout.common.errors import FanoutError, UsageError
from fanout.insights.syntax import Stats, parse
from fanout.workloads.latency import driver as latency, costs as latency_costs, report as latency_report



def test_the_drivers_and_the_function_register_the_same_workloads():
    function_side = function_modules.load("workloads")
    assert list(workloads.DRIVERS) == list(function_side.WORKLOADS)
    assert workloads.DEFAULT == function_side.DEFAULT
    for driver in workloads.DRIVERS.values():
        assert isinstance(driver.OPTIONS, tuple) and callable(driver.report().build)


def test_each_workloads_docs_are_in_its_folder_and_listed_in_the_shared_page():
    """A workload's folder holds its README.md; docs/workloads.md (the contract) links to each."""
    shared = (paths.REPO / "docs" / "workloads.md").read_text()
    for name in workloads.DRIVERS:
        readme = paths.REPO / "drivers" / "fanout" / "workloads" / name / "README.md"
        assert readme.read_text().startswith(f"# The {name} workload"), name
        assert f"](../drivers/fanout/workloads/{name}/README.md)" in shared, name


def test_each_workloads_saved_query_groups_by_its_cell_fields():
    """The percentile query of a workload answers per cell: its `by` names the fields the workload
    adds (and, for download, the shared ones its report tables show)."""
    for workload in (driver.workload for driver in workloads.DRIVERS.values()):
        [stats_command] = [c for c in parse(insights.load_query(workload.query)).commands if isinstance(c, Stats)]
        grouped = {name for _, name in stats_command.groups}
        assert set(workload.cell_fields) <= grouped, workload.name
    download = workloads.get("download").workload
    assert set(cells.of(download).fields) == {*SHARED_CELL_FIELDS, *download.cell_fields}


def test_a_latency_run_sends_its_parameters_in_every_body(queue, emulator, results):  # noqa: F811
    sqs, url = queue
    options = latency.parse("1 1KB", "4", "standard").fields()
    record = fire.fire(make_stack(emulator, url), fire.FireParams(6, "lat", workers=2, workload="latency", options=options))
    bodies = sorted(drain(sqs, url), key=lambda b: b["seq"])
    assert [b["seq"] for b in bodies] == list(range(6))
    assert all((b["workload"], b["sizes"], b["reps"], b["storage"]) == ("latency", [1, 1000], 4, ["standard"]) and
               "strategy" not in b for b in bodies)  # fmt: skip
    saved = runs.load(record.run_id).parameters
    assert (saved.workload, saved.workload_options) == ("latency", options)
    assert workloads.get(runs.load(record.run_id).parameters.workload).name == "latency"


def test_sizes_the_memory_cannot_hold_are_refused_with_the_memory_needed():
    params = latency.parse("1 100MB", None, None)
    needed = math.ceil(100 * 1000**2 / 2**20) + latency.MEMORY_HEADROOM_MIB
    with pytest.raises(UsageError, match=f"MEMORY={needed}"):
        latency.check_memory(params, needed - 1)
    latency.check_memory(params, needed)


def test_the_latency_cost_counts_every_request_and_second():
    sizes, reps, messages, memory = [1000, 10**6], 10, 50, 1024
    est = latency_costs.estimate(messages, costs.Deployment(memory, 10), sizes, reps, ("standard",))
    per_message_s = reps * sum(2 * latency_costs.ASSUMED_REQUEST_SECONDS + 2 * s / (costs.ASSUMED_MIB_PER_S * 2**20) for s in sizes)
    calls = messages * reps * len(sizes)
    assert est.gb_seconds == pytest.approx(messages * per_message_s * memory / 1024)
    assert est.s3_gets == pytest.approx(calls * 0.0004 / 1000)
    assert est.s3_puts == pytest.approx(calls * 0.005 / 1000)
    assert est.log_gb == pytest.approx(messages * 2 * calls / messages * latency_costs.LOG_BYTES_PER_RECORD / 1e9)
    assert est.total == pytest.approx(est.lambda_compute + est.lambda_init + est.lambda_ephemeral + est.lambda_requests
                                      + est.sqs_requests + est.s3_gets + est.s3_puts + est.logs_ingestion
                                      + est.insights_scans)  # fmt: skip


def test_the_saved_query_gives_numpys_percentiles_per_class_operation_and_size():
    rng = random.Random(5)
    records = calls(rng, "standard", 1.0) + calls(rng, "express", 0.25)
    events = [{"timestamp": 1_700_000_000_000 + i, "message": json.dumps(r)} for i, r in enumerate(records)]
    rows = insights.evaluate(insights.load_query(latency_report.QUERY), events).rows
    assert len(rows) == 2 * 2 * 3
    for row in rows:
        mine = [r for r in records if (r["storage"], r["operation"], r["size"]) == (row["storage"], row["operation"], row["size"])]
        seconds = [r["seconds"] for r in mine]
        assert row["calls"] == len(mine)
        for p in (10, 50, 90, 99):
            assert row[f"seconds_p{p}"] == pytest.approx(np.percentile(seconds, p))
        assert row["seconds_avg"] == pytest.approx(np.mean(seconds))
        if row["operation"] == "get":
            assert row["first_byte_seconds_p50"] == pytest.approx(np.median([r["first_byte_seconds"] for r in mine]))


def test_the_express_standard_ratio_is_the_ratio_of_medians_with_a_bootstrap_interval():
    rng = random.Random(8)
    standard, express = calls(rng, "standard", 1.0), calls(rng, "express", 0.25)
    found = latency_report.ratios(standard + express)
    assert {(r["size"], r["measure"]) for r in found} == {(s, m) for s in (1, 1000, 10**6) for _, _, m in latency_report.MEASURES}
    for r in found:
        operation, field = {"put": ("put", "seconds"), "get": ("get", "seconds"),
                            "get first byte": ("get", "first_byte_seconds")}[r["measure"]]  # fmt: skip
        of = lambda group: [c[field] for c in group if (c["operation"], c["size"]) == (operation, r["size"])]  # noqa: E731
        assert r["ratio_p50"] == pytest.approx(np.median(of(express)) / np.median(of(standard)))
        assert r["ci"] == pytest.approx(stats.ratio_intervals(of(standard), of(express), [50])[0])
        assert r["ci"][0] <= r["ratio_p50"] <= r["ci"][1]
    assert latency_report.ratios(standard) == []  # one class: nothing to compare


def test_the_answer_has_a_row_per_size_and_a_median_per_class_and_measure():
    rng = random.Random(2)
    records = calls(rng, "standard", 1.0) + calls(rng, "express", 0.25)
    events = [{"timestamp": 1_700_000_000_000 + i, "message": json.dumps(r)} for i, r in enumerate(records)]
    rows = insights.evaluate(insights.load_query(latency_report.QUERY), events).rows
    table = latency_report.median_table(rows)
    assert [line[0] for line in table[1:]] == ["1 B", "1 KB", "1 MB"]
    assert len(table[0]) == 1 + 2 * len(latency_report.MEASURES)
    column = table[0].index("express get first byte p50 (s)")
    first_byte = [c["first_byte_seconds"] for c in records if (c["storage"], c["operation"], c["size"]) == ("express", "get", 1000)]
    assert float(table[2][column]) == pytest.approx(np.median(first_byte), rel=1e-3)


def test_runs_of_different_workloads_share_no_report_and_compare_takes_downloads(queue, emulator, results, capsys):  # noqa: F811
    sqs, url = queue
    stack = make_stack(emulator, url)
    download = fire.fire(stack, fire.FireParams(2, "d", workers=1)).run_id
    options = latency.parse("1", "1", None).fields()
    timed = fire.fire(stack, fire.FireParams(2, "l", workers=1, workload="latency", options=options)).run_id
    with pytest.raises(UsageError, match=f"{download} \\(download\\), {timed} \\(latency\\)"):
        reporting.workload_of([download, timed])
    capsys.readouterr()
    assert cli.main(["compare", timed, timed]) == 2
    assert "latency runs" in capsys.readouterr().err


LATENCY_RUN = "20260101T000000Z-abcdef"
LABEL = "simulated network: lambda-2024, scale 2"


def latency_summary(seed: int) -> latency_report.Summary:
    """A latency report's summary of calls of two storage classes, as build() makes it from the logs."""
    rng = random.Random(seed)
    records = calls(rng, "standard", 1.0) + calls(rng, "express", 0.25)
    events = [{"timestamp": 1_700_000_000_000 + i, "message": json.dumps(r)} for i, r in enumerate(records)]
    return summaries.from_json({
        "run": {"run_id": LATENCY_RUN, "backend": "local", "stack": {"stack": "s", "memory": 512, "backend": "local"},
                "sent": 1, "failed_seqs": [], "first_send_ms": 1_700_000_000_000,
                "parameters": {"messages": 1, "workload": "latency",
                               "workload_options": {"sizes": [1, 1000, 10**6], "reps": 12, "storage": []}}},
        "network": LABEL, "units": latency_report.UNITS, "percentiles": "exact", "ci_method": stats.CI_METHOD,
        "counts": {"sent": 1, "seqs_done": 1, "calls": len(records), "in_query": len(records), "error_records": 0},
        "dead_lettered": [], "rows": insights.evaluate(insights.load_query(latency_report.QUERY), events).rows,
        "ratios": latency_report.ratios(records), "records": records,
    }, latency_report.Body)  # fmt: skip


def test_the_report_files_carry_the_ratio_and_the_network_label(results):  # noqa: F811
    summary = latency_summary(3)
    written = latency_report.write(summary)
    folder = runs.run_dir(LATENCY_RUN)
    assert [path.name for path in written] == ["records.jsonl", "summary.json", "latency.csv", "latency.png", "report.md", "index.html"]
    markdown = (folder / "report.md").read_text()
    assert LABEL in markdown and LABEL in (folder / "latency.csv").read_text()
    assert "Express / Standard" in markdown and stats.CI_METHOD in markdown
    assert (folder / "latency.png").stat().st_size > 0
    assert [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()] == summary.header.records


def test_a_saved_latency_run_reports_from_its_files_byte_for_byte(results, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))  # no emulator, no stack
    summary = latency_summary(4)
    runs.save(summary.header.run)
    reporting.render(summaries.as_saved(summary))  # as the run's first report wrote it
    folder = runs.run_dir(LATENCY_RUN)
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    assert cli.main(["report", "--backend", "local", "--stack", "s", "--run", LATENCY_RUN]) == 0
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    assert "its saved report" in capsys.readouterr().out


def test_a_run_without_saved_latency_calls_is_refused_across_runs(results, tmp_path):  # noqa: F811
    summary = latency_summary(5)
    runs.save(summary.header.run)
    summary.header.records = [{"event": "error", "run_id": LATENCY_RUN, "seq": 0, "error_type": "Boom"}]
    summaries.write(summary)
    with pytest.raises(FanoutError) as raised:
        latency_report.across([LATENCY_RUN], tmp_path / "across", "t")
    assert str(raised.value) == (f"run {LATENCY_RUN} has no latency records in its records.jsonl (1 records): nothing "
                                 f"to report; if its logs hold them, `make report RUN={LATENCY_RUN} REFRESH=1`")  # fmt: skip
    assert not (tmp_path / "across").exists()


def test_every_storage_class_a_stack_can_deploy_passes_the_functions_message_check():
    """fanout.workloads.latency.storage's choices come from the function's definition, in Terraform's set order."""
    assert list(storage.CLASSES) == sorted(storage.CLASSES)
    assert latency.definition.parse_storage(" ".join(storage.CLASSES)) == tuple(storage.CLASSES)
