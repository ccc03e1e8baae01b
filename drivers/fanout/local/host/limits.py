"""Lambda's limits for one execution environment: its memory, the size of its /tmp and its CPU
share.

Memory: a cgroup its process joins as it starts.

Lambda ends an invocation whose environment uses more than its configured memory: the runtime
is killed and the REPORT line gives Max Memory Used. Here a cgroup holds the environment's
process and everything it starts, so nothing it allocates is charged elsewhere; the kernel kills
it past the limit and the cgroup's own peak is what the REPORT line says. Where no cgroup can be
made a watchdog samples the process's resident memory instead (the host calls over() every
WATCH_INTERVAL and kills it past the limit), which misses what its children allocate and peaks
shorter than an interval; `MemoryLimit.enforcement` says which, one line for the report.

/tmp: Lambda's is a file system of the function's ephemeral storage size, which does not count
against its memory, so here it is an ext4 image of that size, sparse, mounted through a loop
device (a tmpfs would be charged to the memory cgroup) in the environment's own mount namespace;
a write past it fails with ENOSPC.

CPU: memory / 1,769 MB of a vCPU divided by the network scale, as a CFS quota in a cgroup of the
cpu controller that the process joins the same way.

Cgroups: a controller's v1 hierarchy where it is mounted (CgroupV1), else the unified v2
hierarchy where it offers the controller (CgroupV2); hierarchy() says which, or why neither.
"""

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from fanout.common import vcpu

MEMORY_ROOT = Path("/sys/fs/cgroup/memory")  # cgroup v1 mounts, one per controller
CPU_ROOT = Path("/sys/fs/cgroup/cpu")
UNIFIED_ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))  # cgroup v2: alone, or beside v1
CONTROLLERS = ("memory", "cpu")
MIN_QUOTA_US, MAX_PERIOD_US, PERIOD_US = 1000, 1_000_000, 100_000  # the kernel's CFS bounds
MIB = 1024 * 1024
WATCH_INTERVAL = 0.05  # seconds between the watchdog's samples
NOT_ENFORCED = "not enforced"  # how an `enforcement` that does not hold begins


class CgroupV1:
    """cgroup v1: a hierarchy per controller, each mounted on its own; an environment has a cgroup
    of its name under each controller's mount."""

    label = "cgroup v1"
    PEAK, EVENTS, CURRENT = "memory.max_usage_in_bytes", "memory.oom_control", "memory.usage_in_bytes"
    SWAP = "memory.memsw.limit_in_bytes"  # memory plus swap, where the kernel accounts swap

    def __init__(self, root: Path):
        self.root = root  # the controller's mount

    @classmethod
    def memory_settings(cls, limit: int) -> dict[str, str]:
        return {"memory.limit_in_bytes": str(limit), cls.SWAP: str(limit)}

    @staticmethod
    def cpu_settings(quota: tuple[int, int]) -> dict[str, str]:
        """The period first, as the kernel reads them."""
        return {"cpu.cfs_period_us": str(quota[1]), "cpu.cfs_quota_us": str(quota[0])}

    def make(self, name: str, settings: dict[str, str]) -> Path:
        return _cgroup(self.root / name, settings, optional=(self.SWAP,))

    def remove(self, path: Path) -> None:
        with contextlib.suppress(OSError):
            path.rmdir()


