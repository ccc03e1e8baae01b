"""`python -m bench NAME...` runs only the named benchmarks and refuses a name it does not know;
every benchmark runs to its end at a tiny size; the run's table and exit status follow its rules."""

import os
import subprocess
import sys

import pytest

from fanout.common import paths


def known() -> list[str]:
    """The benchmarks `python -m bench` finds (its own discovery, from the repository's root)."""
    sys.path.insert(0, str(paths.REPO))
    try:
        from bench.__main__ import known as found  # noqa: PLC0415 (the repository's folder)

        return found()
    finally:
        sys.path.remove(str(paths.REPO))


def test_an_unknown_benchmark_name_is_refused_with_the_choices():
    result = subprocess.run([sys.executable, "-m", "bench", "strategy_speed nosuch"], cwd=paths.REPO,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith("unknown benchmark 'nosuch': choose from ")
    assert "strategy_speed" in result.stderr
    assert result.stdout == ""  # nothing ran: the known name before it did not start


# Each benchmark's tiny size: a run of seconds, through the options its module reads. The
# benchmarks come from discovery (bench.__main__.known), so a new one without a size here fails.
TINY = {
    "cli_startup": {"BENCH_CLI_REPEATS": "1"},
    "crossrun_report": {"BENCH_CROSSRUN_PER_SLOT": "1", "BENCH_CROSSRUN_REPEATS": "1"},
    "emulator_first_byte": {"BENCH_FIRST_BYTE_REPEATS": "1"},
    "endpoint_overhead": {"BENCH_ENDPOINT_REPEATS": "1"},
    "host_concurrency": {"BENCH_HOST_TARGETS": "2", "BENCH_HOST_INVOCATIONS": "3", "BENCH_HOST_MIN_HOLD_S": "0.2"},
    "insights_vs_duckdb": {"BENCH_INSIGHTS_EVENTS": "2000", "BENCH_INSIGHTS_REPEATS": "1"},
    "latency_overhead": {"BENCH_LATENCY_SIZES": "1 1KB", "BENCH_LATENCY_REPS": "1", "BENCH_LATENCY_REPEATS": "1"},
    "log_sync": {"BENCH_LOG_SYNC_REPEATS": "1", "BENCH_LOG_SYNC_BATCH": "4"},
    "network_speed": {"BENCH_NETWORK_ENVS": "2", "BENCH_NETWORK_REPEATS": "1", "BENCH_NETWORK_SHRINK": "16"},
    "network_truth": {"BENCH_TRUTH_SHRINK": "32", "BENCH_TRUTH_ENVS": "2", "BENCH_TRUTH_MESSAGES": "2"},
    "seed_scale": {"BENCH_SEED_CONCURRENCY": "2", "BENCH_SEED_MULTIPLIER": "2"},
    "send_rate": {"BENCH_SEND_MESSAGES": "20", "BENCH_SEND_REPEATS": "1"},
    "sqs_throughput": {"BENCH_SQS_DEPTH": "20", "BENCH_SQS_MESSAGES": "10", "BENCH_SQS_REPEATS": "1"},
    "strategy_speed": {"BENCH_STRATEGY_SIZE": "16MiB", "BENCH_STRATEGY_REPEATS": "1"},  # two 8 MiB parts
    "strategy_truth": {"BENCH_TRUTH_SHRINK": "16", "BENCH_TRUTH_CONNECTIONS": "8"},
    "sweep_overhead": {"BENCH_SWEEP_CONCURRENCY": "1", "BENCH_SWEEP_MULTIPLIER": "1", "BENCH_SWEEP_REDEPLOYS": "1"},
}
# A sweep (a Terraform create and three redeploys: about 90 s on a quiet 2-core machine), and
# hosted runs under a network model (10-25 s: each hosted run unpacks the function's bundled SDK
# and starts its environments cold, whatever the object's size).
# The slow ones, longest first (their tiny runs take about 140, 55, 45 and 35 s): parametrized in
# this order ahead of the others, each is handed to a worker on its own (tests/conftest.py), so the
# longest starts first and none of them is left running alone at the end of the suite.
SLOW = ("sweep_overhead", "network_speed", "network_truth", "strategy_truth")


def test_every_benchmark_has_a_tiny_size():
    assert sorted(TINY) == known()


# Benchmarks whose tiny run a test of its own makes and reads further (below): run once, not twice.
READ_FURTHER = {"strategy_speed", "seed_scale"}


def run_to_its_end(name: str) -> list[str]:
    """The lines `python -m bench NAME` prints at its tiny size, as `make bench` runs it, after
    checking that every figure reached the closing table and none failed. Exit 1 (a target
    missed) is fine at this size; 2 is a benchmark that broke."""
    result = subprocess.run([sys.executable, "-m", "bench", name], cwd=paths.REPO, env=os.environ | TINY.get(name, {}),
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert result.returncode in (0, 1), result.stdout[-2000:] + result.stderr[-3000:]
    table = result.stdout[result.stdout.index("benchmarks: figures against their targets"):]
    assert "FAILED" not in table and name in table
    return result.stdout.splitlines()


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in [*SLOW, *(n for n in known() if n not in SLOW)] if n not in READ_FURTHER])  # fmt: skip
def test_each_benchmark_runs_to_its_end_at_a_tiny_size(name):
    run_to_its_end(name)


