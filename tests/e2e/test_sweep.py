"""`fanout sweep` on the local backend, end to end: a 2 x 2 sweep whose every cell is complete
and carries its own parameters, and a sweep stopped with Ctrl-C in the middle of a cell, then
resumed: finished cells are not run again, the interrupted one is, as a new run, and nothing is
counted twice.

One stack, in the session's private emulator and shared with the other sweep modules
(tests/e2e/conftest.py): each sweep redeploys it.
"""

import json
import os
import signal
import subprocess
import sys
import threading

import pytest

from fanout import cli
from fanout.common import paths
from fanout.results import run_folders as runs, sweep_folders as sweeps
from fanout.cloud import terraform

pytestmark = pytest.mark.slow

MIB = 2**20
WAIT = ["--timeout", "240"]


@pytest.fixture(scope="module")
def stack(shared_stack, tmp_path_factory):
    """The shared stack's name, with results in a folder of the module's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(tmp_path_factory.mktemp("results")))
        yield shared_stack


def sweep(stack: str, *argv: str) -> int:
    return cli.main(["sweep", "--backend", "local", "--stack", stack, *argv])


def records_of(run_id: str) -> list[dict]:
    lines = (runs.run_dir(run_id) / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def check_complete(cell: sweeps.SweepCell, multiplier: int) -> None:
    """Every message the cell's run sent has exactly one download record, and every record
    carries the cell's memory, concurrency and object size."""
    params = cell.params
    record = runs.load(cell.run_id)
    sent = multiplier * params["concurrency"]
    assert record.sent == record.parameters.messages == sent
    assert record.accounting.done == sent and record.accounting.in_flight == []
    assert record.sweep.cell == cell.index and record.sweep.cell_status == "done"
    downloads = [r for r in records_of(cell.run_id) if r["event"] == "download"]
    assert sorted(r["seq"] for r in downloads) == list(range(sent))  # none missing, none twice
    assert {r["run_id"] for r in downloads} == {cell.run_id}
    for r in downloads:
        assert (r["memory_size"], r["concurrency_limit"], r["object_size"], r["bytes"], r["strategy"]) == (
            params["memory"], params["concurrency"], params["object_size"], params["object_size"], params["options"]["strategy"])
    summary = json.loads((runs.run_dir(cell.run_id) / "summary.json").read_text())
    assert summary["counts"]["in_percentile_table"] == summary["counts"]["download_records"] == sent
    (table_cell,) = summary["cells"]
    assert (table_cell["memory_size"], table_cell["concurrency_limit"], table_cell["object_size"]) == (
        params["memory"], params["concurrency"], params["object_size"])


def test_a_2x2_sweep_accounts_for_every_message_of_every_cell(stack, capfd):
    assert sweep(stack, "--concurrency", "2 3", "--memory", "256 512", "--object-size", "1MiB", "--multiplier", "2",
                 "--tag", "e2e", "--network", "lambda-2024", "--network-scale", "50", *WAIT) == 0  # fmt: skip
    # Terraform's output (every cell's redeploy) goes to the stack's log, not to the screen.
    log = (paths.stack_dir("local", stack) / terraform.LOG_FILE).read_text()
    assert "Apply complete!" in log and "Apply complete!" not in capfd.readouterr().out
    manifest = sweeps.load("latest")
    assert manifest.status == "done" and manifest.varying == ["memory", "concurrency"]
    assert (manifest.network, manifest.network_scale) == ("lambda-2024", "50")
    expected = [(m, c) for m in (256, 512) for c in (2, 3)]
    assert [(c.params["memory"], c.params["concurrency"]) for c in manifest.cells] == expected
    for cell in manifest.cells:
        assert cell.status == "done" and cell.previous_run_ids == []
        assert cell.environments == "fresh"
        assert set(cell.timings) >= {"deploy", "fire", "wait", "idle", "report"}
        check_complete(cell, multiplier=2)
        network = runs.load(cell.run_id).network  # every cell hosted under the sweep's model
        assert (network["profile"], network["scale"]) == ("lambda-2024", 50)
    assert len({cell.run_id for cell in manifest.cells}) == 4
    # The report across the sweep's runs, next to the manifest: one row per cell, nothing pooled.
    across = json.loads((sweeps.sweep_dir(manifest.sweep_id) / "cells.json").read_text())
    rows = {(row["memory_size"], row["concurrency_limit"]): row for row in across["cells"]}
    assert set(rows) == set(expected)
    for cell in manifest.cells:
        row = rows[(cell.params["memory"], cell.params["concurrency"])]
        assert row["runs"] == [cell.run_id] and row["n_all"] == 2 * cell.params["concurrency"]
        assert row["n"] + row["n_excluded"] == row["n_all"]  # the statistics keep those at target
    assert "fresh execution environments for every cell" in across["title"]


