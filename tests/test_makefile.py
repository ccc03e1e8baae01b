"""Make variables reach the CLI as one argument each, whatever they hold, and are validated
there: no value is ever run by the shell."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fanout.common import paths
from fanout.workloads import registry as workloads

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make(*args: str, home) -> subprocess.CompletedProcess:
    """`make ARGS` with the CLI run by this interpreter (`-o venv`: no virtualenv is built), from
    the drivers these tests import (not whichever copy the virtualenv has installed)."""
    env = {"PATH": "/usr/bin:/bin", "FANOUT_HOME": str(home), "PYTHONPATH": str(paths.REPO / "drivers")}
    return subprocess.run(
        ["make", "--no-print-directory", "-o", "venv", f"FANOUT={sys.executable} -m fanout.cli", *args],
        cwd=paths.REPO, capture_output=True, text=True, env=env, timeout=120,
    )


@pytest.mark.parametrize(
    "target, variable",
    [("deploy", "STACK"), ("fire", "TAG"), ("wait", "RUN"), ("report", "RUN"), ("deploy", "FUNCTION_TIMEOUT"),
     ("deploy", "MEMORY"), ("fire", "MESSAGES"), ("wait", "TIMEOUT"), ("query", "QUERY"), ("help", "STACK"),
     ("deploy", "STORAGE"), ("plan", "EXPRESS_AZ")],
)
def test_shell_characters_in_a_variable_are_not_run(tmp_path, target, variable):
    pwned = tmp_path / "pwned"
    for value in (f"x;touch {pwned}", f"$(touch {pwned})", f"`touch {pwned}`", f"a' b;touch {pwned};'"):
        result = make(target, f"{variable}={value}", home=tmp_path / "home")
        assert not pwned.exists(), (value, result.stdout, result.stderr)
        if target != "help":
            assert result.returncode != 0
            assert value in result.stderr or repr(value) in result.stderr, result.stderr


def test_a_value_with_spaces_arrives_as_one_argument(tmp_path):
    result = make("deploy", "STACK=a b", home=tmp_path / "home")
    assert "invalid stack name 'a b'" in result.stderr
    result = make("fire", "TAG=it's a b", home=tmp_path / "home")  # validated before the stack is looked up
    assert 'invalid tag "it\'s a b"' in result.stderr
    result = make("fire", "TAG=experiment 01", home=tmp_path / "home")  # a valid tag: on to the stack
    assert "no stack 's3fanout' is deployed" in result.stderr and "01" not in result.stderr


@pytest.mark.parametrize("target", ["fire", "help"])
def test_a_value_with_a_line_break_is_refused_naming_it(tmp_path, target):
    """TAG="a<newline>b" ended the shell line inside its quotes: the shell's syntax error, or a
    command run from the second line. Refused by make, naming the variable, nothing run."""
    pwned = tmp_path / "pwned"
    result = make(target, f"TAG=a\ntouch {pwned}", home=tmp_path / "home")
    assert result.returncode == 2 and not pwned.exists()
    assert "TAG holds a line break: each value reaches the command as one line" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "home").exists()


@pytest.mark.parametrize(("given", "said"), [
    (["WORKLOAD=transfer", "SIZE=-5MiB"], "invalid SIZE '-5MiB': expected 1 byte to 5GiB"),
    (["MULTIPLIER=-3"], "invalid --multiplier (MULTIPLIER) '-3': expected a positive whole number"),
])  # fmt: skip
def test_a_value_that_looks_like_a_flag_reaches_the_cli_as_the_value(tmp_path, given, said):
    """`--size -5MiB` made argparse read -5MiB as a flag ("expected one argument"): the Makefile
    passes `--size=-5MiB`, and the CLI names the bad value."""
    result = make("fire", *given, home=tmp_path / "home")
    assert result.returncode == 2 and f"fanout: error: {said}" in result.stderr, result.stderr
    assert "expected one argument" not in result.stderr


def test_function_timeout_is_validated(tmp_path):
    result = make("deploy", "FUNCTION_TIMEOUT=901", home=tmp_path / "home")
    assert "invalid function timeout (s) '901': expected a whole number from 1 to 900" in result.stderr
    assert not (tmp_path / "home").exists()


def test_storage_reaches_deploy_and_express_is_refused_locally(tmp_path):
    result = make("deploy", "STORAGE=standard express", "EXPRESS_AZ=use1-az4", home=tmp_path / "home")
    assert result.returncode == 2
    assert "invalid storage class 'express' with --backend local" in result.stderr
    assert not (tmp_path / "home").exists()


def test_deploys_strategy_and_storage_do_not_stop_a_fire_of_a_workload_without_them(tmp_path):
    """STRATEGY and STORAGE may still be set for deploy: a download run ignores STORAGE (and
    reaches the stack lookup), a latency run ignores STRATEGY and takes STORAGE (so checks it);
    an option only another workload has is still refused."""
    download = make("fire", "STORAGE=standard express", "STRATEGY=stream", home=tmp_path / "home")
    assert "no stack 's3fanout' is deployed" in download.stderr and "is an option of" not in download.stderr
    latency = make("fire", "WORKLOAD=latency", "STRATEGY=stream", "STORAGE=bogus", home=tmp_path / "home")
    assert "fanout: error: invalid storage class 'bogus'" in latency.stderr
    refused = make("fire", "SIZES=1", home=tmp_path / "home")
    assert "fanout: error: --sizes is an option of the latency workload, not of download" in refused.stderr
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(("given", "missing"), [("A=latest", "B"), ("B=latest", "A")])
def test_compare_names_the_side_left_unset(tmp_path, given, missing):
    result = make("compare", given, home=tmp_path / "home")
    assert result.returncode == 2
    assert [line for line in result.stderr.splitlines() if not line.startswith("make: ***")] == [
        f"fanout: error: compare needs {missing}: `make compare A=<runs> B=<runs>`, each side a run id, 'latest' or "
        "sweep:<id|latest>, several comma-separated"]  # fmt: skip


def test_the_makefile_names_no_workload_but_in_its_help():
    """Which Make variables reach which workload is fire's business (--deploy-level): no rule or
    variable of the Makefile names a workload. Left out: the help (text, targets' `##` lines
    included) and QUERY's default, the file name of the saved query `make query` runs, which
    adding a workload does not touch."""
    text = (paths.REPO / "Makefile").read_text()
    help_recipe = re.search(r"^help:.*?\n\n", text, re.S | re.M).group(0)
    lines = [line.split("#")[0] for line in text.replace(help_recipe, "").splitlines()]
    lines = [line for line in lines if not line.startswith("QUERY ")]
    names = set(workloads.DRIVERS)
    assert [line for line in lines if names & set(re.findall(r"[a-z]+", line))] == []


def test_emulator_status_of_a_stopped_emulator_is_one_line_and_success(tmp_path):
    result = make("emulator-status", home=tmp_path / "home")
    assert (result.returncode, result.stdout, result.stderr) == (0, "emulator: not running\n", "")


def test_emulator_status_still_fails_when_the_cli_does(tmp_path):
    """Only `not running` (exit 3) is an answer: a CLI that cannot run fails the target."""
    result = subprocess.run(["make", "--no-print-directory", "-o", "venv", "FANOUT=false", "emulator-status"],
                            cwd=paths.REPO, capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode != 0 and "emulator-status" in result.stderr


def test_an_unquoted_strategy_option_is_refused_naming_it(tmp_path):
    """`STRATEGY=ranged connections=0` unquoted made connections=0 a make variable and deployed
    ranged's defaults: refused before anything runs, with the quoted form to use."""
    result = make("deploy", "STRATEGY=ranged", "connections=0", home=tmp_path / "home")
    assert result.returncode == 2
    assert 'unknown variable connections=0: did you mean STRATEGY="ranged connections=0"?' in result.stderr
    assert "MEMORY" not in result.stderr  # not every known name: `make help` lists them
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(("strategy", "said"), [
    ("repeated requests=0", "requests='0' is out of range: expected a whole number from 1 to 100000"),
    ("repeated requests=10000 in_flight=100", "in_flight='100' is out of range: expected a whole number from 1 to 64"),
])  # fmt: skip
def test_a_bad_repeated_download_is_refused_by_fire_naming_the_value(tmp_path, strategy, said):
    result = make("fire", f"STRATEGY={strategy}", home=tmp_path / "home")
    assert result.returncode == 2 and said in result.stderr, result.stderr
    assert [line for line in result.stderr.splitlines() if not line.startswith("make:")] == [
        f"fanout: error: invalid strategy {strategy!r}: {said}"]
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize(("given", "said"), [
    (["CONCURENCY=4"], "unknown variable CONCURENCY=4: did you mean CONCURRENCY?; `make help` lists the variables"),
    (["MEMROY=512", "TAGG=x"], "MEMROY: did you mean MEMORY?"),
    (["MEMROY=512", "TAGG=x"], "TAGG: did you mean TAG?"),
    (["ZZZ=1"], "unknown variable ZZZ=1: `make help` lists the variables"),
    (["a';>pwned;'=1"], "unknown variable a';>pwned;'=1: `make help`"),  # a name the shell must not run
])  # fmt: skip
def test_a_mistyped_variable_gets_the_nearest_known_name(tmp_path, given, said):
    result = make("help", *given, home=tmp_path / "home")
    assert result.returncode == 2 and said in result.stderr, result.stderr
    assert "CONCURRENCY MEMORY" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "home").exists() and not (paths.REPO / "pwned").exists()


