"""The cross-run report against an independent computation from each run's records.jsonl."""

import csv
import io
import json

import numpy as np
import pytest
from rich.console import Console

from fanout.results import concurrency, run_folders as runs, run_record, terminal
from fanout.workloads.download import across as crossrun, across_plots as crossplots, report
from fanout.common.errors import FanoutError

from .support import at_target, make_run

AXES = [(1024, 2), (1024, 6), (2048, 2), (2048, 6)]


@pytest.fixture
def four_runs():
    """A 2 x 2 memory x concurrency set; the third run predates records' object_size field and
    the second lost two messages to the dead-letter queue."""
    made = {}
    for number, (memory, limit) in enumerate(AXES, start=1):
        made[(memory, limit)] = make_run(
            number, memory=memory, concurrency=limit, seed=number, median_s=0.8 * 1024 / memory,
            dead_lettered=(3, 11) if number == 2 else (), object_size_field=number != 3,
        )  # fmt: skip
    return made


def records_of(run_id):
    lines = (runs.run_dir(run_id) / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_statistics_equal_numpy_on_the_records(four_runs, tmp_path):
    summary = crossrun.build([rid for rid, _ in four_runs.values()], tmp_path / "out", "t")
    with open(tmp_path / "out" / "cells.csv") as f:
        rows = {(int(r["memory_size"]), int(r["concurrency_limit"])): r for r in csv.DictReader(f)}
    assert set(rows) == set(AXES)
    for (memory, limit), (rid, _) in four_runs.items():
        downloads = [r for r in records_of(rid) if r["event"] == "download"]
        kept = at_target(downloads, limit)  # the statistics are over the downloads at target
        seconds = np.array([r["seconds"] for r in kept])
        mb_per_s = np.array([r["bytes"] for r in kept]) / seconds / 1e6
        row = rows[(memory, limit)]
        assert (int(row["n"]), int(row["n_all"])) == (len(kept), len(downloads)) and 0 < len(kept) < len(downloads)
        assert int(row["object_size"]) == downloads[0]["bytes"]  # from run.json when records lack it
        for values, prefix in ((seconds, "seconds"), (mb_per_s, "mb_per_s"), (mb_per_s * 8, "mbit_per_s")):
            expected = {"min": values.min(), "max": values.max(), "avg": values.mean()}
            expected |= {f"p{p}": np.percentile(values, p) for p in (25, 50, 75, 90, 99)}
            for stat, value in expected.items():
                assert float(row[f"{prefix}_{stat}"]) == pytest.approx(value, rel=1e-12), (prefix, stat)
        intervals = [(r["start_ms"], r["end_ms"]) for r in downloads]
        assert int(row["peak_concurrency"]) == limit  # the runs are made of `limit` busy slots
        low, high = concurrency.steady_window(intervals, limit)
        assert float(row["steady_mean_concurrency"]) == pytest.approx(concurrency.mean(intervals, low, high), abs=0.01)
        assert float(row["cold_start_share"]) == pytest.approx(np.mean([r["cold_start"] for r in downloads]), abs=1e-4)
    assert [c["memory_size"] for c in summary.cells] == [m for m, _ in AXES]  # numeric order
    assert summary.varying == ["memory_size", "concurrency_limit"]


def test_confidence_intervals_hold_the_median_and_p99(four_runs, tmp_path):
    summary = crossrun.build([rid for rid, _ in four_runs.values()], tmp_path / "out", "t")
    for cell in summary.cells:
        for name in ("p50", "p99"):
            assert cell[f"mb_per_s_{name}_ci_low"] <= cell[f"mb_per_s_{name}"] <= cell[f"mb_per_s_{name}_ci_high"]
        assert cell["mb_per_s_p50_ci_high"] - cell["mb_per_s_p50_ci_low"] > 0


def test_accounting_counts_every_message(four_runs, tmp_path):
    summary = crossrun.build([rid for rid, _ in four_runs.values()], tmp_path / "out", "t")
    by_axes = {(c["memory_size"], c["concurrency_limit"]): c for c in summary.cells}
    lossy = by_axes[(1024, 6)]
    assert (lossy["sent"], lossy["done"], lossy["dead_lettered"], lossy["failed"]) == (60, 58, 2, 0)
    assert lossy["complete"] is True
    assert lossy["errors"] == len([r for r in records_of(four_runs[(1024, 6)][0]) if r["event"] == "error"])
    assert all(c["sent"] == c["done"] + c["failed"] + c["dead_lettered"] for c in summary.cells)
    assert [w for w in summary.warnings if "ran at target" not in w] == []


def test_a_run_without_accounting_is_unknown_and_warned(tmp_path):
    rid, _ = make_run(1, accounting=False)
    summary = crossrun.build([rid], tmp_path / "out", "t")
    assert summary.cells[0]["complete"] is None
    assert any(f"make wait RUN={rid}" in w for w in summary.warnings)


def test_records_older_than_the_accounting_are_warned(tmp_path):
    rid, downloads = make_run(1)
    path = runs.run_dir(rid) / "records.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in downloads[:-3]))  # a report made before wait ended
    summary = crossrun.build([rid], tmp_path / "out", "t")
    assert summary.cells[0]["n_all"] == len(downloads) - 3
    (warning,) = [w for w in summary.warnings if "ran at target" not in w]
    assert f"make report RUN={rid}` again" in warning
    assert "**Warning:** " + warning in (tmp_path / "out" / "report.md").read_text()


def test_runs_fired_before_strategies_take_their_mode(tmp_path):
    rid, downloads = make_run(1, strategy="stream")
    record = runs.load(rid).to_json()
    record["parameters"]["mode"] = record["parameters"].pop("strategy")  # run.json of an older fire
    runs.update(run_record.RunRecord.from_json(record))
    path = runs.run_dir(rid) / "records.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in d.items() if k != "strategy"} | {"mode": "stream"}) + "\n"
                            for d in downloads))  # fmt: skip
    summary = crossrun.build([rid], tmp_path / "out", "t")
    (cell,) = summary.cells
    assert cell["strategy"] == "stream" and cell["n_all"] == len(downloads)


