"""mypy finds no type error in the drivers or in the function ([tool.mypy] in pyproject.toml).

Two runs, because the function is not a package: its modules import each other by plain name
from the folders the flat zip merges, so each folder is on mypy's path (the drivers' run needs
them too: the drivers read the function's Choice and Params types from there).
"""

import os
import re
import subprocess
import sys

from fanout.common import function_modules, paths

FOLDERS = function_modules.folders()


def mypy(*arguments: str, cache: str) -> subprocess.CompletedProcess:
    env = os.environ | {"MYPYPATH": os.pathsep.join(str(folder) for folder in FOLDERS)}
    # A cache per run: the two tests may run at once on different workers.
    command = [sys.executable, "-m", "mypy", "--cache-dir", str(paths.REPO / ".mypy_cache" / cache), *arguments]
    return subprocess.run(command, cwd=paths.REPO, env=env, capture_output=True, text=True, timeout=600)


def checked(result: subprocess.CompletedProcess) -> int:
    """The number of files a clean run checked; fails with mypy's report otherwise."""
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    found = re.search(r"Success: no issues found in (\d+) source files", result.stdout)
    assert found, result.stdout
    return int(found.group(1))


def test_the_drivers_are_type_clean():
    modules = list((paths.REPO / "drivers" / "fanout").rglob("*.py"))
    assert checked(mypy("-p", "fanout", cache="drivers")) >= len(modules)


def test_the_function_is_type_clean():
    files = sorted(str(path) for folder in FOLDERS for path in folder.glob("*.py"))
    assert checked(mypy(*files, cache="function")) == len(files)
