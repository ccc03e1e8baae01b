"""The transfer workload's driver side: bad input refused in one line before anything is sent, the
checks against the stack, the cost of every request, the report's statistics."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from fanout import cli
from fanout.cloud import costs
from fanout.common.errors import UsageError
from fanout.workloads.transfer import costs as transfer_costs, driver as transfer, report as transfer_report

MiB, GiB = 2**20, 2**30


@pytest.mark.parametrize(("argv", "named"), [
    (["--operation", "copy", "--method", "copy-object", "--size", "6GiB"], "'6GiB'"),
    (["--part-size", "4MiB"], "'4MiB'"),
    (["--threads", "300"], "'300'"),
    (["--threads", "0"], "'0'"),
    (["--operation", "upload", "--files", "10"], "FILES"),
    (["--operation", "small-files", "--direction", "sideways"], "'sideways'"),
])  # fmt: skip
def test_bad_input_is_one_line_exit_2_and_nothing_sent(argv, named, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    assert cli.main(["fire", "--backend", "local", "--stack", "nostack", "--workload", "transfer", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err
    assert not (tmp_path / "results").exists() and not (tmp_path / "home").exists()


def test_another_workloads_option_is_refused_on_a_transfer_run(capsys):
    assert cli.main(["fire", "--backend", "local", "--stack", "x", "--workload", "transfer", "--sizes", "1"]) == 2
    assert "--sizes is an option of the latency workload" in capsys.readouterr().err


def test_the_stack_checks_memory_tmp_crt_and_fan():
    big = transfer.parse({"operation": "upload", "size": "1GiB", "threads": "8", "part_size": "64MiB"})
    needed = math.ceil(9 * 64 * MiB / MiB) + transfer.MEMORY_HEADROOM_MIB  # 8 parts in flight and one being read
    with pytest.raises(UsageError, match=f"MEMORY={needed}"):
        transfer.check_against(big, "aws", needed - 1, 512)
    transfer.check_against(big, "aws", needed, 512)
    through = transfer.parse({"operation": "copy", "size": "1GiB", "method": "through-function"})
    with pytest.raises(UsageError, match="/tmp"):
        transfer.check_against(through, "aws", 10240, 522)
    crt = transfer.parse({"operation": "upload", "client": "crt"})
    with pytest.raises(UsageError, match="'crt' with --backend local"):
        transfer.check_against(crt, "local", 10240, 512)
    fan = transfer.parse({"operation": "upload", "size": "64MiB", "fan": "4"})
    with pytest.raises(UsageError, match="multiple of 4"):
        transfer.check_fan(fan, 10)
    transfer.check_fan(fan, 12)


def test_the_cost_counts_every_request_and_the_upload_egress():
    p = transfer.parse({"operation": "upload", "size": "100MiB", "part_size": "10MiB", "threads": "4"})
    est = transfer_costs.estimate(20, costs.Deployment(1024, 10), p)
    assert est.s3_puts == pytest.approx(20 * (10 + 2) * 0.005 / 1000)  # create, 10 parts, complete
    assert est.s3_gets == 0 and est.s3_data == 0  # data into S3 is free
    assert any("upload egress 2.097 GB" in line for line in est.notes)
    copy = transfer_costs.message_requests(transfer.parse({"operation": "copy", "size": "100MiB", "part_size": "10MiB",
                                                           "method": "part-copy"}))  # fmt: skip
    assert (copy.puts, copy.gets) == (12 + 12, 1)  # its source's upload, then the part copy; HeadObject
    small = transfer_costs.message_requests(transfer.parse({"operation": "small-files", "files": "50", "direction": "get"}))
    assert (small.puts, small.gets) == (50, 50)  # a get run writes its objects first


def test_cost_per_gb_prices_each_kind():
    per_gb = transfer_costs.cost_per_gb({"UploadPart": 100, "GetObject": 10, "DeleteObjects": 1}, 10**9)
    assert per_gb == pytest.approx(100 * 0.005 / 1000 + 10 * 0.0004 / 1000)


def _record(threads, seconds, size=64 * MiB):
    return {"event": "transfer", "operation": "upload", "method": "-", "client": "classic", "direction": "-",
            "size": size, "part_size": 8 * MiB, "threshold": 8 * MiB, "threads": threads, "files": 0, "prefixes": 0,
            "fan": 1, "client_per_object": 0, "memory_size": 1024, "concurrency_limit": 2, "experiment_tag": "t",
            "seconds": seconds, "bytes": size, "mb_per_s": size / seconds / 1e6, "requests": {"UploadPart": 8},
            "retries": 0, "slowdowns": 0}  # fmt: skip


def test_the_speedup_is_the_ratio_of_medians_against_one_thread():
    rng = np.random.default_rng(3)
    one, four = rng.normal(2.0, 0.1, 30), rng.normal(0.5, 0.05, 30)
    rows = transfer_report.cell_rows([_record(1, s) for s in one] + [_record(4, s) for s in four])
    by_threads = {r["threads"]: r for r in rows}
    assert by_threads[1]["speedup"] is None
    assert by_threads[4]["speedup"] == pytest.approx(np.median(one) / np.median(four))
    low, high = by_threads[4]["speedup_ci"]
    assert low < by_threads[4]["speedup"] < high
    table = transfer_report.operation_table(rows, "upload")
    assert table[0][0] == "threads" and [line[0] for line in table[1:]] == ["1", "4"]


def test_a_sweep_takes_lists_and_checks_each_combination():
    args = SimpleNamespace(**{name: None for name in transfer.OPTIONS})
    args.operation, args.threads, args.part_size = "upload", "1 2 4", "8MiB 16MiB"
    combos = transfer.TransferDriver().sweep_options(args, (1024,))
    assert sorted((c["threads"], c["part_size"]) for c in combos) == sorted(
        (t, p * MiB) for t in (1, 2, 4) for p in (8, 16))
    args.threads = "1 1"
    with pytest.raises(UsageError, match="given twice"):
        transfer.TransferDriver().sweep_options(args, (1024,))
