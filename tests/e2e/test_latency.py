"""The latency workload end to end on the local backend: fire, wait (hosting), report.

On a stack of its own, with a function timeout long enough for seven sizes up to 1 MB, three
times each.
"""

import json

import pytest

from fanout.results import run_folders as runs, sweep_folders as sweeps

from . import local_stack

pytestmark = pytest.mark.slow

STACK = "e2e-latency"
fanout = local_stack.command(STACK)
SIZES = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000]
REPS = 3
MESSAGES = 4


@pytest.fixture(scope="module")
def deployed(emulator, tmp_path_factory):
    with local_stack.deployed(STACK, 60, emulator, tmp_path_factory) as deployed_stack:
        yield deployed_stack


def test_a_storage_class_the_stack_lacks_is_refused_at_fire(deployed, capsys):
    latest = runs.resolve(runs.LATEST) if (runs.run_dir(runs.LATEST)).exists() else None
    capsys.readouterr()
    assert fanout("fire", "--messages", "1", "--workload", "latency", "--sizes", "1",
                  "--storage", "express") == 2  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'express'" in err and "standard" in err
    assert (runs.resolve(runs.LATEST) if (runs.run_dir(runs.LATEST)).exists() else None) == latest  # nothing sent


def test_a_latency_run_records_every_call_and_leaves_nothing(deployed, capsys):
    sizes = " ".join(map(str, SIZES))
    argv = ["--messages", str(MESSAGES), "--tag", "lat", "--workload", "latency", "--sizes", sizes, "--reps", str(REPS)]
    assert fanout("fire", *argv) == 0
    run_id = runs.resolve(runs.LATEST)
    assert fanout("wait", "--run", run_id, "--timeout", "240", "--network", "none") == 0
    accounting = runs.load(run_id).accounting
    assert (accounting.done, accounting.in_flight, accounting.duplicate_download_records) == (MESSAGES, [], 0)
    capsys.readouterr()
    assert fanout("report", "--run", run_id) == 0
    out = capsys.readouterr().out

    folder = runs.run_dir(run_id)
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    calls = [r for r in records if r["event"] == "latency"]
    assert len(calls) == MESSAGES * len(SIZES) * REPS * 2
    for seq in range(MESSAGES):
        for size in SIZES:
            for operation in ("put", "get"):
                mine = [r for r in calls if (r["seq"], r["size"], r["operation"]) == (seq, size, operation)]
                assert sorted(r["rep"] for r in mine) == list(range(REPS)), (seq, size, operation)
    assert {r["storage"] for r in calls} == {"standard"} and {r["workload"] for r in records} == {"latency"}
    assert sorted(r["seq"] for r in records if r.get("outcome") == "done") == list(range(MESSAGES))

    listed = deployed.client("s3").list_objects_v2(Bucket=deployed.bucket, Prefix="latency/")
    assert listed.get("KeyCount", 0) == 0  # every message deleted what it wrote

    summary = json.loads((folder / "summary.json").read_text())
    assert summary["counts"]["calls"] == summary["counts"]["in_query"] == len(calls)
    get_rows = {int(r["size"]): r for r in summary["rows"] if r["operation"] == "get"}
    assert sorted(get_rows) == SIZES and all(int(r["calls"]) == MESSAGES * REPS for r in get_rows.values())
    assert summary["ratios"] == []  # one storage class: no Express/Standard ratio
    label = summary["network"]
    assert label.startswith("simulated network") and label in out
    assert label in (folder / "report.md").read_text() and label in (folder / "latency.csv").read_text()
    assert (folder / "latency.png").stat().st_size > 0
    assert "1 MB" in out and "1 KB" in out  # sizes as SIZES= takes them


def test_a_latency_sweep_over_repetitions(deployed, capsys):
    """Two cells on one deployment (REPS 1 and 2), each its own run, and the closing report."""
    argv = ["sweep", "--concurrency", "2", "--memory", "512", "--object-size", "1KiB", "--strategy", "stream",
            "--function-timeout", "60", "--multiplier", "1", "--tag", "latsweep", "--workload", "latency",
            "--sizes", "1 1KB", "--reps", "1 2", "--timeout", "240", "--network", "none"]  # fmt: skip
    assert fanout(*argv) == 0
    manifest = sweeps.load(sweeps.LATEST)
    assert [cell.status for cell in manifest.cells] == ["done", "done"]
    for cell, reps in zip(manifest.cells, (1, 2)):
        assert cell.params["options"]["reps"] == reps
        records = (runs.run_dir(cell.run_id) / "records.jsonl").read_text().splitlines()
        calls = [r for r in map(json.loads, records) if r["event"] == "latency"]
        assert len(calls) == 2 * 2 * reps * 2  # messages x sizes x reps x (put, get)
    rows = json.loads((sweeps.sweep_dir(manifest.sweep_id) / "cells.json").read_text())["rows"]
    assert {(r["reps"], r["measure"], r["size"]) for r in rows} == {
        (reps, measure, size) for reps in (1, 2) for measure in ("put", "get", "get first byte") for size in (1, 1000)
    }
    assert all(r["n"] == 2 * r["reps"] for r in rows)
