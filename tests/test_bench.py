"""`python -m bench NAME...` runs only the named benchmarks and refuses a name it does not know; a
benchmark the docs show runs at a tiny size."""

import os
import subprocess
import sys

import pytest

from fanout import paths


def test_an_unknown_benchmark_name_is_refused_with_the_choices():
    result = subprocess.run([sys.executable, "-m", "bench", "strategy_speed nosuch"], cwd=paths.REPO,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith("unknown benchmark 'nosuch': choose from ")
    assert "strategy_speed" in result.stderr
    assert result.stdout == ""  # nothing ran: the known name before it did not start


@pytest.mark.slow
def test_sweep_overhead_runs_at_a_tiny_size():
    """The README's `python -m bench.sweep_overhead` at one concurrency and one message per slot:
    two cells, so one redeployed cell gives the ratio, then the two redeploy paths."""
    env = os.environ | {"BENCH_SWEEP_CONCURRENCY": "2", "BENCH_SWEEP_MULTIPLIER": "1"}
    result = subprocess.run([sys.executable, "-m", "bench.sweep_overhead"], cwd=paths.REPO, env=env,
                            capture_output=True, text=True, timeout=900)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "median overhead / downloads over the redeployed cells" in result.stdout
    assert "redeploy of a memory change" in result.stdout


def test_cli_startup_runs_at_a_tiny_size_and_judges_each_command():
    result = subprocess.run([sys.executable, "-m", "bench.cli_startup", "--repeats", "1"], cwd=paths.REPO,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name in ("fanout --help", "fanout deploy --memory 5 (refused)"):
        [line] = [line for line in lines if line.strip().startswith(name)]
        assert line.endswith("the 0.5 s target") and (" within " in line or " over " in line)


def test_cli_startup_stops_when_a_command_exits_with_another_status(tmp_path):
    # A crash must not pass for a fast start: the timer checks each exit status.
    code = f"from bench import cli_startup; cli_startup.timer(('-c', 'raise SystemExit(3)'), 0, {str(tmp_path)!r})()"
    result = subprocess.run([sys.executable, "-c", code], cwd=paths.REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "UnexpectedExit: `python -c raise SystemExit(3)` exited 3, expected 0" in result.stderr


@pytest.mark.slow
def test_seed_scale_runs_at_a_tiny_size_and_judges_both_figures():
    """Two environments, two messages each: the automatic scale's figures, then steady/target and
    measured/predicted, each judged against its target."""
    env = os.environ | {"BENCH_SEED_CONCURRENCY": "2", "BENCH_SEED_MULTIPLIER": "2"}
    result = subprocess.run([sys.executable, "-m", "bench.seed_scale"], cwd=paths.REPO, env=env,
                            capture_output=True, text=True, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith("seed scale: network lambda-2024: scale ") and "requests/s to 16 clients" in lines[0]
    assert lines[1].startswith("seed scale: steady/target ") and "4 downloads" in lines[1]
    assert lines[2].startswith("seed scale: measured/predicted median seconds ")
    assert all(("met:" in line) for line in lines[1:3])
