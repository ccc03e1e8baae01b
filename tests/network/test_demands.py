"""What a message of each workload asks of the network, and how the automatic scale sizes a run by
it: both directions, requests that move no bytes, the largest need of several kinds of message
(a sweep deployment's cells: tests/test_sweep.py). The figures are worked by hand from the model
and the parameters (no machine is measured)."""

import math

import pytest

from fanout.workloads import registry as workloads
from fanout.workloads.download import strategies
from fanout.local.network import capacity, model, options
from fanout.results import run_record
from fanout.stages import wait
from fanout.workloads.latency import driver as latency
from fanout.workloads.seqread import driver as seqread
from fanout.workloads.transfer import driver as transfer

MiB, KB = 2**20, 1000
# Downloads: 40 MB/s at peak from a 100 MB bucket, 10 sustained, 15 a connection. Uploads: 8 MB/s
# an environment, 3 a connection, no bucket. Every request waits 10 ms for its first byte.
HAND = {"burst": 100e6, "peak_mb_per_s": 40, "sustained_mb_per_s": 10, "connection_mb_per_s": 15,
        "upload_sustained_mb_per_s": 8, "upload_connection_mb_per_s": 3, "first_byte_ms": 10}  # fmt: skip
WAIT = 0.010


def hand(values: dict = HAND) -> model.NetworkModel:
    return model.NetworkModel("hand", 1.0, model.parameters(values, "hand"))


def draw(demand: capacity.Demand, environments: int = 4) -> capacity.Draw:
    return capacity.Draw(environments, 1024, demand)


def recorded(workload: str, options: dict | None = None, strategy: str = "download_file") -> run_record.RunRecord:
    """A run as fire records it: the stack's figures and the workload's options (a download's: `strategy`)."""
    return run_record.RunRecord.from_json({
        "backend": "local", "sent": 8,
        "stack": {"memory": 1024, "concurrency": 4, "object_size": 64 * MiB, "architecture": "x86_64"},
        "parameters": {"workload": workload, "workload_options": options or {"strategy": strategy}}})  # fmt: skip


def test_an_upload_is_sized_by_the_upload_limits():
    up = capacity.Demand("two parts of 6 MB", 2, up=capacity.Flow(12_000_000, 4))
    # Each environment: min(8, 2 connections x 3) = 6 MB/s; four environments 24.
    assert capacity.byte_rate(hand(), draw(up)) == pytest.approx(24)
    # Two requests a connection, one after the other: two waits and 6 MB at 3 MB/s each.
    assert capacity.message_seconds(hand(), draw(up)) == pytest.approx(2 * WAIT + 2.0)
    assert capacity.request_rate(hand(), draw(up)) == pytest.approx(4 * (4 + capacity.HOST_REQUESTS) / 2.02)


def test_small_objects_draw_no_faster_than_their_waits_let_them():
    """A transfer of 1 KB objects once drew the upload peak in this sum, and was scaled by 4,900."""
    small = capacity.Demand("50 objects of 1 KB", 10, up=capacity.Flow(50_000, 50))
    # Five requests a connection, each waiting 10 ms: 50 KB in 50 ms is 1 MB/s, below the peak
    # min(8, 10 x 3) = 8 an environment.
    assert capacity.byte_rate(hand(), draw(small)) == pytest.approx(4 * 1)
    big = capacity.Demand("one 60 MB object", 10, up=capacity.Flow(60_000_000, 10))
    assert capacity.byte_rate(hand(), draw(big)) == pytest.approx(4 * 8)  # 60 MB in 10 ms of waits: the peak binds


def test_uploads_weigh_against_what_the_machine_takes_in():
    """The emulator spends about three times a download's CPU on each byte it takes in."""
    up = capacity.Demand("two parts of 6 MB", 2, up=capacity.Flow(12_000_000, 4))
    requests = 4 * (4 + capacity.HOST_REQUESTS) / 2.02
    assert capacity.load(hand(), draw(up), capacity.Capacity(100, 10, upload_mb_per_s=30)) == pytest.approx(
        24 / 30 + requests / 10)
    assert capacity.load(hand(), draw(up), capacity.Capacity(100, 10)) == pytest.approx(24 / 100 + requests / 10)


def test_requests_that_move_no_bytes_take_their_waits_and_draw_nothing():
    copy = capacity.Demand("a copy", 2, down=capacity.Flow(0, 3), up=capacity.Flow(12_000_000, 4))
    assert capacity.byte_rate(hand(), draw(copy)) == pytest.approx(24)
    assert capacity.message_seconds(hand(), draw(copy)) == pytest.approx(2 * WAIT + 2.0 + math.ceil(3 / 2) * WAIT)


def test_both_directions_add():
    both = capacity.Demand("read then write", 2, down=capacity.Flow(30_000_000, 1), up=capacity.Flow(12_000_000, 4))
    # Downloads: min(peak 40, 2 x 15) = 30 MB/s an environment, inside the bucket.
    assert capacity.byte_rate(hand(), draw(both)) == pytest.approx(4 * 30 + 24)
    assert capacity.message_seconds(hand(), draw(both)) == pytest.approx(WAIT + 1.0 + 2 * WAIT + 2.0)


