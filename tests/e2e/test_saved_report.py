"""A saved report outlives its emulator and its stack: once `fanout report` has saved a run's
records, the same report, with the emulator stopped and the stack destroyed, redraws every file
byte for byte from them, and reading the logs again (--refresh) is refused without touching one.

Its own emulator (fanout.emulator.control.private) and stack, since the test stops and destroys
both; the module's tiny run: 6 downloads of a 1 MiB object at concurrency 2.
"""

import pytest

from fanout import cli, package, params, runs, stack, terraform, upload
from fanout.emulator import control

pytestmark = pytest.mark.slow

STACK = "e2e-saved"


def fanout(*argv: str) -> int:
    return cli.main([*argv[:1], "--backend", "local", "--stack", STACK, *argv[1:]])


def folder_bytes(folder) -> dict:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_a_saved_report_is_redrawn_byte_for_byte_with_no_emulator_and_no_stack(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))  # what `private` restores: no emulator, no stack
    with control.private(prefix="fanout-saved-") as endpoint:
        inputs = params.parse(STACK, "us-east-1", 2, 256, "1MiB", "x86_64", "download_file", 1)
        try:
            terraform.apply("local", STACK, inputs.variables(endpoint, package.build(function="downloader")))
            upload.ensure_object(stack.load("local", STACK))
            assert fanout("fire", "--messages", "6", "--tag", "saved") == 0
            run_id = runs.resolve(runs.LATEST)
            assert fanout("wait", "--run", run_id, "--timeout", "240") == 0
            assert fanout("report", "--run", run_id) == 0
        finally:
            terraform.destroy("local", STACK)
    assert control.running_endpoint() is None
    folder = runs.run_dir(run_id)
    before = folder_bytes(folder)
    assert {"records.jsonl", "summary.json", "summary.csv", "report.md", "throughput.png", "concurrency.png",
            "seconds_cdf.png"} <= set(before)  # fmt: skip
    assert len(before["records.jsonl"].splitlines()) == 6

    capsys.readouterr()
    assert fanout("report", "--run", run_id) == 0
    assert "its saved report (6 records), logs not read" in capsys.readouterr().out
    assert folder_bytes(folder) == before
    assert fanout("report", "--run", run_id, "--refresh") == 1
    assert f"no stack {STACK!r} is deployed" in capsys.readouterr().err
    assert folder_bytes(folder) == before
