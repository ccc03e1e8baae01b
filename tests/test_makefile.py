"""Make variables reach the CLI as one argument each, whatever they hold, and are validated
there: no value is ever run by the shell."""

import shutil
import subprocess
import sys

import pytest

from fanout import paths

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def make(*args: str, home) -> subprocess.CompletedProcess:
    """`make ARGS` with the CLI run by this interpreter (`-o venv`: no virtualenv is built)."""
    return subprocess.run(
        ["make", "--no-print-directory", "-o", "venv", f"FANOUT={sys.executable} -m fanout.cli", *args],
        cwd=paths.REPO, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "FANOUT_HOME": str(home)},
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
