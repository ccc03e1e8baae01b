"""An environment is held to its function's memory as on Lambda: past it the runtime is killed,
the REPORT line says Runtime.OutOfMemory, and the message is retried, never lost."""

import os
from pathlib import Path

import pytest

from fanout.local.host import limits
from fanout.local.host.limits import CpuLimit, MemoryLimit

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
    if not probe.enforcement.startswith("enforced by cgroup"):
        pytest.skip(f"this kernel gives no memory cgroup: {probe.enforcement}")


def test_past_its_memory_the_invocation_ends_out_of_memory_and_is_retried(deploy):
    _cgroups_or_skip()
    _greedy_function_is_retried(deploy, "Max Memory Used: 128 MB")


def test_without_a_cgroup_a_watchdog_ends_it_the_same_way(deploy, monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "MEMORY_ROOT", tmp_path / "no-cgroups")
    monkeypatch.setattr(limits, "UNIFIED_ROOTS", ())
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
    monkeypatch.setattr(limits, "UNIFIED_ROOTS", ())
    fn = deploy("def handler(event, context):\n    pass\n", memory=1769)
    fn.send([{"n": n} for n in range(3)])
    warnings: list[str] = []
    summary = fn.host(warn=warnings.append)
    unenforced = f"not enforced: no cpu cgroup (no cgroup v1 cpu controller at {tmp_path / 'no-cgroups'}, no cgroup v2 hierarchy)"
    assert [w for w in warnings if "CPU" in w] == [f"Lambda's CPU share: {unenforced}"]
    assert list(summary.limits) == ["memory (1769 MB)", "CPU share", "/tmp (512 MB)"]
    assert summary.limits["CPU share"] == unenforced
    assert summary.limits["memory (1769 MB)"].startswith("enforced by ")


# cgroup v2, in a tree of the files the kernel would have: the hierarchy's root, the host's cgroup
# and an environment's leaf (the kernel makes a cgroup's files as it is made; here they are there).
V2_ROOT_FILES = {"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": "cpu",
                 "cgroup.procs": "1"}
V2_LEAF_FILES = {"cgroup.procs": "", "memory.max": "max", "memory.swap.max": "max", "memory.current": "0",
                 "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0",
                 "memory.peak": "0", "cpu.max": "max 100000"}