def test_make_and_the_tests_own_variables_are_accepted(tmp_path):
    result = make("help", "PYTHON=python3", "SHELL=/bin/sh", "VERBOSE=1", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr


def dry_run(*args: str) -> str:
    """The commands `make -n ARGS` would run."""
    return subprocess.run(["make", "--no-print-directory", "-n", "-o", "venv", *args], cwd=paths.REPO,
                          capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"}).stdout  # fmt: skip


def test_deploy_passes_only_the_inputs_set_so_the_others_keep_the_stacks():
    command = dry_run("deploy", "STRATEGY=ranged")
    assert "--strategy='ranged'" in command
    for flag in ("--concurrency", "--memory", "--object-size", "--region", "--architecture", "--function-timeout"):
        assert flag not in command
    assert "--memory='2048'" in dry_run("deploy", "MEMORY=2048")
    assert "--verbose" in dry_run("deploy", "VERBOSE=1") and "--verbose" not in command


def test_fire_gets_the_deploy_inputs_set_to_check_them():
    assert "--memory='2048'" in dry_run("fire", "MEMORY=2048")
    assert "--express-az='use1-az4'" in dry_run("fire", "EXPRESS_AZ=use1-az4")
    assert "--memory" not in dry_run("fire") and "--express-az" not in dry_run("fire")


@pytest.mark.parametrize("target", ["deploy", "fire", "wait", "report", "sweep", "study", "compare", "demo"])
def test_a_command_is_echoed_as_one_line(target):
    """What make echoes before running a command is the command: one line, no dangling `\\`
    and no line of blanks where an unset option was."""
    lines = dry_run(target, "A=latest", "B=latest").splitlines()
    fanout_lines = [line for line in lines if "fanout " in line]
    assert len(fanout_lines) == 1 and not fanout_lines[0].rstrip().endswith("\\"), lines
    assert all(line.strip() for line in lines), lines


@pytest.mark.skipif(Path(sys.prefix) != paths.REPO / ".venv", reason="runs in the virtualenv make builds")
def test_the_virtualenvs_packages_are_installed_compiled():
    """Where PYTHONDONTWRITEBYTECODE is set, as in many CI images, nothing compiles them later:
    every process would compile what it imports from source at each start."""
    import botocore.client
    import matplotlib.pyplot
    import moto.server

    for module in (botocore.client, matplotlib.pyplot, moto.server):
        assert Path(importlib.util.cache_from_source(module.__file__)).exists(), module.__name__
