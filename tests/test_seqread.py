"""The seqread driver without AWS: fire's checks against a stack (the time limit with its
arithmetic, the remote bucket), the transfer cost by region pair and its warning."""

from dataclasses import replace
from types import SimpleNamespace

import pytest

from fanout import cli
from fanout.common.errors import UsageError
from fanout.results import run_cost, run_record, summary as summaries
from fanout.results.sweep_folders import CellParams
from fanout.stages import sweep
from fanout.workloads.seqread import costs as seqread_costs, report
from fanout.workloads.seqread.driver import SeqreadDriver, parse

MiB, GiB = 2**20, 2**30


def stack(region="us-east-1", remote_region="us-west-2", timeout=300, objects=None):
    """A stack declaring `objects` (default: every run of these tests') in each bucket."""
    declared = objects or {str(64 * MiB): 1, str(256 * MiB): 16, str(GiB): 8}
    outputs = {"remote_region": remote_region, "remote_bucket": "b-remote" if remote_region else "",
               "seqread_objects": declared}  # fmt: skip
    return SimpleNamespace(stack="s", region=region, timeout=timeout, memory=2048, concurrency=10,
                           architecture="x86_64", object_size=MiB, workload_outputs=outputs)  # fmt: skip


def test_a_run_over_the_time_limit_is_refused_with_the_arithmetic():
    # 8 x 1 GiB = 8192 MiB at 75 * 0.3 = 22.5 MiB/s: 364 s, over 300 s.
    with pytest.raises(UsageError, match=r"JOBS=8 x FILE_SIZE=1024MiB = 8192 MiB at 22.5 MiB/s .* takes 364 s, over .* 300 s"):
        SeqreadDriver().plan(stack(), parse({"jobs": "8", "file_size": "1GiB", "source": "remote"}), 1)
    # The same from this region's bucket: 8192 / 75 = 109 s fits.
    SeqreadDriver().plan(stack(), parse({"jobs": "8", "file_size": "1GiB"}), 1)


def test_remote_needs_the_remote_bucket():
    with pytest.raises(UsageError, match="REMOTE_REGION"):
        SeqreadDriver().plan(stack(remote_region=""), parse({"source": "remote"}), 1)


def test_the_estimate_prices_the_pair_per_gb_and_warns_when_it_dominates():
    plan = SeqreadDriver().plan(stack(), parse({"jobs": "16", "file_size": "256MiB", "source": "remote"}), 100)
    gb = 100 * 16 * 256 * MiB / 1e9
    assert plan.estimate.s3_data == pytest.approx(gb * 0.02)
    assert any("$0.02/GB" in line for line in plan.estimate.notes)
    assert any("warning: inter-region transfer" in line for line in plan.estimate.notes)
    local = SeqreadDriver().plan(stack(), parse({"jobs": "16", "file_size": "256MiB"}), 100)
    assert local.estimate.s3_data == 0 and not any("warning" in line for line in local.estimate.notes)


def test_an_unknown_pair_is_refused_in_one_line_not_guessed():
    plan = SeqreadDriver().plan(stack(remote_region="eu-west-1"), parse({"source": "remote"}), 10)
    assert plan.estimate.s3_data == 0
    [line] = [line for line in plan.estimate.notes if "eu-west-1" in line]
    assert "no transfer price known for eu-west-1 -> us-east-1" in line and "not estimated" in line
    assert seqread_costs.transfer_price("us-east-1", "us-east-1") == 0.0


def remote_cell(jobs="16", file_size="256MiB") -> CellParams:
    options = parse({"jobs": jobs, "file_size": file_size, "source": "remote"}).fields()
    return CellParams(2048, 10, MiB, "x86_64", "seqread", options)