def test_a_direction_the_model_leaves_unlimited_is_not_sized():
    downloads_only = {k: v for k, v in HAND.items() if not k.startswith("upload")}
    up = capacity.Demand("an upload", 2, up=capacity.Flow(12_000_000, 4))
    assert capacity.byte_rate(hand(downloads_only), draw(up)) is None
    assert capacity.request_rate(hand(downloads_only), draw(up)) is None  # its time is not predicted
    both = capacity.Demand("both", 2, down=capacity.Flow(30_000_000, 1), up=capacity.Flow(12_000_000, 4))
    assert capacity.byte_rate(hand(downloads_only), draw(both)) == pytest.approx(4 * 30)


def test_a_transfer_upload_asks_its_parts_on_its_threads():
    fields = transfer.parse({"operation": "upload", "size": "64MiB", "threads": "10", "part_size": "8MiB"}).fields()
    demand = wait.demand(recorded("transfer", fields))
    # 8 parts on min(10, 8) connections, with the create and complete requests.
    assert demand == capacity.Demand(demand.what, 8, up=capacity.Flow(64 * MiB, 8 + 2))
    assert "upload" in demand.what


def test_a_transfer_of_small_files_writes_then_reads_them():
    fields = transfer.parse({"operation": "small-files", "size": "1KB", "threads": "50", "files": "20",
                             "direction": "get"}).fields()  # fmt: skip
    demand = wait.demand(recorded("transfer", fields))
    assert (demand.connections, demand.up, demand.down) == (20, capacity.Flow(20 * KB, 20), capacity.Flow(20 * KB, 20))


def test_a_part_copy_uploads_its_source_and_moves_no_bytes_through_the_function():
    fields = transfer.parse({"operation": "copy", "size": "64MiB", "threads": "4", "method": "part-copy"}).fields()
    demand = wait.demand(recorded("transfer", fields))
    # The source in 8 parts (create, parts, complete), then 8 UploadPartCopy with their own
    # create and complete; the HeadObject of the source reads nothing.
    assert (demand.connections, demand.up, demand.down) == (4, capacity.Flow(64 * MiB, 10 + 8 + 2), capacity.Flow(0, 1))


def test_seqread_reads_its_jobs_files_in_blocks_with_their_depth():
    fields = seqread.parse({"jobs": "4", "depth": "2", "file_size": "64MiB", "block": "8MiB"}).fields()
    demand = wait.demand(recorded("seqread", fields))
    assert (demand.connections, demand.down, demand.up) == (8, capacity.Flow(4 * 64 * MiB, 4 * 8), capacity.Flow())


def test_latency_puts_gets_and_deletes_one_at_a_time():
    fields = latency.parse("1KB 1MB", "3", None).fields()
    demand = wait.demand(recorded("latency", fields))
    moved = 3 * (KB + 10**6)
    assert (demand.connections, demand.down, demand.up) == (1, capacity.Flow(moved, 6), capacity.Flow(moved, 12))


def test_a_download_asks_its_strategys_head_and_gets():
    demand = wait.demand(recorded("download", strategy="ranged connections=4 chunk_size=8MiB"))
    assert (demand.connections, demand.down) == (4, capacity.Flow(64 * MiB, 1 + 8))


class _Stack:
    """What the automatic scale reads of a deployed stack (what the machine serves is given)."""

    concurrency, memory, bucket, object_key, object_size = 4, 1024, "b", "k", 30_000_000
    workload_outputs = {"default_strategy": "stream"}


MEASURED = capacity.Capacity(mb_per_s=100, requests_per_s=10)  # what the machine served, given: it is not tested here
LIGHT = strategies.strategy_demand(strategies.parse("stream"), 30_000_000)
HEAVY = capacity.Demand("many small uploads", 8, up=capacity.Flow(8 * KB, 8))


def test_the_automatic_scale_takes_the_largest_need_and_names_it():
    scales = {d: capacity.scale_for(hand(), draw(d), MEASURED) for d in (LIGHT, HEAVY)}
    assert scales[HEAVY] > scales[LIGHT]
    said = []
    picked = options.auto_scaled(hand(), _Stack(), [LIGHT, HEAVY], MEASURED, said.append)
    assert picked.scale == scales[HEAVY]
    line, cpu = said  # at that scale a 1024 MB environment's share is past what the kernel caps
    assert f"scale {scales[HEAVY]:g}" in line and "many small uploads" in line and "largest need of 2" in line
    assert cpu.startswith("CPU share not capped: ")
    # The demo's run: a download of the stack's object with its default strategy, as its driver says;
    # a run nothing is said of (`fanout host`): one read of the object.
    assert workloads.get("download").default_demand(_Stack()) == LIGHT
    assert options.stack_demand(_Stack()) == capacity.Demand("a read of 28.61 MiB", 1, capacity.Flow(30_000_000, 1))


def test_demands_are_asked_only_when_the_automatic_scale_needs_them():
    def unasked():
        raise AssertionError("asked")

    assert not options.resolve("none", "auto", None, demands=unasked).shaped
    assert options.resolve("lambda-2024", "3", None, demands=unasked).scale == 3