class CgroupV2:
    """cgroup v2: one hierarchy for all controllers. A cgroup has the controllers its parent
    enables in cgroup.subtree_control, and only a leaf may hold processes ("no internal
    processes"), so the host makes a cgroup of its own with memory and cpu enabled, and each
    environment is one leaf in it that holds both its limits."""

    label = "cgroup v2"
    PEAK, EVENTS, CURRENT = "memory.peak", "memory.events", "memory.current"  # memory.peak: Linux 5.19
    SWAP = "memory.swap.max"

    _lock = threading.Lock()  # environments start and end on several threads; they share the parent

    def __init__(self, root: Path):
        self.root = root  # the hierarchy's mount
        self.parent = root / f"fanout-host-{os.getpid()}"

    @classmethod
    def memory_settings(cls, limit: int) -> dict[str, str]:
        return {"memory.max": str(limit), cls.SWAP: "0"}

    @staticmethod
    def cpu_settings(quota: tuple[int, int]) -> dict[str, str]:
        return {"cpu.max": f"{quota[0]} {quota[1]}"}

    def make(self, name: str, settings: dict[str, str]) -> Path:
        with self._lock:
            _enable(self.root)
            self.parent.mkdir(exist_ok=True)
            _enable(self.parent)
            return _cgroup(self.parent / name, settings, optional=(self.SWAP,))

    def remove(self, path: Path) -> None:
        """Remove the leaf, and the parent once no environment's leaf is left in it (the kernel
        refuses it before)."""
        with self._lock, contextlib.suppress(OSError):
            path.rmdir()
            self.parent.rmdir()


Hierarchy = CgroupV1 | CgroupV2


def hierarchy(controller: str, v1_root: Path) -> Hierarchy | str:
    """Where `controller`'s cgroups are made: its v1 mount `v1_root`, else the v2 hierarchy when it
    offers the controller; else why neither can be used, in a few words."""
    if (v1_root / "cgroup.procs").exists():
        return CgroupV1(v1_root)
    missing = f"no cgroup v1 {controller} controller at {v1_root}"
    unified = next((root for root in UNIFIED_ROOTS if (root / "cgroup.controllers").exists()), None)
    if unified is None:
        return f"{missing}, no cgroup v2 hierarchy"
    if controller not in (_read(unified / "cgroup.controllers") or "").split():
        return f"{missing}, and the cgroup v2 hierarchy at {unified} has no {controller} controller"
    return CgroupV2(unified)


def _make(controller: str, v1_root: Path, name: str,
          settings: Callable[[Hierarchy], dict[str, str]]) -> tuple[Hierarchy, Path] | str:
    """The environment's cgroup `name` for `controller`, with the settings for the hierarchy it is
    in; else why it has none, in a few words."""
    found = hierarchy(controller, v1_root)
    if isinstance(found, str):
        return found
    try:
        return found, found.make(name, settings(found))
    except OSError as exc:
        return f"{exc.strerror}: {exc.filename}" if exc.strerror and exc.filename else exc.strerror or str(exc)


