"""The transfer workload end to end on the local backend: fire, wait (hosting) and report for each
operation, a sweep over THREADS, and nothing left in the bucket but the stack's test object."""

import json

import pytest

from fanout.results import run_folders as runs, sweep_folders as sweeps

from . import local_stack

pytestmark = pytest.mark.slow

STACK = "e2e-transfer"
fanout = local_stack.command(STACK)
MESSAGES = 2


@pytest.fixture(scope="module")
def deployed(emulator, tmp_path_factory):
    with local_stack.deployed(STACK, 120, emulator, tmp_path_factory) as deployed_stack:
        yield deployed_stack


def left_in_the_bucket(deployed) -> tuple[list, list]:
    """The bucket's keys but the stack's test objects (this stack, applied by Terraform alone, has
    none uploaded), and its incomplete uploads' keys."""
    keys = [o["Key"] for o in deployed.client("s3").list_objects_v2(Bucket=deployed.bucket).get("Contents", [])
            if o["Key"] not in deployed.object_keys]  # fmt: skip
    uploads = deployed.client("s3").list_multipart_uploads(Bucket=deployed.bucket).get("Uploads", [])
    return keys, [u["Key"] for u in uploads]


def fire_wait_report(*options: str) -> tuple[str, dict, list[dict]]:
    assert fanout("fire", "--messages", str(MESSAGES), "--tag", "tr", "--workload", "transfer", *options) == 0
    run_id = runs.resolve(runs.LATEST)
    assert fanout("wait", "--run", run_id, "--timeout", "300", "--network", "none") == 0
    assert fanout("report", "--run", run_id) == 0
    folder = runs.run_dir(run_id)
    summary = json.loads((folder / "summary.json").read_text())
    records = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    assert (folder / "transfer.png").stat().st_size > 0 and summary["network"] in (folder / "report.md").read_text()
    assert summary["counts"]["messages"] == summary["counts"]["in_query"] == MESSAGES
    return run_id, summary, [r for r in records if r["event"] == "transfer"]


def test_upload(deployed):
    _, summary, records = fire_wait_report("--operation", "upload", "--size", "64MiB", "--threads", "4",
                                           "--part-size", "8MiB")  # fmt: skip
    assert all(r["requests"] == {"CompleteMultipartUpload": 1, "CreateMultipartUpload": 1, "UploadPart": 8}
               and r["bytes"] == 64 * 2**20 for r in records)  # fmt: skip
    [row] = summary["rows"]
    assert (row["n"], row["threads"], row["part_size"]) == (MESSAGES, 4, 8 * 2**20)
    assert "unshaped" in summary["shaping"]
    assert left_in_the_bucket(deployed) == ([], [])


def test_fan_messages_complete_their_one_upload(deployed):
    """FAN=2: the run's two messages share one upload of 13 MiB + 5 (parts of 5, 5 and 3 MiB + 5),
    as the function's role: the member that loses the id's conditional PUT reads it only then."""
    size = 13 * 2**20 + 5
    _, summary, records = fire_wait_report("--operation", "upload", "--size", str(size), "--part-size", "5MiB",
                                           "--fan", "2", "--threads", "2")  # fmt: skip
    assert sorted(r["fan_member"] for r in records) == [0, 1] and sum(r["fan_completed"] for r in records) == 1
    assert sum(r["bytes"] for r in records) == size
    assert left_in_the_bucket(deployed) == ([], [])


@pytest.mark.parametrize("direction", ["put", "get"])
def test_small_files(deployed, direction):
    _, summary, records = fire_wait_report("--operation", "small-files", "--size", "1KB", "--files", "20",
                                           "--threads", "4", "--prefixes", "2", "--direction", direction)  # fmt: skip
    kind = "PutObject" if direction == "put" else "GetObject"
    assert all(r["requests"] == {kind: 20} and r["objects_per_s"] > 0 for r in records)
    assert left_in_the_bucket(deployed) == ([], [])


@pytest.mark.parametrize("method", ["through-function", "copy-object", "part-copy"])
def test_copy(deployed, method):
    _, summary, records = fire_wait_report("--operation", "copy", "--size", "12MiB", "--part-size", "5MiB",
                                           "--threads", "3", "--method", method)  # fmt: skip
    copies = {"through-function": "UploadPart", "copy-object": "CopyObject", "part-copy": "UploadPartCopy"}  # 12 MiB: multipart
    assert all(r["requests"].get(copies[method]) for r in records) and summary["rows"][0]["method"] == method
    assert left_in_the_bucket(deployed) == ([], [])


def test_a_sweep_over_threads_under_an_upload_cap_is_reported_as_shaped(deployed, tmp_path):
    """A sweep over THREADS under a model that caps each connection's uploads: every cell runs,
    the across-runs table has each THREADS with its speedup against one thread, and the reports
    drop the "unshaped" label (the model shapes uploads). The speedups themselves are known truth
    that tests/network/test_uploads.py checks through the workload's upload core, marked timing:
    here, among the suite's other work, the machine's load would decide them."""
    model = tmp_path / "capped.toml"
    model.write_text("upload_connection_mb_per_s = 4\n")
    argv = ["sweep", "--concurrency", "2", "--memory", "512", "--object-size", "1KiB", "--strategy", "stream",
            "--function-timeout", "120", "--multiplier", "1", "--tag", "truth", "--workload", "transfer",
            "--operation", "upload", "--size", "20MiB", "--part-size", "5MiB", "--threads", "1 2 4",
            "--network", str(model), "--network-scale", "1", "--timeout", "300"]  # fmt: skip
    assert fanout(*argv) == 0
    manifest = sweeps.load(sweeps.LATEST)
    assert [cell.status for cell in manifest.cells] == ["done"] * 3
    assert [cell.params["options"]["threads"] for cell in manifest.cells] == [1, 2, 4]
    folder = sweeps.sweep_dir(manifest.sweep_id)
    summary = json.loads((folder / "cells.json").read_text())
    rows = {r["threads"]: r for r in summary["rows"]}
    assert sorted(rows) == [1, 2, 4] and rows[1]["speedup"] is None
    assert all(rows[n]["speedup"] > 0 for n in (2, 4))
    assert summary["networks"] == ["simulated network: capped, scale 1"]
    assert "unshaped" not in (runs.run_dir(manifest.cells[0].run_id) / "report.md").read_text()
    assert {"index.html", "report.md", "transfer.png"} <= {path.name for path in folder.iterdir()}
    assert left_in_the_bucket(deployed) == ([], [])