def _files(directory: Path, files: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (directory / name).write_text(text + "\n")
    return directory


@pytest.fixture
def cgroup2(monkeypatch, tmp_path) -> Path:
    """A cgroup v2 hierarchy only (no v1 mount), holding the leaf of the environment "env"."""
    root = _files(tmp_path / "cgroup2", V2_ROOT_FILES)
    _files(root / f"fanout-host-{os.getpid()}", {"cgroup.controllers": "cpu memory", "cgroup.subtree_control": ""})
    _files(root / f"fanout-host-{os.getpid()}" / "env", V2_LEAF_FILES)
    monkeypatch.setattr(limits, "MEMORY_ROOT", tmp_path / "no-v1" / "memory")
    monkeypatch.setattr(limits, "CPU_ROOT", tmp_path / "no-v1" / "cpu")
    monkeypatch.setattr(limits, "UNIFIED_ROOTS", (tmp_path / "absent", root))
    return root


def test_on_cgroup_v2_an_environment_is_a_leaf_under_the_hosts_cgroup_with_memory_and_cpu_enabled(cgroup2):
    memory = MemoryLimit("env", 128)
    leaf = cgroup2 / f"fanout-host-{os.getpid()}" / "env"
    assert (cgroup2 / "cgroup.subtree_control").read_text() == "+memory"  # cpu was enabled already
    assert (leaf.parent / "cgroup.subtree_control").read_text() == "+memory +cpu"
    cpu = CpuLimit("env", 1769, 50.0)
    assert memory.path == cpu.path == leaf  # no internal processes: both limits in the one leaf
    assert (memory.enforcement, cpu.enforcement) == (
        "enforced by cgroup v2", "0.020 vCPU (1.000 during the cold start), enforced by cgroup v2")
    assert (leaf / "memory.max").read_text() == str(128 * 1024 * 1024)
    assert (leaf / "memory.swap.max").read_text() == "0"
    assert (leaf / "cpu.max").read_text() == "100000 100000"  # one vCPU for the cold start
    cpu.invoking()
    assert (leaf / "cpu.max").read_text() == "2000 100000"  # a fiftieth


def test_on_cgroup_v2_the_environment_joins_its_one_leaf_once(cgroup2):
    memory, cpu = MemoryLimit("env", 128), CpuLimit("env", 1769, 1.0)
    assert limits.joined(memory, cpu) == [str(memory.path)]
    limits.join_path(limits.joined(memory, cpu)[0])
    assert (memory.path / "cgroup.procs").read_text() == str(os.getpid())


def test_on_cgroup_v2_the_peak_and_the_kill_are_read_from_memory_peak_and_memory_events(cgroup2):
    memory = MemoryLimit("env", 128)
    assert not memory.watching  # the kernel keeps the peak: nothing to sample
    assert not memory.exceeded()
    (memory.path / "memory.peak").write_text(f"{130 * 1024 * 1024}\n")
    (memory.path / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\noom_group_kill 0\n")
    assert memory.exceeded()
    assert memory.peak_mb() == 130


def test_on_cgroup_v2_without_memory_peak_the_highest_usage_sampled_is_the_peak(cgroup2):
    (cgroup2 / f"fanout-host-{os.getpid()}" / "env" / "memory.peak").unlink()  # a kernel before 5.19
    memory = MemoryLimit("env", 128)
    assert memory.watching  # the host samples it
    for usage_mb in (20, 90, 40):
        (memory.path / "memory.current").write_text(f"{usage_mb * 1024 * 1024}\n")
        assert not memory.over(os.getpid())  # the kernel holds the limit, the sample only measures
    assert memory.peak_mb() == 90


def test_without_a_usable_cgroup_the_reason_names_what_is_missing(cgroup2, monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "UNIFIED_ROOTS", (tmp_path / "absent",))
    no_v1 = f"no cgroup v1 memory controller at {tmp_path / 'no-v1' / 'memory'}"
    assert MemoryLimit("env", 128).enforcement == f"enforced by watchdog (no memory cgroup: {no_v1}, no cgroup v2 hierarchy)"
    (cgroup2 / "cgroup.controllers").write_text("cpu io pids\n")
    monkeypatch.setattr(limits, "UNIFIED_ROOTS", (cgroup2,))
    assert MemoryLimit("env", 128).enforcement == (f"enforced by watchdog (no memory cgroup: {no_v1}, and the cgroup "
                                                   f"v2 hierarchy at {cgroup2} has no memory controller)")


def test_a_cgroup_v2_that_cannot_be_set_up_says_which_file_refused(cgroup2):
    """As the kernel refuses to enable a controller for the children of a cgroup holding
    processes (a container's own cgroup): here the control file cannot be written."""
    control = cgroup2 / "cgroup.subtree_control"
    control.unlink()
    control.mkdir()
    cpu = CpuLimit("env", 1769, 1.0)
    assert cpu.path is None
    assert cpu.enforcement == f"not enforced: no cpu cgroup (Is a directory: {control})"


def test_this_hybrid_machine_says_why_its_cgroup_v2_is_not_used(monkeypatch, tmp_path):
    unified = limits.UNIFIED_ROOTS[1]
    controllers = (unified / "cgroup.controllers").read_text().split() if (unified / "cgroup.controllers").exists() else None
    if controllers is None or "memory" in controllers or (limits.UNIFIED_ROOTS[0] / "cgroup.controllers").exists():
        pytest.skip("not a hybrid machine whose cgroup v2 mount has no controllers")
    assert limits.hierarchy("memory", tmp_path) == (f"no cgroup v1 memory controller at {tmp_path}, and the cgroup v2 "
                                                    f"hierarchy at {unified} has no memory controller")
    assert isinstance(limits.hierarchy("memory", limits.MEMORY_ROOT), limits.CgroupV1)