def test_missing_records_name_the_run_and_the_fix(tmp_path):
    rid, _ = make_run(1)
    (runs.run_dir(rid) / "records.jsonl").unlink()
    with pytest.raises(FanoutError, match=f"run {rid} has no records.jsonl: run `make report RUN={rid}`"):
        crossrun.build([rid], tmp_path / "out", "t")
    assert not (tmp_path / "out").exists()  # nothing half-created


@pytest.mark.parametrize(
    ("backend", "network", "label"),
    [
        ("local", None, "simulated network: none (loopback, not modelled)"),
        ("local", {"profile": "lambda-s3", "scale": 0.25}, "simulated network: lambda-s3, scale 0.25 (rates / 0.25, first byte not scaled)"),
        ("aws", None, "measured on AWS"),
    ],
)
def test_the_network_label_is_on_every_output(tmp_path, backend, network, label):
    rid, _ = make_run(1, backend=backend, network=network)
    out = tmp_path / "out"
    summary = crossrun.build([rid], out, "t")
    assert summary.network == label
    markdown = (out / "report.md").read_text()
    assert markdown.count(label) >= 5  # the heading line and every table's caption
    assert json.loads((out / "cells.json").read_text())["network"] == label
    with open(out / "cells.csv") as f:
        assert {row["network"] for row in csv.DictReader(f)} == {label}


def test_the_limits_each_run_was_held_to_are_stated_once_each_beside_the_network(tmp_path, capsys):
    """A sweep across memory sizes: each size's limits once, on the terminal, in report.md and
    cells.json; the cells still pool by network alone (the limits are no cell field)."""
    held = {512: "0.289 vCPU, enforced by cgroup", 1024: "0.579 vCPU, enforced by cgroup"}
    ids = [make_run(n, memory=memory, limits={f"memory ({memory} MB)": "enforced by cgroup", "CPU share": held[memory]})[0]
           for n, memory in ((1, 512), (2, 1024), (3, 1024))]
    out = tmp_path / "out"
    summary = crossrun.build(ids, out, "t")
    stated = ["Lambda's limits: CPU share: 0.289 vCPU, enforced by cgroup; memory (512 MB): enforced by cgroup",
              "Lambda's limits: CPU share: 0.579 vCPU, enforced by cgroup; memory (1024 MB): enforced by cgroup"]
    assert summary.limits == " | ".join(stated) and summary.varying == ["memory_size"]
    assert json.loads((out / "cells.json").read_text())["limits"] == summary.limits
    assert f"**{summary.limits}**" in (out / "report.md").read_text()
    terminal.show(crossrun.sections(summary), Console(width=1000))
    assert summary.limits in capsys.readouterr().out.splitlines()
    aws = crossrun.build([make_run(4, backend="aws")[0]], tmp_path / "aws", "t")
    assert aws.limits == "" and "Lambda's limits" not in (tmp_path / "aws" / "report.md").read_text()


