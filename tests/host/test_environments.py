"""Execution environments: processes, cold and warm starts, the concurrency limit, private /tmp,
the read-only task root, the runtime's import path, log format."""

import dataclasses
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import boto3
import pytest

from fanout.common import paths
from fanout.results.concurrency import peak as peak_concurrency
from fanout.common.errors import FanoutError
from fanout.local.host import Host, runtime, sandbox
from tests.harness.host_testing import END, REPORT, START, intervals

from .support import messages

COUNTING = """
import os, time

invocations = 0  # module state survives between warm invocations

def handler(event, context):
    global invocations
    invocations += 1
    print("invocation", invocations, os.getpid())
    time.sleep(0.3)
"""
STREAM_NAME = re.compile(r"^\d{4}/\d{2}/\d{2}/\[\$LATEST\][0-9a-f]{32}$")


def test_cold_then_warm_starts_and_the_lambda_log_format(deploy):
    fn = deploy(COUNTING, reserved=2, visibility=30)
    sent = 8
    fn.send([{"seq": i} for i in range(sent)])

    summary = fn.host()

    streams = fn.streams()
    assert summary.environments == len(streams) <= 2
    reports, pids = [], []
    for name, events in streams.items():
        assert STREAM_NAME.match(name)
        platform = [m for _, m in events if m.startswith(("START", "END", "REPORT"))]
        for start, end, report in zip(platform[::3], platform[1::3], platform[2::3]):
            ids = {START.match(start).group(1), END.match(end).group(1), REPORT.match(report)["id"]}
            assert len(ids) == 1
            assert REPORT.match(report)["memory"] == "256"
            reports.append(REPORT.match(report))
        cold = [bool(REPORT.match(m)["init"]) for m in platform[2::3]]
        assert cold[0] and not any(cold[1:])  # Init Duration on the environment's first REPORT only
        counts = [int(m.split()[1]) for _, m in events if m.startswith("invocation ")]
        assert counts == list(range(1, len(counts) + 1))
        assert [ts for ts, _ in events] == sorted(ts for ts, _ in events)
        pids.append({m.split()[2] for _, m in events if m.startswith("invocation ")})
    assert len(reports) == sent
    assert summary.cold_starts == len(streams) == sum(bool(r["init"]) for r in reports)
    # One OS process per environment: the same one for all its invocations, none shared.
    assert all(len(p) == 1 for p in pids) and len(set.union(*pids)) == len(streams)


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
    # /tmp (the tests' state directory does; a checkout there, its venv) is mounted back there.
    kept = [Path(p).resolve().parts for p in (paths.home(), sys.prefix, paths.REPO)]
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


def test_init_duration_is_the_handler_modules_import(deploy):
    fn = deploy("import time\ntime.sleep(0.3)\n\ndef handler(event, context):\n    pass\n")
    fn.send([{"seq": 1}])

    fn.host()

    (report,) = [REPORT.match(m) for m in messages(fn) if REPORT.match(m)]
    assert float(report["init"]) >= 300


SHARED_TMP = """
import os, time

def handler(event, context):
    directory = os.environ["SHARED_DIR"]
    os.makedirs(directory, exist_ok=True)
    open(os.path.join(directory, context.log_stream_name.replace("/", "_")), "w").close()
    time.sleep(1)  # until the other environments have written theirs
    print("seen", sorted(os.listdir(directory)))
"""


def test_without_a_private_tmp_environments_share_it_and_the_host_says_so_once(deploy, monkeypatch):
    monkeypatch.setenv(sandbox.SHARED_TMP_VARIABLE, "1")
    shared = f"/tmp/fanout-shared-{uuid.uuid4().hex}"
    fn = deploy(SHARED_TMP, reserved=3, visibility=30, environment={"SHARED_DIR": shared})
    fn.send([{"seq": i} for i in range(3)])
    warnings = []

    try:
        fn.host(warn=warnings.append)
    finally:
        shutil.rmtree(shared, ignore_errors=True)

    streams = fn.streams()
    assert len(streams) == 3
    reason = f"{sandbox.SHARED_TMP_VARIABLE} is set"
    assert sorted(warnings) == [  # once each, though three environments started
        f"Lambda's /tmp (512 MB): not enforced: /tmp is shared ({reason})",
        f"no private /tmp per environment ({reason}); environments share /tmp and can write to the task root"]
    written = sorted(name.replace("/", "_") for name in streams)
    for events in streams.values():
        assert [m for _, m in events if m.startswith("seen")] == [f"seen {written}\n"]


TASK_ROOT = """
import os, subprocess

def handler(event, context):
    root = os.environ["LAMBDA_TASK_ROOT"]
    tool = os.path.join(root, "tool.sh")
    modes = [oct(os.stat(os.path.join(root, name)).st_mode & 0o777) for name in ("tool.sh", "handler.py")]
    print("modes", *modes)
    print("tool", subprocess.run([tool], capture_output=True, text=True).stdout.strip())
    try:
        open(os.path.join(root, "written"), "w").close()
        print("write ok")
    except OSError as exc:
        print("write failed", exc.errno)
"""


