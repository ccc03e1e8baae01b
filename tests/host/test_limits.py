"""An environment is held to its function's memory as on Lambda: past it the runtime is killed,
the REPORT line says Runtime.OutOfMemory, and the message is retried, never lost."""

import pytest

from fanout.local.host import limits
from fanout.local.host.limits import MemoryLimit

GREEDY = """
import json

def handler(event, context):
    for record in event["Records"]:
        if record["attributes"]["ApproximateReceiveCount"] == "1":
            hoard = bytearray(400 * 1024 * 1024)  # past MEMORY=128: the kernel kills the runtime
            hoard[::4096] = b"x" * len(hoard[::4096])
        print(json.dumps({"done": json.loads(record["body"])["n"]}))
"""


def _cgroups_or_skip() -> None:
    probe = MemoryLimit("fanout-limit-probe", 128)
    probe.remove()
    if probe.enforcement != "enforced by cgroup":
        pytest.skip(f"this kernel gives no memory cgroup: {probe.enforcement}")


def test_past_its_memory_the_invocation_ends_out_of_memory_and_is_retried(deploy):
    _cgroups_or_skip()
    _greedy_function_is_retried(deploy, "Max Memory Used: 128 MB")


def test_without_a_cgroup_a_watchdog_ends_it_the_same_way(deploy, monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "MEMORY_ROOT", tmp_path / "no-cgroups")
    _greedy_function_is_retried(deploy, "Max Memory Used: ")


def _greedy_function_is_retried(deploy, max_memory: str) -> None:
    # 128 MB has 0.07 vCPU: the runtime needs more than a second to reach its limit.
    fn = deploy(GREEDY, memory=128, timeout=5, visibility=6, max_receive=3)
    fn.send([{"n": 1}])
    summary = fn.host()
    assert summary.errors == 1
    messages = [m for events in fn.streams().values() for _, m in events]
    reports = [m for m in messages if m.startswith("REPORT")]
    assert any("Error Type: Runtime.OutOfMemory" in r and max_memory in r for r in reports)
    assert any("signal: killed" in m for m in messages)
    assert any('"done": 1' in m for m in messages)


FILLER = """
import errno, json, os

def handler(event, context):
    with open("/tmp/fill", "wb") as f:
        os.posix_fallocate(f.fileno(), 0, 100 * 1024 * 1024)  # fits in 512 MB
        try:
            os.posix_fallocate(f.fileno(), 0, 600 * 1024 * 1024)
            outcome = "written"
        except OSError as exc:
            outcome = errno.errorcode[exc.errno]
    print(json.dumps({"past_ephemeral_storage": outcome}))
"""


def test_tmp_is_a_file_system_of_the_ephemeral_storage_size(deploy, tmp_path):
    fn = deploy(FILLER)  # EphemeralStorage defaults to 512 MB
    fn.send([{"n": 1}])
    warnings: list[str] = []
    fn.host(warn=warnings.append)
    unenforced = [w for w in warnings if w.startswith("Lambda's /tmp")]
    if unenforced:
        pytest.skip(f"this machine cannot give /tmp its size: {unenforced[0]}")
    messages = [m for events in fn.streams().values() for _, m in events]
    assert any('"past_ephemeral_storage": "ENOSPC"' in m for m in messages), messages


def test_the_cpu_quota_is_the_memory_share_divided_by_the_scale_within_the_kernels_bounds():
    assert limits.cpu_quota(1769, 1.0) == (100_000, 100_000)  # one vCPU
    assert limits.cpu_quota(3538, 4.0) == (50_000, 100_000)  # two vCPUs, rates a quarter
    assert limits.cpu_quota(128, 50.0) == (1447, 1_000_000)  # under 1 ms per 100 ms: a 1 s period
    assert limits.cpu_quota(128, 100.0) is None  # 0.7 ms a second: CFS cannot


def test_an_environment_joins_its_cpu_cgroup(tmp_path):
    cap = limits.CpuLimit("fanout-cpu-probe", 884, 1.0)
    if cap.path is None:
        pytest.skip(f"this kernel gives no cpu cgroup: {cap.enforcement}")
    try:
        assert (cap.path / "cpu.cfs_quota_us").read_text().strip() == "49972"
    finally:
        cap.remove()
    assert not (limits.CPU_ROOT / "fanout-cpu-probe").exists()


def test_the_cold_start_runs_at_the_unscaled_share_and_invocations_at_the_scaled_one():
    cap = limits.CpuLimit("fanout-cpu-probe-scaled", 1769, 50.0)
    if cap.path is None:
        pytest.skip(f"this kernel gives no cpu cgroup: {cap.enforcement}")
    try:
        quota = lambda: [(cap.path / f"cpu.cfs_{name}_us").read_text().strip() for name in ("quota", "period")]
        assert quota() == ["100000", "100000"]  # one vCPU while it initialises
        cap.invoking()
        assert quota() == ["2000", "100000"]  # a fiftieth: 2 ms per 100 ms
    finally:
        cap.remove()


def test_a_limit_the_machine_cannot_enforce_is_said_once(deploy, monkeypatch, tmp_path):
    """Said once as a warning, and kept in the host's summary with how the others were held (the
    run's report states them)."""
    monkeypatch.setattr(limits, "CPU_ROOT", tmp_path / "no-cgroups")
    fn = deploy("def handler(event, context):\n    pass\n", memory=1769)
    fn.send([{"n": n} for n in range(3)])
    warnings: list[str] = []
    summary = fn.host(warn=warnings.append)
    unenforced = "not enforced: no cpu cgroup (No such file or directory)"
    assert [w for w in warnings if "CPU" in w] == [f"Lambda's CPU share: {unenforced}"]
    assert list(summary.limits) == ["memory (1769 MB)", "CPU share", "/tmp (512 MB)"]
    assert summary.limits["CPU share"] == unenforced
    assert summary.limits["memory (1769 MB)"].startswith("enforced by ")