class MemoryLimit:
    """The cgroup of one environment; `path` is None where the kernel gives none."""

    def __init__(self, name: str, memory_mb: int):
        self.path: Path | None = None
        self._cgroups: Hierarchy | None = None
        self._limit_mb, self._killed_mb = memory_mb, 0.0  # the watchdog's limit and its kill
        self._sampling, self._sampled = False, 0  # where the cgroup keeps no peak: the highest usage seen
        self._final: tuple[bool, float | None] | None = None  # what remove() read last
        made = _make("memory", MEMORY_ROOT, name, lambda cgroups: cgroups.memory_settings(memory_mb * MIB))
        if isinstance(made, str):
            self.enforcement = f"enforced by watchdog (no memory cgroup: {made})"
            return
        self._cgroups, self.path = made
        self.enforcement = f"enforced by {self._cgroups.label}"
        self._sampling = not (self.path / self._cgroups.PEAK).exists()  # v2 before Linux 5.19

    @property
    def watching(self) -> bool:
        """True when the host must sample: no cgroup holds the process, or it keeps no peak."""
        return not self._final and (self.path is None or self._sampling)

    def over(self, pid: int) -> bool:
        """The host's sample: True when the watchdog finds `pid`'s resident memory past the limit.
        A cgroup's usage is sampled instead, for peak_mb (the kernel holds the limit)."""
        if self.path:
            self._sample()
            return False
        rss = _resident_mb(pid)
        if rss is not None and rss > self._limit_mb:
            self._killed_mb = rss
            return True
        return False

    def exceeded(self) -> bool:
        """True once the kernel has killed a process of the environment for memory: the oom_kill
        count, in v1's memory.oom_control (memory.failcnt stays 0 where the swap limit is hit
        first) or v2's memory.events."""
        if self._final:
            return self._final[0]
        if self._killed_mb:
            return True
        events = _read(self.path / self._cgroups.EVENTS) if self.path and self._cgroups else None
        counts = dict(line.split() for line in (events or "").splitlines())
        return int(counts.get("oom_kill", 0)) > 0

    def peak_mb(self) -> float | None:
        """The cgroup's peak usage, the measure its limit is enforced on (where the kernel keeps
        no peak, the highest usage sampled)."""
        if self._final:
            return self._final[1]
        if self._killed_mb:
            return self._killed_mb
        if not (self.path and self._cgroups):
            return None
        if self._sampling:
            peak = self._sample()
        else:
            peak = int(_read(self.path / self._cgroups.PEAK) or 0)
        return peak / MIB if peak else None

    def _sample(self) -> int:
        """The highest usage of the cgroup seen, this sample included."""
        if self.path and self._cgroups:
            self._sampled = max(self._sampled, int(_read(self.path / self._cgroups.CURRENT) or 0))
        return self._sampled

    def remove(self) -> None:
        """Remove the cgroup once its processes have exited (the kernel refuses it before); what it
        measured stays readable."""
        if self.path and self._cgroups:
            self._final = (self.exceeded(), self.peak_mb())
            self._cgroups.remove(self.path)
            self.path = None


class TmpStorage:
    """An ext4 image of `size_mb` for the environment whose /tmp is `directory`.

    The environment mounts it itself, inside its private mount namespace (mount_tmp): the mount
    then lives exactly as long as the environment's processes, even when the host is killed
    outright (mounted by the host, it outlived a SIGKILL and kept `directory` busy).
    `enforcement` says whether the size holds; the environment's answer completes it (mounted).
    """

    def __init__(self, directory: str, size_mb: int):
        self.image: str | None = directory + ".img"
        try:
            with open(self.image, "wb") as image:
                image.truncate(size_mb * MIB)
            _run("mkfs.ext4", "-q", "-m", "0", self.image)
            self.enforcement = "enforced by a loop-mounted file system"
        except (OSError, subprocess.CalledProcessError) as exc:
            self.enforcement = f"{NOT_ENFORCED}: no file system image ({_why(exc)})"
            self.remove()

    def mounted(self, problem: str | None) -> None:
        """Record the environment's answer: None when it mounted the image, else why not."""
        if problem and self.image:
            self.enforcement = f"{NOT_ENFORCED}: {problem}"

    def remove(self) -> None:
        """Delete the image (a mount still using it keeps its data until the mount ends)."""
        if self.image:
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.image)
            self.image = None


def mount_tmp(image: str, directory: str) -> str | None:
    """In the environment, once in its private mount namespace: mount `image` on `directory`,
    empty (Lambda's /tmp has no lost+found) and writable by all. None on success, else why not."""
    try:
        _run("mount", "-o", "loop", image, directory)
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"no loop mount ({_why(exc)})"
    os.rmdir(os.path.join(directory, "lost+found"))
    os.chmod(directory, 0o1777)
    return None


def _run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, text=True)


def _why(exc: Exception) -> str:
    """The command's last error line, or the OS error."""
    if isinstance(exc, subprocess.CalledProcessError):
        lines = (exc.stderr or "").strip().splitlines()
        return lines[-1] if lines else f"{exc.cmd[0]} failed"
    return getattr(exc, "strerror", None) or str(exc)