class InterruptedSweep:
    """`fanout sweep` in a subprocess, sent SIGINT on its process group (as a terminal's Ctrl-C
    is) once the cell `at` is waiting for its messages."""

    SCRIPT = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
              "from fanout import cli; sys.exit(cli.main(sys.argv[1:]))")  # fmt: skip

    def __init__(self, argv: list[str], at: int, cells: int):
        env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="200")
        self.process = subprocess.Popen([sys.executable, "-c", self.SCRIPT, *argv], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True)  # fmt: skip
        self.marker, self.output, self.sent = f"cell {at} of {cells}", [], False
        self.watcher = threading.Thread(target=self._watch, daemon=True)
        self.watcher.start()

    def _watch(self):
        in_cell = False
        for line in self.process.stdout:
            self.output.append(line)
            in_cell = in_cell or self.marker in line
            if in_cell and "waiting for" in line and not self.sent:
                os.killpg(self.process.pid, signal.SIGINT)
                self.sent = True

    def exit_code(self) -> int:
        code = self.process.wait(timeout=600)
        self.watcher.join()
        return code


def test_resume_after_ctrl_c_in_the_middle_of_a_cell(stack):
    multiplier = 10
    argv = ["sweep", "--backend", "local", "--stack", stack, "--concurrency", "2 3", "--memory", "256",
            "--object-size", "4MiB", "--multiplier", str(multiplier), "--tag", "resumed", "--network", "none", *WAIT]  # fmt: skip
    stopped = InterruptedSweep(argv, at=1, cells=2)
    assert stopped.exit_code() == 130, "".join(stopped.output)
    before = sweeps.load("latest")
    first, second = before.cells
    assert before.status == "interrupted"
    assert first.status == "done" and second.status == "interrupted" and second.run_id, before
    abandoned = second.run_id
    assert "make sweep RESUME=" in "".join(stopped.output)

    assert sweep(stack, "--resume", "latest", *WAIT) == 0
    after = sweeps.load(before.sweep_id)
    assert after.status == "done" and len(after.resumed) == 1
    # The finished cell was not run again; the interrupted one was, as a new run.
    assert after.cells[0] == first
    rerun = after.cells[1]
    assert rerun.status == "done" and rerun.previous_run_ids == [abandoned] and rerun.run_id != abandoned
    assert "purge" in rerun.timings
    check_complete(after.cells[0], multiplier)
    check_complete(rerun, multiplier)  # the abandoned run's downloads are not in it
    old = runs.load(abandoned)
    assert old.sweep.cell_status == "interrupted"  # kept, and marked


def environments_of(cell: dict) -> dict[str, list[bool]]:
    """env_id -> the cold_start flags of its downloads, in the order they started."""
    downloads = sorted((r for r in records_of(cell.run_id) if r["event"] == "download"), key=lambda r: r["start_ms"])
    found: dict[str, list[bool]] = {}
    for r in downloads:
        found.setdefault(r["env_id"], []).append(r["cold_start"])
    return found


@pytest.mark.parametrize("keep_warm", [False, True], ids=["fresh", "keep-warm"])
def test_strategy_cells_share_a_deployment_with_fresh_or_warm_environments(stack, keep_warm):
    """A STRATEGY list is two fires on one deployment, each downloading with its strategy. By
    default the second cell starts in new environments (each one's first download cold); with
    --keep-warm it reuses the first's."""
    assert sweep(stack, "--concurrency", "2", "--memory", "256", "--object-size", "1MiB", "--strategy",
                 "download_file; ranged connections=2 chunk_size=256KiB",
                 "--multiplier", "3", *(["--keep-warm"] if keep_warm else []), "--network", "none", *WAIT) == 0  # fmt: skip
    first, second = sweeps.load("latest").cells
    assert "deploy" in first.timings and second.timings["deploy"] < 1  # no redeploy between strategies
    for cell in (first, second):
        check_complete(cell, multiplier=3)
    before, after = environments_of(first), environments_of(second)
    assert all(flags[0] and not any(flags[1:]) for flags in before.values())  # fresh at the sweep's start
    if keep_warm:
        assert second.environments.startswith("warm")
        assert set(after) <= set(before) and not any(cold for flags in after.values() for cold in flags)
    else:
        assert second.environments == "fresh"
        assert not set(after) & set(before) and all(flags[0] for flags in after.values())