def test_a_cells_estimate_takes_its_region_pair_from_the_stack_it_runs_on():
    driver, cell = SeqreadDriver(), remote_cell()
    priced = driver.cell_estimate(100, cell, {"region": "us-east-1", "remote_region": "us-west-2"})
    assert priced.s3_data == pytest.approx(100 * 16 * 256 * MiB / 1e9 * 0.02)
    unknown = driver.cell_estimate(100, cell, {"region": "us-east-1", "remote_region": "eu-west-1"})
    assert unknown.s3_data == 0 and any("eu-west-1 -> us-east-1" in line for line in unknown.notes)
    # A run's record of its stack names the pair alike: its cost is the cell's.
    run = {"backend": "aws", "sent": 100, "parameters": {"strategy": "stream", "workload": "seqread",
                                                         "workload_options": cell.options},
           "stack": {"memory": 2048, "concurrency": 10, "object_size": MiB, "architecture": "x86_64",
                     "region": "us-east-1", "remote_region": "us-west-2", "remote_bucket": "b"}}  # fmt: skip
    assert run_cost.estimate(run_record.RunRecord.from_json(run), driver.cell_estimate) == priced


def test_a_sweeps_estimate_prices_the_pair_it_deploys():
    args = cli.build_parser().parse_args(["sweep", "--workload", "seqread", "--jobs", "16", "--file-size", "256MiB",
                                          "--from", "remote", "--remote-region", "us-west-2", "--concurrency", "10",
                                          "--memory", "2048", "--object-size", "1MiB", "--strategy", "stream"])  # fmt: skip
    settings = sweep.check(args)
    (cell,) = settings.axes.cells()
    assert sweep.cell_estimates(10, [cell], settings.deployed()) == \
        [SeqreadDriver().cell_estimate(100, remote_cell(), {"region": "us-east-1", "remote_region": "us-west-2"})]  # fmt: skip


def read(source: str, jobs: int, mib_per_s: float, file_size: int = 4 * MiB) -> dict:
    return {"event": "seqread", "source": source, "jobs": jobs, "file_size": file_size, "block": MiB, "depth": 1,
            "mib_per_s": mib_per_s, "clat_p50_ms": 10.0, "clat_p99_ms": 20.0, "retries": 0, "throttled": 0,
            "bytes": jobs * file_size}  # fmt: skip


def test_the_table_puts_the_paths_side_by_side_with_the_ratio_of_medians():
    reads = [read("local", 1, m) for m in (100, 110, 120)] + [read("remote", 1, m) for m in (50, 55, 60)]
    (row,) = report.rows(reads)
    # numpy's type 7 over three values: p10 = 100 + 0.2 x (110 - 100), p90 = 110 + 0.8 x (120 - 110).
    assert [row["local"][p] for p in ("p50", "p10", "p90")] == pytest.approx([110, 102, 118])
    assert [row["remote"][p] for p in ("p50", "p10", "p90")] == pytest.approx([55, 51, 59])
    assert row["ratio"] == pytest.approx(0.5) and row["ratio_ci"][0] <= 0.5 <= row["ratio_ci"][1]
    head, line = report.table([row])
    assert dict(zip(head, line))["remote/local"] == "0.500" and "remote clat p99 ms" in head


def test_the_plot_has_a_line_per_file_size_and_path():
    reads = [read("local", jobs, 100.0 * jobs) for jobs in (1, 2)] + [read("remote", 2, 40.0)]
    reads += [read("local", 1, 90.0, file_size=8 * MiB)]
    figure = report.figure(report.rows(reads), ["simulated network: test"])
    assert sorted(figure.axes[0].get_legend_handles_labels()[1]) == ["4 MiB local", "4 MiB remote", "8 MiB local"]


def test_an_unfinished_run_or_a_late_query_is_flagged_with_the_way_out():
    summary = summaries.from_json({"run": {"run_id": "r1"}, "network": "", "dead_lettered": [0], "units": "",
                                   "percentiles": "", "ci_method": "", "rows": [], "cost": [],
                                   "counts": {"sent": 4, "seqs_done": 2, "messages": 2, "in_query": 1,
                                              "error_records": 0}}, report.Body)  # fmt: skip
    unfinished, late = report.warnings(summary)
    assert "only 2 of 4 sent messages are done (1 dead-lettered)" in unfinished and "make wait" in unfinished
    assert "saw 1 messages but the log group holds 2" in late and "RUN=r1 REFRESH=1" in late
    summary.header.counts = replace(summary.header.counts, done=3, in_query=2)
    assert report.warnings(summary) == []
