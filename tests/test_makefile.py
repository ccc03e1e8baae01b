"""Make variables reach the CLI as one argument each, whatever they hold, and are validated
there: no value is ever run by the shell."""

import re
import shutil
import subprocess
import sys

import pytest

from fanout import paths, workloads

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make(*args: str, home) -> subprocess.CompletedProcess:
    """`make ARGS` with the CLI run by this interpreter (`-o venv`: no virtualenv is built), from
    this checkout's drivers/ (not whichever one the virtualenv's editable install points at)."""
    return subprocess.run(
        ["make", "--no-print-directory", "-o", "venv", f"FANOUT={sys.executable} -m fanout.cli", *args],
        cwd=paths.REPO, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "FANOUT_HOME": str(home),
                                                     "PYTHONPATH": str(paths.REPO / "drivers")},
        timeout=120,
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
    result = make("fire", "TAG=a b", home=tmp_path / "home")  # validated before the stack is looked up
    assert "invalid tag 'a b'" in result.stderr


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


def test_the_makefile_names_no_workload_but_in_its_help():
    """Which Make variables reach which workload is fire's business (--deploy-level): no rule or
    variable of the Makefile names a workload. Left out: the help (text, targets' `##` lines
    included) and QUERY's default, the file name of the saved query `make query` runs, which
    adding a workload does not touch."""
    text = (paths.REPO / "Makefile").read_text()
    help_recipe = re.search(r"^help:.*?\n\n", text, re.S | re.M).group(0)
    lines = [line.split("#")[0] for line in text.replace(help_recipe, "").splitlines()]
    lines = [line for line in lines if not line.startswith("QUERY ")]
    names = set(workloads.WORKLOADS)
    assert [line for line in lines if names & set(re.findall(r"[a-z]+", line))] == []