def cpu_quota(memory_mb: int, scale: float) -> tuple[int, int] | None:
    """(quota, period) in microseconds for memory / 1,769 MB of a vCPU divided by the network
    scale (which slows rates, so CPU work per byte slows with them); None below what CFS can
    enforce (at least 1 ms of quota per period of at most 1 s)."""
    share = vcpu.share(memory_mb, scale)
    for period in (PERIOD_US, MAX_PERIOD_US):
        if share * period >= MIN_QUOTA_US:
            return round(share * period), period
    return None


class CpuLimit:
    """The CPU cgroup of one environment; `path` is None where the cap is not applied.

    The cold start runs at the unscaled share and invoking() lowers it to the scaled one: the
    network scale slows rates, and an init is a latency, which the scale leaves alone (at a scale
    of 50 a 256 MB init took minutes at a fiftieth of its share)."""

    def __init__(self, name: str, memory_mb: int, scale: float):
        self.path: Path | None = None
        self._cgroups: Hierarchy | None = None
        self._scaled = cpu_quota(memory_mb, scale)
        share = vcpu.share(memory_mb, scale)
        if self._scaled is None:
            self.enforcement = f"{NOT_ENFORCED}: {self.unenforceable(memory_mb, scale)}"
            return
        unscaled = cpu_quota(memory_mb, 1.0) or self._scaled
        made = _make("cpu", CPU_ROOT, name, lambda cgroups: cgroups.cpu_settings(unscaled))
        if isinstance(made, str):
            self.enforcement = f"{NOT_ENFORCED}: no cpu cgroup ({made})"
            return
        self._cgroups, self.path = made
        during_init = f" ({vcpu.share(memory_mb):.3f} during the cold start)" if unscaled != self._scaled else ""
        self.enforcement = f"{share:.3f} vCPU{during_init}, enforced by {self._cgroups.label}"

    def invoking(self) -> None:
        """The cold start is over: from now on the scaled share."""
        if self.path and self._cgroups and self._scaled:
            with contextlib.suppress(OSError):  # the cgroup went with a killed environment
                for file, value in self._cgroups.cpu_settings(self._scaled).items():
                    (self.path / file).write_text(value)

    @staticmethod
    def unenforceable(memory_mb: int, scale: float) -> str:
        """Why a share cpu_quota() gives no quota for cannot be capped, in a few words."""
        return (f"{vcpu.share(memory_mb, scale):.5f} vCPU ({memory_mb} MB at scale {scale:g}) is below "
                f"the kernel's least quota (1 ms per 1 s period)")

    def remove(self) -> None:
        if self.path and self._cgroups:
            self._cgroups.remove(self.path)
            self.path = None


def joined(*groups: MemoryLimit | CpuLimit) -> list[str]:
    """The cgroups an environment joins for its limits, each once (on v2 one leaf holds both)."""
    return list(dict.fromkeys(str(group.path) for group in groups if group.path))


def join_path(path: str) -> None:
    """In the environment's process: join the cgroup at `path`."""
    Path(path, "cgroup.procs").write_text(str(os.getpid()))


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cgroup(path: Path, settings: dict[str, str], optional: tuple[str, ...] = ()) -> Path:
    """The cgroup at `path` with its control files written (those in `optional` only where the
    kernel has them), made unless it exists (a v2 environment's one cgroup holds both its
    limits); OSError, and nothing made left, when it cannot be had."""
    made = not path.is_dir()
    path.mkdir(exist_ok=True)
    try:
        for file, value in settings.items():
            if file not in optional or (path / file).exists():
                (path / file).write_text(value)
    except OSError:
        if made:
            path.rmdir()
        raise
    return path


def _enable(cgroup: Path) -> None:
    """Let the children of the v2 cgroup `cgroup` have the memory and cpu controllers, of those
    it has, unless they may already."""
    offered, enabled = ((_read(cgroup / file) or "").split() for file in ("cgroup.controllers", "cgroup.subtree_control"))
    wanted = [f"+{name}" for name in CONTROLLERS if name in offered and name not in enabled]
    if wanted:
        (cgroup / "cgroup.subtree_control").write_text(" ".join(wanted))


def _resident_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None
