"""The transfer workload's driver side: bad input refused in one line before anything is sent, the
checks against the stack, the cost of every request, the report's statistics."""

import math
import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from fanout import cli
from fanout.cloud import costs
from fanout.common import function_modules
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
    # s3transfer's 10 in-memory parts (at least 10, whatever THREADS) and the one its submitter has read
    needed = math.ceil(11 * 64 * MiB / MiB) + transfer.MEMORY_HEADROOM_MIB
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


@pytest.mark.parametrize(("given", "memory", "named"), [
    # 100 clients of their own at once: 1,337 MB measured in the function, refused at 1024 MB
    ({"operation": "small-files", "size": "1KB", "files": "500", "threads": "100", "client_per_object": "1"}, 1024,
     "invalid THREADS 100 with CLIENT_PER_OBJECT=1: 100 clients"),
    # three 2 GiB parts in memory at once (one 1 GiB): 5 GiB and more, not the 4.2 GB of two parts
    ({"operation": "upload", "size": "5GiB", "part_size": "2GiB", "threads": "1"}, 4300,
     "invalid PART_SIZE 2 GiB with SIZE 5 GiB and THREADS 1: 3 parts in memory"),
])  # fmt: skip
def test_memory_counts_clients_and_in_memory_parts(given, memory, named):
    p = transfer.parse(given)
    with pytest.raises(UsageError, match=named) as refused:
        transfer.check_against(p, "aws", memory, 512)
    assert "\n" not in str(refused.value) and f"the stack has {memory} MB" in str(refused.value)


# Run in a process of its own, so that its peak resident memory (VmHWM: ru_maxrss would start at
# the parent's, which exec keeps) is the measurement's:
# an upload through the function's own code to an S3 that answers at once, but the first part
# only after a second (a slow network: the transfer manager reads parts ahead of the one thread
# sending them, as far as it may).
STATUS = """
def status(name):
    return next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith(name + ":"))
"""
UPLOAD_PEAK = STATUS + """
import sys, time
sys.path[:0] = sys.argv[1].split(":")
import boto3
from botocore.awsrequest import AWSResponse
import transfer, transfer_ops

class Answer:
    def __init__(self, body): self.body = body
    def stream(self, **_): yield self.body

def answer(request, **_):
    if "partNumber=1&" in request.url + "&":
        time.sleep(1)
    created = b"<InitiateMultipartUploadResult><UploadId>u</UploadId></InitiateMultipartUploadResult>"
    return AWSResponse(request.url, 200, {"ETag": '"e"'}, Answer(created if request.url.endswith("?uploads") else b""))

s3 = boto3.client("s3", region_name="us-east-1", endpoint_url="http://127.0.0.1:9", aws_access_key_id="a",
                  aws_secret_access_key="b")
s3.meta.events.register("before-send.s3", answer)
p = transfer.parse({"operation": "upload", "size": sys.argv[2], "part_size": sys.argv[3], "threads": "1"})
before = status("VmHWM")
s3.upload_fileobj(transfer_ops.PatternStream(p.size), "b", "k", Config=transfer_ops.transfer_config(p))
print(status("VmHWM") - before)
"""
CLIENTS_RSS = STATUS + """
import sys, boto3
from concurrent.futures import ThreadPoolExecutor
boto3.client("s3", region_name="us-east-1")
before, n = status("VmRSS"), int(sys.argv[2])
with ThreadPoolExecutor(n) as pool:
    clients = list(pool.map(lambda _: boto3.session.Session().client("s3", region_name="us-east-1"), range(n)))
print((status("VmRSS") - before) // n)
"""
LINUX = pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads VmRSS and VmHWM from /proc")


def measured(script: str, *argv: str) -> int:
    folders = ":".join(str(folder) for folder in function_modules.folders())
    done = subprocess.run([sys.executable, "-c", script, folders, *argv], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, check=True)  # fmt: skip
    return int(done.stdout)


@LINUX
def test_an_uploads_peak_memory_is_what_the_check_counts():
    """16 parts of 32 MiB, one thread: the transfer manager holds 11 (its 10 in-memory chunks and
    the one read ahead), each once; counted, within a few MiB of the interpreter's own."""
    p = transfer.parse({"operation": "upload", "size": "512MiB", "part_size": "32MiB", "threads": "1"})
    held, peak = transfer.held_in_memory(p)[0], measured(UPLOAD_PEAK, "512MiB", "32MiB")
    assert held == 11 * 32 * MiB
    assert 0.9 * held < peak < held + 16 * MiB, (peak / MiB, held / MiB)


@LINUX
def test_a_client_of_its_own_costs_no_more_than_the_check_counts():
    each = measured(CLIENTS_RSS, "20")
    assert 5 * MiB < each <= transfer.CLIENT_MIB * MiB, each / MiB


def test_a_message_past_the_function_timeout_is_refused_at_fire(monkeypatch, tmp_path):
    """5 GiB at the assumed 75 MiB/s is about 70 s: refused under a 60 s timeout, fired under 300 s."""
    p = transfer.parse({"operation": "upload", "size": "5GiB", "part_size": "64MiB"})
    stack = SimpleNamespace(backend="aws", memory=2048, object_size=2**20, timeout=60, concurrency=2,
                            architecture="x86_64")  # fmt: skip
    with pytest.raises(UsageError, match="over the function's timeout of 60 s") as refused:
        transfer.TransferDriver().plan(stack, p, 2)
    assert "\n" not in str(refused.value) and "FUNCTION_TIMEOUT" in str(refused.value)
    transfer.TransferDriver().plan(SimpleNamespace(**{**vars(stack), "timeout": 300}), p, 2)
    given = {"function_timeout": "60", "operation": "upload", "size": "1GiB 5GiB", "part_size": "64MiB"}
    with pytest.raises(UsageError, match="timeout of 60 s"):
        transfer.TransferDriver().sweep_options(given, (2048,))


def test_fan_counts_every_members_create_and_the_losers_abort_and_get():
    """FAN=4 of 8 parts: each member sends 2 parts, creates an upload, offers its id (a PUT) and
    lists the parts; the group completes once; three of four lose the id, abort and read it."""
    p = transfer.parse({"operation": "upload", "size": "64MiB", "part_size": "8MiB", "fan": "4"})
    r = transfer_costs.message_requests(p)
    assert (r.puts, r.gets, r.free) == (2 + 1 + 1 + 1 + 1 / 4, 3 / 4, 3 / 4)
    cell = SimpleNamespace(options=p.fields())
    demand = transfer.TransferDriver().demand(cell)
    assert (demand.up.requests, demand.down.requests) == (math.ceil(5.25 + 0.75), 1)


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
    given = {"operation": "upload", "threads": "1 2 4", "part_size": "8MiB 16MiB"}
    combos = transfer.TransferDriver().sweep_options(given, (1024,))
    assert sorted((c["threads"], c["part_size"]) for c in combos) == sorted(
        (t, p * MiB) for t in (1, 2, 4) for p in (8, 16))
    given["threads"] = "1 1"
    with pytest.raises(UsageError, match="given twice"):
        transfer.TransferDriver().sweep_options(given, (1024,))
