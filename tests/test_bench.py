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
