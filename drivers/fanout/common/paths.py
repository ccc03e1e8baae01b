"""Where the project keeps its files: one place, so nothing re-derives a path.

Everything a run leaves on disk lives under the repository: `.fanout/` for state (emulator pid
and logs, Terraform state per backend and stack, build outputs) and `results/` for experiment
output. `FANOUT_HOME` and `FANOUT_RESULTS` move them (tests use this to stay isolated);
`FANOUT_BUILD` moves the build outputs on their own (a cache keyed by its inputs, which the
tests' throwaway homes share: fanout.local.emulator.control.private).
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
INFRA = REPO / "infra"
FUNCTIONS = REPO / "functions"
# The saved Logs Insights queries, relative to REPO: the generic ones (every workload's records)
# in queries/, each workload's own in its folder. infra/queries.tf collects the same globs.
QUERY_GLOBS = ("queries/*.logsinsights", "drivers/fanout/workloads/*/queries/*.logsinsights")


def home() -> Path:
    """Root of the project's state directory."""
    return Path(os.environ.get("FANOUT_HOME", REPO / ".fanout"))


def emulator_dir() -> Path:
    """pid file, port file and log of the embedded emulator."""
    return home() / "emulator"


def stack_dir(backend: str, stack: str) -> Path:
    """Terraform state and working data of one stack on one backend; never shared."""
    return home() / "stacks" / backend / stack


def build_dir() -> Path:
    """Build outputs such as function zips."""
    return Path(os.environ.get("FANOUT_BUILD", home() / "build"))


def results_dir() -> Path:
    """Experiment results: one folder per run plus a `latest` link."""
    return Path(os.environ.get("FANOUT_RESULTS", REPO / "results"))
