"""Execution environments: cold and warm starts, the concurrency limit, private /tmp, log format."""

import os
import re
import sys
from pathlib import Path

from fanout import paths
from fanout.host import sandbox

from .support import END, REPORT, START, intervals, peak_concurrency

COUNTING = """
import time

invocations = 0  # module state survives between warm invocations

def handler(event, context):
    global invocations
    invocations += 1
    print("invocation", invocations)
    time.sleep(0.3)
"""
STREAM_NAME = re.compile(r"^\d{4}/\d{2}/\d{2}/\[\$LATEST\][0-9a-f]{32}$")


def test_cold_then_warm_starts_and_the_lambda_log_format(deploy):
    fn = deploy(COUNTING, reserved=2, visibility=30)
    messages = 8
    fn.send([{"seq": i} for i in range(messages)])

    summary = fn.host()

    streams = fn.streams()
    assert summary.environments == len(streams) <= 2
    reports = []
    for name, events in streams.items():
        assert STREAM_NAME.match(name)
        platform = [m for _, m in events if m.startswith(("START", "END", "REPORT"))]
        for start, end, report in zip(platform[::3], platform[1::3], platform[2::3]):
            ids = {START.match(start).group(1), END.match(end).group(1), REPORT.match(report).group(1)}
            assert len(ids) == 1
            assert REPORT.match(report).group(2) == "256"
            reports.append(REPORT.match(report))
        cold = [bool(REPORT.match(m).group(3)) for m in platform[2::3]]
        assert cold[0] and not any(cold[1:])  # Init Duration on the environment's first REPORT only
        counts = [int(m.split()[1]) for _, m in events if m.startswith("invocation ")]
        assert counts == list(range(1, len(counts) + 1))
        assert [ts for ts, _ in events] == sorted(ts for ts, _ in events)
    assert len(reports) == messages
    assert summary.cold_starts == len(streams) == sum(bool(r.group(3)) for r in reports)


def test_concurrency_never_exceeds_the_smallest_limit(deploy):
    fn = deploy(COUNTING, reserved=5, max_concurrency=3, visibility=30)
    fn.send([{"seq": i} for i in range(12)])

    summary = fn.host()

    peak = peak_concurrency(intervals(fn.streams()))
    assert summary.concurrency_limit == 3
    assert 1 < peak <= 3
    assert summary.environments <= 3


def test_max_envs_cap_binds_with_a_warning(deploy):
    fn = deploy(COUNTING, reserved=4, visibility=30)
    fn.send([{"seq": i} for i in range(6)])
    warnings = []

    summary = fn.host(max_envs=2, warn=warnings.append)

    assert len(warnings) == 1 and "--max-envs 2" in warnings[0] and "4" in warnings[0]
    assert summary.concurrency_limit == 2
    assert peak_concurrency(intervals(fn.streams())) <= 2


def test_each_environment_has_its_own_tmp(deploy, tmp_path):
    fn = deploy("""
        import os, time

        def handler(event, context):
            path = "/tmp/same-name"
            existed = os.path.exists(path)
            with open(path, "w") as f:
                f.write(context.log_stream_name)
            time.sleep(0.5)  # overlap with the other environment's write
            with open(path) as f:
                print("mine" if f.read() == context.log_stream_name else "clobbered", existed,
                      sorted(os.listdir("/tmp")))
        """, reserved=2, visibility=30)
    fn.send([{"seq": i} for i in range(4)])
    warnings = []

    fn.host(warn=warnings.append)

    streams = fn.streams()
    assert warnings == [] and len(streams) == 2
    assert peak_concurrency(intervals(streams)) == 2
    # A fresh, empty /tmp per environment; only a task root or runtime that itself lives under
    # /tmp (the tests' state directory does; a CI checkout's venv may) is mounted back there.
    kept = [Path(p).resolve().parts for p in (paths.home(), sys.prefix)]
    listing = sorted({"same-name"} | {parts[2] for parts in kept if parts[1] == "tmp"})
    for events in streams.values():
        lines = [m for _, m in events if m.startswith(("mine", "clobbered"))]
        assert lines[0] == f"mine False {listing}\n"
        assert all(line == f"mine True {listing}\n" for line in lines[1:])


def test_runtime_and_task_root_under_tmp_stay_visible(tmp_path):
    """A venv or checkout under /tmp (common in CI) is mounted back over the private /tmp;
    paths elsewhere, missing ones and paths nested in a kept one are not mounted again."""
    venv, task_root = tmp_path / "venv", tmp_path / "task"
    (venv / "lib" / "site-packages").mkdir(parents=True)
    task_root.mkdir()
    paths = [str(task_root), str(venv), str(venv / "lib" / "site-packages"), "/usr/lib", str(tmp_path / "gone")]

    kept = sandbox._paths_under_tmp(paths)

    assert kept == sorted([os.path.realpath(task_root), os.path.realpath(venv)])
