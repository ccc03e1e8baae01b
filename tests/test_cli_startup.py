"""The CLI answers at once: building the parser, `--help` and a refused value load no report
library (numpy, scipy, matplotlib take about a second to import; only a report or a comparison
needs them), and `fanout --help` neither boto3 (0.2-0.26 s alone) nor any command's module.
Checked in a fresh interpreter, whose sys.modules nothing else has filled; bench/cli_startup.py
times it."""

import json
import subprocess
import sys

import argparse
import importlib

import pytest

from fanout import cli

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
print(json.dumps({"status": status, "loaded": [name for name in %r if name in sys.modules],
                  "modules": sorted(sys.modules)}))
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
    found = probe(argv)
    assert (found["status"], found["loaded"]) == (status, [])


def test_help_imports_neither_boto3_nor_any_commands_module(tmp_path, monkeypatch):
    monkeypatch.setenv("FANOUT_HOME", str(tmp_path / "home"))
    found = probe(["--help"])
    assert found["status"] == 0
    assert not {"boto3", "botocore", "rich", *cli.COMMAND_MODULES} & set(found["modules"])
    # A command imports its own module, not the others'.
    found = probe(["open", "--help"])
    assert "fanout.stages.open_page" in found["modules"] and "fanout.stages.sweep" not in found["modules"]


def test_the_command_list_says_what_each_module_says():
    """`fanout --help` lists each command with the help its module registers it with."""
    registered = {}
    for module in cli.COMMAND_MODULES:
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(subparsers)
        registered |= {action.dest: (module, action.help) for action in subparsers._choices_actions}
    assert registered == cli.COMMANDS
