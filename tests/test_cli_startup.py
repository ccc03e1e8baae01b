"""The CLI answers at once: building the parser, `--help` and a refused value load no report
library (numpy, scipy, matplotlib take about a second to import; only a report or a comparison
needs them). Checked in a fresh interpreter, whose sys.modules nothing else has filled;
bench/cli_startup.py times it."""

import json
import subprocess
import sys

import pytest

REPORT_LIBRARIES = ("matplotlib", "scipy", "numpy")
# Runs the CLI in-process as the console script does, then prints its exit status and which
# report libraries it imported.
PROBE = """
import json, sys
from fanout import cli
try:
    status = cli.main(sys.argv[1:])
except SystemExit as exc:  # argparse's --help
    status = exc.code
print(json.dumps({"status": status, "loaded": [name for name in %r if name in sys.modules]}))
""" % (REPORT_LIBRARIES,)


CASES = [  # a command line, its exit status
    (["--help"], 0),
    (["sweep", "--help"], 0),
    (["deploy", "--memory", "5"], 2),
    (["report", "--run", "no-such-run"], 2),
]


def probe(argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=60)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv, status", CASES, ids=[" ".join(argv) for argv, _ in CASES])
def test_help_and_a_refused_value_import_no_report_library(argv, status, tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FANOUT_RESULTS", str(tmp_path / "results"))
    assert probe(argv) == {"status": status, "loaded": []}
