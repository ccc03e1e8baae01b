"""mypy finds no type error in the drivers or in the function ([tool.mypy] in pyproject.toml).

Two runs, because the function is not a package: its modules import each other by plain name
from the folders the flat zip merges, so each folder is on mypy's path (the drivers' run needs
them too: the drivers read the function's Choice and Params types from there).

Both runs hold every function of the stages, the results, the common wing, workloads/base.py and
the function's envelope to an annotation (disallow_untyped_defs): one that loses its types fails
here.
"""

import os
import re
import subprocess
import sys
import tomllib

from fanout.common import function_modules, paths

FOLDERS = function_modules.folders()
MYPY = tomllib.loads((paths.REPO / "pyproject.toml").read_text())["tool"]["mypy"]


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


def test_every_module_of_the_functions_envelope_must_be_annotated():
    """The override names the function's top-level modules by their plain names (the zip is flat,
    so no `runner.*` pattern can): a module added there is held to annotations too, or this fails."""
    strict = {module for override in MYPY["overrides"] if override.get("disallow_untyped_defs")
              for module in override["module"]}  # fmt: skip
    envelope = {path.stem for path in function_modules.FOLDER.glob("*.py")}
    assert envelope <= strict, sorted(envelope - strict)
    assert {"fanout.common.*", "fanout.results.*", "fanout.stages.*", "fanout.workloads.base"} <= strict
