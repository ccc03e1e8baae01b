"""Lambda's limits for one execution environment: its memory, the size of its /tmp and its CPU
share.

Memory: a cgroup its process joins as it starts.

Lambda ends an invocation whose environment uses more than its configured memory: the runtime
is killed and the REPORT line gives Max Memory Used. Here a cgroup (v1 memory controller) holds
the environment's process and everything it starts, so nothing it allocates is charged
elsewhere; the kernel kills it past the limit and the cgroup's own peak is what the REPORT line
says. Where no cgroup can be made a watchdog samples the process's resident memory instead
(the host calls over() every WATCH_INTERVAL and kills it past the limit), which misses what its
children allocate and peaks shorter than an interval; `MemoryLimit.enforcement` says which, one
line for the report.

/tmp: Lambda's is a file system of the function's ephemeral storage size, which does not count
against its memory, so here it is an ext4 image of that size, sparse, mounted through a loop
device (a tmpfs would be charged to the memory cgroup) in the environment's own mount namespace;
a write past it fails with ENOSPC.

CPU: memory / 1,769 MB of a vCPU divided by the network scale, as a CFS quota in a cgroup of the
cpu controller that the process joins the same way.
"""

import contextlib
import os
import subprocess
from pathlib import Path

from fanout.common import vcpu

MEMORY_ROOT = Path("/sys/fs/cgroup/memory")
CPU_ROOT = Path("/sys/fs/cgroup/cpu")
MIN_QUOTA_US, MAX_PERIOD_US, PERIOD_US = 1000, 1_000_000, 100_000  # the kernel's CFS bounds
MIB = 1024 * 1024
WATCH_INTERVAL = 0.05  # seconds between the watchdog's samples
NOT_ENFORCED = "not enforced"  # how an `enforcement` that does not hold begins


class MemoryLimit:
    """The cgroup of one environment; `path` is None where the kernel gives none."""

    def __init__(self, name: str, memory_mb: int, root: Path | None = None):
        self.path: Path | None = None
        self._limit_mb, self._killed_mb = memory_mb, 0.0  # the watchdog's limit and its kill
        self._final: tuple[bool, float | None] | None = None  # what remove() read last
        self.enforcement = "enforced by cgroup"
        limit = str(memory_mb * MIB)  # the swap limit too where the kernel has one
        try:
            self.path = _cgroup(root or MEMORY_ROOT, name, {"memory.limit_in_bytes": limit,
                                                             "memory.memsw.limit_in_bytes": limit},
                                optional=("memory.memsw.limit_in_bytes",))  # fmt: skip
        except OSError as exc:
            self.enforcement = f"enforced by watchdog (no memory cgroup: {exc.strerror or exc})"

    @property
    def watching(self) -> bool:
        """True when the host must sample the process (no cgroup holds it)."""
        return self.path is None and not self._final

    def over(self, pid: int) -> bool:
        """The watchdog's sample: True when `pid`'s resident memory is past the limit."""
        rss = _resident_mb(pid)
        if rss is not None and rss > self._limit_mb:
            self._killed_mb = rss
            return True
        return False

    def exceeded(self) -> bool:
        """True once the kernel has killed a process of the environment for memory (the count in
        memory.oom_control; memory.failcnt stays 0 where the swap limit is hit first)."""
        if self._final:
            return self._final[0]
        if self._killed_mb:
            return True
        control = _read(self.path / "memory.oom_control") if self.path else None
        counts = dict(line.split() for line in (control or "").splitlines())
        return int(counts.get("oom_kill", 0)) > 0

    def peak_mb(self) -> float | None:
        """The cgroup's peak usage, the measure its limit is enforced on."""
        if self._final:
            return self._final[1]
        if self._killed_mb:
            return self._killed_mb
        value = _read(self.path / "memory.max_usage_in_bytes") if self.path else None
        return int(value) / MIB if value else None

    def remove(self) -> None:
        """Remove the cgroup once its processes have exited (the kernel refuses it before); what it
        measured stays readable."""
        if self.path:
            self._final = (self.exceeded(), self.peak_mb())
            with contextlib.suppress(OSError):
                self.path.rmdir()
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

    def __init__(self, name: str, memory_mb: int, scale: float, root: Path | None = None):
        self.path: Path | None = None
        self._scaled = cpu_quota(memory_mb, scale)
        share = vcpu.share(memory_mb, scale)
        if self._scaled is None:
            self.enforcement = f"{NOT_ENFORCED}: {self.unenforceable(memory_mb, scale)}"
            return
        unscaled = cpu_quota(memory_mb, 1.0) or self._scaled
        try:
            self.path = _cgroup(root or CPU_ROOT, name, _cfs_settings(unscaled))
            during_init = f" ({vcpu.share(memory_mb):.3f} during the cold start)" if unscaled != self._scaled else ""
            self.enforcement = f"{share:.3f} vCPU{during_init}, enforced by cgroup"
        except OSError as exc:
            self.enforcement = f"{NOT_ENFORCED}: no cpu cgroup ({exc.strerror or exc})"

    def invoking(self) -> None:
        """The cold start is over: from now on the scaled share."""
        if self.path and self._scaled:
            with contextlib.suppress(OSError):  # the cgroup went with a killed environment
                for file, value in _cfs_settings(self._scaled).items():
                    (self.path / file).write_text(value)

    @staticmethod
    def unenforceable(memory_mb: int, scale: float) -> str:
        """Why a share cpu_quota() gives no quota for cannot be capped, in a few words."""
        return (f"{vcpu.share(memory_mb, scale):.5f} vCPU ({memory_mb} MB at scale {scale:g}) is below "
                f"the kernel's least quota (1 ms per 1 s period)")

    def remove(self) -> None:
        if self.path:
            with contextlib.suppress(OSError):
                self.path.rmdir()
            self.path = None


def _cfs_settings(quota: tuple[int, int]) -> dict[str, str]:
    """The control files for (quota, period), the period first as the kernel reads them."""
    return {"cpu.cfs_period_us": str(quota[1]), "cpu.cfs_quota_us": str(quota[0])}


def join_path(path: str) -> None:
    """In the environment's process: join the cgroup at `path`."""
    Path(path, "cgroup.procs").write_text(str(os.getpid()))


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _cgroup(root: Path, name: str, settings: dict[str, str], optional: tuple[str, ...] = ()) -> Path:
    """A new cgroup `name` under `root` with its control files written (those in `optional` only
    where the kernel has them); OSError, and nothing left, when it cannot be made."""
    path = root / name
    path.mkdir()
    try:
        for file, value in settings.items():
            if file not in optional or (path / file).exists():
                (path / file).write_text(value)
    except OSError:
        path.rmdir()
        raise
    return path


def _resident_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None
