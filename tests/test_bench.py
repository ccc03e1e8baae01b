"""`python -m bench NAME...` runs only the named benchmarks and refuses a name it does not know."""

import subprocess
import sys

from fanout import paths


def test_an_unknown_benchmark_name_is_refused_with_the_choices():
    result = subprocess.run([sys.executable, "-m", "bench", "strategy_speed nosuch"], cwd=paths.REPO,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.startswith("unknown benchmark 'nosuch': choose from ")
    assert "strategy_speed" in result.stderr
    assert result.stdout == ""  # nothing ran: the known name before it did not start
