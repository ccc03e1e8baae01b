"""A sweep over PIN on the local backend, end to end: an unpinned cell (`none`) beside pinned ones
(`auto`, one address), under a network model whose endpoint answers on three loopback addresses,
one of them at half the rate. Each cell's records must show where its requests went, as the model
and the function's rules say (expectations derived from the model file, not written out): the
pinned address for the pinned cell, seq mod the sorted addresses for auto, and for the unpinned
cell the platform's rotation (each environment on the next address of the table). The report
across the sweep's runs has one row per pin value, and compare tells the sides apart by pin.

Small and quick: a 256 KiB object, three environments, two messages each, one deployment (of the
stack the sweep modules share: tests/e2e/conftest.py).
"""

import collections
import csv
import json
import socket
import tomllib

import pytest

from fanout import cli
from fanout.workloads.download import pins
from fanout.results import run_folders as runs, sweep_folders as sweeps
from fanout.workloads.download import compare

pytestmark = pytest.mark.slow

CONCURRENCY = 3
MULTIPLIER = 2
SLOW = "127.0.0.4"
MODEL = f"""connection_mb_per_s = 20
[addresses]
"127.0.0.2" = 1
"127.0.0.3" = 1
"{SLOW}" = 0.5
"""


@pytest.fixture(scope="module")
def swept(shared_stack, tmp_path_factory):
    """The finished sweep's manifest, and the model's address table in its order."""
    folder = tmp_path_factory.mktemp("pin-sweep")
    model = folder / "three-addresses.toml"
    model.write_text(MODEL)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FANOUT_RESULTS", str(folder / "results"))
        code = cli.main(["sweep", "--backend", "local", "--stack", shared_stack, "--concurrency", str(CONCURRENCY),
                         "--memory", "256", "--object-size", "256KiB", "--strategy", "stream",
                         "--multiplier", str(MULTIPLIER), "--pin", f"{pins.NONE} {pins.AUTO} {SLOW}",
                         "--network", str(model), "--network-scale", "1", "--timeout", "240"])  # fmt: skip
        assert code == 0
        yield sweeps.load("latest"), list(tomllib.loads(MODEL)["addresses"])


def downloads_of(cell: dict) -> list[dict]:
    """The cell's download records, every message of it accounted for as done."""
    record = runs.load(cell.run_id)
    sent = MULTIPLIER * CONCURRENCY
    assert record.sent == record.accounting.done == sent
    assert record.parameters.workload_options["pin"] == cell.params["options"]["pin"]
    lines = (runs.run_dir(cell.run_id) / "records.jsonl").read_text().splitlines()
    found = [r for r in map(json.loads, lines) if r["event"] == "download"]
    assert sorted(r["seq"] for r in found) == list(range(sent))
    assert {r["pin"] for r in found} == {cell.params["options"]["pin"]}  # the message's pin, none included
    for r in found:  # one connection (stream), so the one request's address is the download's
        assert r["request_ips"] == r["endpoint_ip"]
    return found


def cells_by_pin(manifest: dict) -> dict[str, dict]:
    assert manifest.status == "done" and manifest.varying == ["pin"]
    return {cell.params["options"]["pin"]: cell for cell in manifest.cells}


def test_pinned_cells_reach_the_address_their_pin_selects(swept):
    manifest, table = swept
    by_pin = cells_by_pin(manifest)
    for r in downloads_of(by_pin[SLOW]):
        assert (r["pinned_ip"], r["endpoint_ip"], r["pin_addresses"]) == (SLOW, SLOW, SLOW)
    ordered = sorted(table, key=socket.inet_aton)  # auto: the distinct addresses found, numerically
    for r in downloads_of(by_pin[pins.AUTO]):
        expected = ordered[r["seq"] % len(ordered)]
        assert (r["pinned_ip"], r["endpoint_ip"], r["pin_addresses"]) == (expected, expected, " ".join(ordered))


def test_the_unpinned_cell_follows_the_platforms_rotation(swept):
    """Without a pin an environment connects to the first address the platform's resolver gives
    it, and each new environment's list is turned by one more: the environments' addresses are
    consecutive turns of the model's table."""
    manifest, table = swept
    downloads = downloads_of(cells_by_pin(manifest)[pins.NONE])
    assert all(r.get("pinned_ip") is None and r.get("pin_addresses") is None for r in downloads)
    by_env = collections.defaultdict(set)
    for r in downloads:
        by_env[r["env_id"]].add(r["endpoint_ip"])
    assert all(len(addresses) == 1 for addresses in by_env.values())  # an environment keeps its address
    assert len(by_env) > 1  # the messages were queued before hosting: several environments at once
    seen = collections.Counter(address for (address,) in by_env.values())
    turns = [collections.Counter(table[(start + i) % len(table)] for i in range(len(by_env)))
             for start in range(len(table))]  # fmt: skip
    assert seen in turns


def test_the_report_across_runs_has_a_row_per_pin_and_compare_names_the_sides(swept):
    manifest, _ = swept
    folder = sweeps.sweep_dir(manifest.sweep_id)
    summary = json.loads((folder / "cells.json").read_text())
    assert summary["varying"] == ["pin"]
    rows = {row["pin"]: row for row in summary["cells"]}
    assert set(rows) == {pins.NONE, pins.AUTO, SLOW}
    for pin, cell in cells_by_pin(manifest).items():
        assert rows[pin]["runs"] == [cell.run_id] and rows[pin]["n_all"] == MULTIPLIER * CONCURRENCY
    with open(folder / "cells.csv", newline="") as table:
        assert sorted(row["pin"] for row in csv.DictReader(table)) == sorted(rows)
    assert "three-addresses" in summary["network"]  # simulated, and under which model

    by_pin = cells_by_pin(manifest)
    # Downloads of a small object on the local host overlap little: every download is compared.
    result = compare.compare([by_pin[pins.NONE].run_id], [by_pin[SLOW].run_id], at_target=0.01)
    assert result["differ_in"] == ["pin"] and len(result["cells"]) == 1
    assert (result["a"]["label"], result["b"]["label"]) == (f"pin {pins.NONE}", f"pin {SLOW}")