def test_the_cells_csv_and_the_plots_state_the_limits_of_their_runs(tmp_path, monkeypatch):
    """cells.csv's `limits` beside `network` holds the limits of each cell's runs; every plot's
    caption has the limits of all the runs under the network."""
    captions: list[str] = []
    save = crossplots.save

    def caption_of(fig, path):
        captions.append(fig._supxlabel.get_text())
        return save(fig, path)

    monkeypatch.setattr(crossplots, "save", caption_of)
    ids = [make_run(n, memory=memory, concurrency=concurrency, limits={f"memory ({memory} MB)": "enforced by cgroup v2"})[0]
           for n, memory, concurrency in ((1, 512, 1), (2, 512, 2), (3, 1024, 1), (4, 1024, 2))]
    ids.append(make_run(5, memory=1024, concurrency=4)[0])  # recorded without limits, as on AWS
    summary = crossrun.build(ids, tmp_path / "out", "t")
    with open(tmp_path / "out" / "cells.csv") as f:
        reader = csv.DictReader(f)
        rows = {(int(row["memory_size"]), int(row["concurrency_limit"])): row["limits"] for row in reader}
    columns = list(reader.fieldnames or [])
    assert columns[columns.index("network") + 1] == "limits"
    assert rows == {(512, 1): "Lambda's limits: memory (512 MB): enforced by cgroup v2",
                    (512, 2): "Lambda's limits: memory (512 MB): enforced by cgroup v2",
                    (1024, 1): "Lambda's limits: memory (1024 MB): enforced by cgroup v2",
                    (1024, 2): "Lambda's limits: memory (1024 MB): enforced by cgroup v2", (1024, 4): ""}
    assert captions and set(captions) == {f"{summary.network}\n{summary.limits}"}


def test_two_networks_are_not_pooled(tmp_path):
    a, _ = make_run(1)
    b, _ = make_run(2, network={"profile": "p", "scale": 1})
    summary = crossrun.build([a, b], tmp_path / "out", "t")
    assert len(summary.cells) == 2 and summary.varying == ["network"]
    assert summary.network.startswith("mixed: ")