def test_a_benchmark_that_raises_fails_the_run_and_the_next_one_still_runs(tmp_path):
    """The runner's own rules, on two throwaway benchmark modules in a copy of the package."""
    package = tmp_path / "bench"
    package.mkdir()
    for source in ("__init__.py", "__main__.py", "_ratios.py"):
        (package / source).write_text((paths.REPO / "bench" / source).read_text())
    (package / "a_broken.py").write_text("def main():\n    raise ValueError('no such column mode')\n")
    (package / "b_judged.py").write_text("from bench._ratios import judge\n\n"
                                         "def main():\n    judge('speed', 0.5, at_least=0.9)\n")  # fmt: skip
    (package / "c_silent.py").write_text("def main():\n    pass\n")
    result = subprocess.run([sys.executable, "-m", "bench"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60)  # fmt: skip
    assert result.returncode == 2
    assert "ValueError: no such column mode" in result.stderr  # its traceback
    rows = [line for line in result.stdout.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == ["a_broken", "b_judged", "c_silent"]
    assert "FAILED: ValueError: no such column mode" in rows[0]
    assert "speed" in rows[1] and ">= 0.9" in rows[1] and "MISSED" in rows[1]
    assert "FAILED: judged no figure" in rows[2]


def test_the_run_exits_1_when_a_target_is_missed_and_0_when_all_are_met(tmp_path):
    package = tmp_path / "bench"
    package.mkdir()
    for source in ("__init__.py", "__main__.py", "_ratios.py"):
        (package / source).write_text((paths.REPO / "bench" / source).read_text())
    (package / "one.py").write_text("from bench._ratios import judge\n\n"
                                    "def main():\n    judge('a', 1.0, at_least=0.9)\n    judge('b', 3.0, at_most=5)\n"
                                    "    judge('c', 0.1)\n")  # fmt: skip
    (package / "two.py").write_text("from bench._ratios import judge\n\ndef main():\n    judge('d', 1.2, 0.95, 1.05)\n")
    codes = [subprocess.run([sys.executable, "-m", "bench", *names], cwd=tmp_path, capture_output=True,
                            timeout=60).returncode for names in (["one"], ["one two"])]  # fmt: skip
    assert codes == [0, 1]


def test_cli_startup_stops_when_a_command_exits_with_another_status(tmp_path):
    # A crash must not pass for a fast start: the timer checks each exit status.
    code = f"from bench import cli_startup; cli_startup.timer(('-c', 'raise SystemExit(3)'), 0, {str(tmp_path)!r})()"
    result = subprocess.run([sys.executable, "-c", code], cwd=paths.REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "UnexpectedExit: `python -c raise SystemExit(3)` exited 3, expected 0" in result.stderr


def test_strategy_speed_runs_at_a_tiny_size_and_judges_each_strategy():
    """Two 8 MiB parts, one repeat: each strategy judged against the same SDK calls made bare
    (within 5%), the CPU beside it, and both against urllib3 for information."""
    lines = run_to_its_end("strategy_speed")
    for strategy in ("download_file max_concurrency=10 chunk_size=8MiB threshold=8MiB", "stream chunk_size=256KiB",
                     "ranged connections=4 chunk_size=8MiB"):
        [verdict] = [line for line in lines if line.strip().startswith(f"{strategy}: median ratio")]
        assert verdict.split(": ", 1)[1].split(";")[0].endswith("the 0.95 target")
        at = lines.index(verdict)
        assert "bare boto3" in lines[at + 1] and "urllib3" in lines[at + 1]
        assert lines[at + 2].strip().startswith("CPU per download: handler / bare boto3 median ")
        for offset, side in ((3, "handler"), (4, "bare boto3")):
            assert lines[at + offset].strip().startswith(f"{side} / urllib3: median ratio ")
            assert "(information)" in lines[at + offset]
    assert any("stream chunk_size=256KiB with the timeline: median ratio" in line for line in lines)


@pytest.mark.slow
def test_seed_scale_runs_at_a_tiny_size_and_judges_both_figures():
    """Two environments, two messages each: the automatic scale's figures, then steady/target and
    measured/predicted, each judged against its target."""
    lines = [line for line in run_to_its_end("seed_scale") if line.startswith("seed scale: ")]
    assert lines[0].startswith("seed scale: network lambda-2024: scale ") and "requests/s to 16 clients" in lines[0]
    assert lines[1].startswith("seed scale: steady/target ") and "4 downloads" in lines[1]
    assert lines[2].startswith("seed scale: measured/predicted median seconds ")
    assert all(("met:" in line) for line in lines[1:3])


def test_network_speed_runs_a_wave_again_when_its_downloads_did_not_overlap():
    """Two downloads that overlapped by 3 ms, the first's bytes all early and the second's all late,
    leave the steady window (while both ran) without a byte: such a wave is run again (at most
    three times in all) instead of failing the benchmark. Two that ran together give the bytes
    inside the window over its length."""
    sys.path.insert(0, str(paths.REPO))
    try:
        from bench import network_speed  # noqa: PLC0415 (the repository's folder)
    finally:
        sys.path.remove(str(paths.REPO))
    early, late = [10**6] + [0] * 9, [0] * 9 + [10**6]  # per 10 ms interval
    apart = [download(0, early), download(97, late)]
    together = [download(0, [10**5] * 10), download(0, [10**5] * 10)]
    waves = iter([apart, together])
    assert network_speed.wave_mb_per_s(lambda: next(waves)) == pytest.approx(2 * 10**6 / 0.1 / 1e6)
    with pytest.raises(network_speed.NoOverlap):
        network_speed.wave_mb_per_s(lambda: apart)


def download(start_ms: int, counts: list[int]) -> dict:
    """A download record from `start_ms` whose bytes arrived as `counts` per 10 ms interval,
    encoded as the function encodes its timeline."""
    from fanout.common import function_modules

    timeline = function_modules.load("timeline")
    interval, text = timeline.encode(counts, 10)
    return {"start_ms": start_ms, "end_ms": start_ms + 10 * len(counts), "concurrency_limit": 2, "bytes": sum(counts),
            "timeline_interval_ms": interval, "timeline": text}
