"""The function's own modules (functions/runner/ and its workload folders), imported by the drivers
from their files.

The function's folder is not a package (its zip is flat), so the drivers import its modules by
path rather than keep copies: the strategies, the timeline and each workload's parameters then
have one definition, the one that runs on Lambda. How plain-name sibling imports are resolved:
docs/architecture.md, *The function's modules in the drivers*.
"""

import ast
import functools
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from fanout.common import paths

NAME = "runner"  # the one function: it runs every workload
FOLDER = paths.FUNCTIONS / NAME


def folders(root: Path = FOLDER) -> list[Path]:
    """The function's folder and its workload folders (one per workload, its modules inside)."""
    return [root, *sorted(path for path in root.iterdir() if path.is_dir() and path.name != "__pycache__")]


def source(name: str) -> Path:
    """The file of the function's module `name`, in whichever of its folders it is."""
    found = _modules().get(name)
    if found is None:
        raise KeyError(f"the function has no module {name!r}")
    return found


@functools.cache
def _modules() -> dict[str, Path]:
    """The function's modules by plain name (the zip is flat: one name, one file), listed once."""
    return {path.stem: path for folder in reversed(folders()) for path in folder.glob("*.py")}


def load(name: str) -> ModuleType:
    """The function's module `name` as the module fanout.function_<name>, imported once."""
    qualified = f"fanout.function_{name}"
    if qualified not in sys.modules:
        path = source(name)
        siblings = {sibling: load(sibling) for sibling in _sibling_imports(path)}
        spec = importlib.util.spec_from_file_location(qualified, path)
        assert spec and spec.loader, f"{path} is a .py file"
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module  # before running it: dataclasses look their module up
        with _visible(siblings):
            spec.loader.exec_module(module)
    return sys.modules[qualified]


def _sibling_imports(path: Path) -> list[str]:
    """The function's modules that `path` imports by plain name (`import envelope`)."""
    names = []
    for node in ast.parse(path.read_text()).body:
        imported = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        imported += [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        names += [name for name in imported if name in _modules()]
    return names


@contextmanager
def _visible(modules: dict[str, ModuleType]) -> Iterator[None]:
    """`modules` importable under their plain names for the duration of the block."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, previous in saved.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