def test_task_root_keeps_file_modes_and_is_read_only(deploy):
    fn = deploy({"handler.py": TASK_ROOT, "tool.sh": "#!/bin/sh\necho ran\n"}, modes={"tool.sh": 0o755})
    fn.send([{"seq": 1}])
    warnings = []

    fn.host(warn=warnings.append)

    lines = [m for m in messages(fn) if m.startswith(("modes", "tool", "write"))]
    assert lines[:2] == ["modes 0o755 0o644\n", "tool ran\n"]
    if warnings:
        pytest.skip(f"no private mount namespace here, so no read-only task root: {warnings[0]}")
    assert lines[2] == f"write failed {errno.EROFS}\n"


def test_host_packages_cannot_be_imported(deploy):
    fn = deploy("import rich\n\ndef handler(event, context):\n    pass\n")
    fn.send([{"seq": 1}])

    with pytest.raises(FanoutError) as failure:
        fn.host()

    assert str(failure.value) == (f"function '{fn.name}' (handler 'handler.handler') failed to initialise: "
                                  "[ERROR] Runtime.ImportModuleError: Unable to import module 'handler': "
                                  "No module named 'rich'")


RUNTIME_PACKAGES = """
import importlib, json, os, sys
from importlib import metadata

import boto3, botocore.httpsession, dateutil, jmespath, s3transfer, six, urllib3


def importable(name):
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def handler(event, context):
    print(json.dumps({
        "path": sys.path,
        "host_modules": [name for name in ("fanout", "rich", "pytest", "moto", "certifi") if importable(name)],
        "stdlib": importable("sqlite3") and importable("xml.etree.ElementTree"),
        "boto3": metadata.version("boto3"),
        "ca_bundle": os.path.isfile(botocore.httpsession.get_cert_path(True)),
    }))
"""


def test_handlers_import_the_task_root_the_runtimes_packages_and_the_standard_library(deploy):
    fn = deploy({"handler.py": RUNTIME_PACKAGES})
    fn.send([{"seq": 1}])

    assert fn.host().succeeded == 1

    (report,) = [json.loads(m) for m in messages(fn) if m.startswith("{")]
    task_root, view, *stdlib = report["path"]
    assert Path(task_root).parent == paths.home() / "code" and Path(view).name == "runtime"  # the package's tree
    assert stdlib and not any("-packages" in path or path.startswith(str(paths.REPO)) for path in stdlib)
    assert report["host_modules"] == [] and report["stdlib"]
    assert report["boto3"] == boto3.__version__ and report["ca_bundle"]


def test_runtime_view_holds_only_the_runtimes_distributions(tmp_path):
    runtime.build_view(tmp_path / "runtime")

    assert runtime.module_names(str(tmp_path / "runtime")) == {
        "boto3", "botocore", "s3transfer", "jmespath", "urllib3", "dateutil", "six"}


def test_isolation_that_fails_half_way_is_an_error_not_a_shared_tmp(tmp_path):
    """Once the mount namespace exists, a failing mount must stop the environment (the host
    reports it as an init failure) rather than let it run half-isolated."""
    for name in ("task", "runtime"):
        (tmp_path / name).mkdir()
    spec = {"shared_tmp": False, "task_root": str(tmp_path / "task"), "runtime_dir": str(tmp_path / "runtime"),
            "tmp_dir": str(tmp_path / "missing"), "tmp_image": None}
    code = f"from fanout.local.host import sandbox; print(sandbox.isolate({spec!r}))"

    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    if result.returncode == 0:
        pytest.skip(f"no private mount namespace here: {result.stdout.strip()}")
    assert "FileNotFoundError" in result.stderr and "mount /tmp" in result.stderr


def test_a_failed_start_leaves_no_working_directory(deploy):
    fn = deploy("def handler(event, context):\n    pass\n")
    config = dataclasses.replace(fn.config(), code_location="http://127.0.0.1:9/code.zip")

    with pytest.raises(FanoutError, match="cannot download the code"):
        Host(config).run()

    assert list((paths.home() / "host").glob(f"{fn.name}-*")) == []


@pytest.mark.parametrize("spec_name, preloaded", [
    ("bench.seed_scale", ["bench.seed_scale"]),  # python -m bench.seed_scale: preloaded by name
    ("bench.__main__", []),  # python -m bench: multiprocessing does not run it again in a child
    (None, []),  # a script: the fork server imports __main__ by its path
])  # fmt: skip
def test_a_parent_run_with_dash_m_is_preloaded_by_its_module_name(monkeypatch, spec_name, preloaded):
    """Without it each environment ran the parent's module again with imports of its own: about
    90 MB more per environment, which 200 environments could not fit in 24 GB."""
    from types import SimpleNamespace

    from fanout.local.host import environment

    main = SimpleNamespace(__spec__=SimpleNamespace(name=spec_name) if spec_name else None)
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert environment._main_module() == preloaded