def test_files_and_plots_are_written(four_runs, tmp_path):
    out = tmp_path / "out"
    crossrun.build([rid for rid, _ in four_runs.values()], out, "t")
    names = {p.name for p in out.iterdir()}
    assert {"cells.csv", "cells.json", "report.md", "throughput_vs_concurrency.png", "median_throughput_heatmap.png",
            "seconds_by_cell.png"} <= names  # fmt: skip
    assert all((out / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in names if n.endswith(".png"))
    assert "samples" not in json.loads((out / "cells.json").read_text())


def test_console_fits_80_columns(four_runs, tmp_path, monkeypatch):
    buffer = io.StringIO()
    narrow = Console(file=buffer, width=80)
    terminal.show(crossrun.sections(crossrun.build([rid for rid, _ in four_runs.values()], tmp_path / "out", "t")), narrow)
    lines = buffer.getvalue().splitlines()
    assert max(map(len, lines)) <= 80
    assert sum("simulated network: none" in line for line in lines) >= 5


def test_a_cell_has_every_field_of_the_single_run_report():
    assert set(crossrun.CELLS.fields) | {"object_size"} <= set(crossrun.CELLS.across)


def test_the_slower_address_of_a_cell_is_flagged_across_runs(tmp_path):
    addresses = {"10.0.0.1": 1.0, "10.0.0.2": 1.0, "10.0.0.3": 2.0}  # seconds multipliers
    ids = [make_run(n, concurrency=6, per_slot=12, seed=n, addresses=addresses)[0] for n in (1, 2)]
    summary = crossrun.build(ids, tmp_path / "out", "t")
    flags = {row["endpoint_ip"]: row["flag"] for row in summary.endpoint_ips}
    assert flags["10.0.0.3"] == "slower" and "slower" not in {flags["10.0.0.1"], flags["10.0.0.2"]}
    pooled = [r for rid in ids for r in records_of(rid)]
    assert {row["endpoint_ip"]: row["downloads"] for row in summary.endpoint_ips} == {
        ip: sum(r.get("endpoint_ip") == ip for r in pooled) for ip in addresses}
    text = (tmp_path / "out" / "report.md").read_text()
    assert f"## {report.ENDPOINT_TITLE}" in text and "| 10.0.0.3 |" in text


def test_a_cells_statistics_leave_out_the_ramp_and_say_how_many(tmp_path):
    """Slots that start one after another (the queue mapping's scale-out): the downloads before
    the last slot joined ran below the target and are left out of the statistics, counted, and
    the cell says how many messages per slot would give 30 at target."""
    rid, downloads = make_run(1, concurrency=10, per_slot=6, median_s=0.5, sigma=0.1, ramp_ms=300)
    summary = crossrun.build([rid], tmp_path / "out", "t")
    (cell,) = summary.cells
    kept = at_target(downloads, 10)
    assert (cell["n"], cell["n_all"], cell["n_excluded"]) == (len(kept), 60, 60 - len(kept))
    early = min(d["start_ms"] for d in downloads if d["seq"] // 6 == 9)  # the last slot's first start
    assert all(d["end_ms"] > early for d in kept)  # nothing that ended before every slot ran
    expected_mb_per_s = np.median([d["bytes"] / d["seconds"] / 1e6 for d in kept])
    assert cell["mb_per_s_p50"] == pytest.approx(expected_mb_per_s)
    # The run (about 6 s) outlasted the mapping's ramp to 10 (1 s): at target in proportion.
    multiplier = -(-30 * 60 // (len(kept) * 10))  # ceiling
    assert [f"{len(kept)} of 60 downloads ran at target; MULTIPLIER={multiplier}" in n for n in summary.notes] == [True]
    assert not [w for w in summary.warnings if "ran at target" in w]  # information, not a warning
    assert f"\nnote: cell {summary.notes[0].removeprefix('cell ')}\n" in (tmp_path / "out" / "report.md").read_text()
    assert "downloads at target" in (tmp_path / "out" / "report.md").read_text()
    assert (tmp_path / "out" / "throughput_by_concurrency_ran_at.png").is_file()
    looser = crossrun.build([rid], tmp_path / "looser", "t", at_target=0.5).cells[0]
    assert looser["n"] == len(at_target(downloads, 10, 0.5)) > cell["n"]


def test_a_cell_that_never_reached_its_target_says_so(tmp_path):
    rid, _ = make_run(1, concurrency=4, per_slot=3, ramp_ms=5000)  # slots never overlap
    summary = crossrun.build([rid], tmp_path / "out", "t")
    assert summary.cells[0]["n"] == 0
    assert summary.cells[0]["most_ran_at"] == 1.0  # one slot at a time
    assert any("no download ran at target: the most one ran at was 1 of 4" in w and "would not help" in w
               for w in summary.warnings)  # fmt: skip


def test_a_cells_lambda_bill_is_its_runs_saved_bills_beside_their_estimates(tmp_path):
    """Two runs pooled in one cell: the bill and the estimate are the sums of what their saved
    reports hold; a cell with a run never reported with its cost shows none."""
    made = [make_run(n, seed=n)[0] for n in (1, 2)]
    costs_ = [(0.012, 0.010), (0.018, 0.020)]  # (billed, estimated Lambda USD) of each run
    for run_id, (billed, estimated) in zip(made, costs_):
        runs.write_json(runs.run_dir(run_id) / runs.SUMMARY_FILE,
                        {"cost": {"billed": {"usd": billed}, "estimated_lambda_usd": estimated}})  # fmt: skip
    (cell,) = crossrun.build(made, tmp_path / "out", "t").cells
    assert cell["lambda_billed_usd"] == pytest.approx(0.030) and cell["lambda_estimated_usd"] == pytest.approx(0.030)
    assert cell["bill_over_estimate"] == pytest.approx(1.0)
    assert "## Lambda cost (USD)" in (tmp_path / "out" / "report.md").read_text()
    unreported = make_run(3, seed=3, tag="other")[0]
    assert crossrun.build([unreported], tmp_path / "o2", "t").cells[0]["lambda_billed_usd"] is None


def test_throttling_cpu_and_a_second_sdk_show_across_runs(tmp_path):
    """The per-download retries, SlowDowns, CPU share and SDK versions reach the report across
    runs: a cell with a 503 is flagged, and records on two SDKs are warned about."""
    rid, downloads = make_run(1, memory=1024)
    for i, d in enumerate(downloads):
        d |= {"retries": 1 if i < 3 else 0, "slowdowns": 1 if i < 3 else 0, "cpu_share": 0.2, "key": "k",
              "boto3_version": "1.44.5" if i else "1.40.0", "botocore_version": "1.44.8", "s3transfer_version": "0.19.3",
              "awscrt_version": None, "sdk_source": "bundled"}  # fmt: skip
    (runs.run_dir(rid) / "records.jsonl").write_text("".join(json.dumps(d) + "\n" for d in downloads))
    summary = crossrun.build([rid], tmp_path / "out", "t")
    (cell,) = summary.cells
    assert (cell["retries"], cell["slowdowns"], cell["throttled_downloads"], cell["keys"]) == (3, 3, 3, 1)
    assert cell["flags"] == "throttled" and cell["cpu_allowance"] == pytest.approx(1024 / 1769, abs=1e-3)
    assert any("2 SDK versions" in w and "1 records on boto3 1.40.0" in w for w in summary.warnings)
    assert "## Throttling and CPU" in (tmp_path / "out" / "report.md").read_text()
