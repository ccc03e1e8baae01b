""".ci/run: what the project cannot install itself is checked first, each missing piece refused
in one actionable line; then the README's test command runs.

Stand-ins on PATH play the machine's tools (an old Terraform, an old Python, `make` that only
records how it was called); the script under test is the real one.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fanout.common import paths

CI_RUN = paths.REPO / ".ci" / "run"


def tool(bin_dir: Path, name: str, script: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)


SHELL_TOOLS = ("env", "bash", "sh", "sed", "sort", "head", "dirname", "id")  # what the script itself uses


@pytest.fixture
def machine(tmp_path):
    """The PATH directory of a machine with the shell tools, a good Terraform and Python, and a
    `make` that records its arguments; tests spoil one of them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in SHELL_TOOLS:
        (bin_dir / name).symlink_to(shutil.which(name))
    tool(bin_dir, "terraform", 'echo "Terraform v1.11.4"; echo "on linux_amd64"')
    (bin_dir / "python3").symlink_to(sys.executable)
    tool(bin_dir, "make", f'echo "$@" >> {tmp_path / "make.args"}')
    for browser in ("chromium", "chromedriver"):  # the report pages' browser tests need them
        tool(bin_dir, browser, "true")
    return bin_dir


def ci_run(bin_dir: Path) -> subprocess.CompletedProcess:
    env = {"PATH": str(bin_dir), "HOME": os.environ.get("HOME", "/")}
    return subprocess.run([str(CI_RUN)], env=env, capture_output=True, text=True)


def refused(result: subprocess.CompletedProcess, bin_dir: Path) -> str:
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert not (bin_dir.parent / "make.args").exists()  # the tests never started
    return lines[0]


def test_runs_the_readme_test_command(machine):
    """`make test` last, after the test tools' virtualenvs were built side by side."""
    result = ci_run(machine)
    assert result.returncode == 0, result.stderr
    assert (machine.parent / "make.args").read_text().splitlines() == ["-j2 test-tools", "test"]


def test_chromium_missing_where_it_cannot_be_installed(machine):
    (machine / "chromium").unlink()
    (machine / "id").unlink()
    tool(machine, "id", "echo 1000")  # not root: no apt-get install
    assert "chromium and chromedriver are missing" in refused(ci_run(machine), machine)


def test_terraform_missing(machine):
    (machine / "terraform").unlink()
    assert "terraform >= 1.5 must be on PATH" in refused(ci_run(machine), machine)


def test_terraform_too_old(machine):
    tool(machine, "terraform", 'echo "Terraform v1.4.7"')
    line = refused(ci_run(machine), machine)
    assert "1.4.7" in line and ">= 1.5" in line


def test_python_too_old(machine):
    (machine / "python3").unlink()
    tool(machine, "python3", "echo 3.10")
    line = refused(ci_run(machine), machine)
    assert "3.10" in line and ">= 3.11" in line


def test_python_without_venv_support(machine):
    (machine / "python3").unlink()
    tool(machine, "python3", f'case "$*" in *ensurepip*) exit 1;; esac; exec {sys.executable} "$@"')
    assert "cannot create virtual environments" in refused(ci_run(machine), machine)
