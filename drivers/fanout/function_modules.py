"""The function's own modules (functions/downloader/*.py), imported by the drivers from their files.

The function's folder is not a package (its zip's root is the handler's import path), so the
drivers import its modules by path rather than keep copies: the strategies a message may name,
the timeline a record carries and a workload's parameters then have one definition, the one that
runs on Lambda. A module that imports a sibling by its plain name (`import strategies`, as the
zip's layout requires) gets the sibling loaded here, visible under that name only while the
module runs its top level: the drivers' own namespace keeps no plain `strategies`.
"""

import ast
import importlib.util
import sys
from contextlib import contextmanager

from fanout import paths

FOLDER = paths.FUNCTIONS / "downloader"


def load(name: str):
    """functions/downloader/<name>.py as the module fanout.function_<name>, imported once."""
    qualified = f"fanout.function_{name}"
    if qualified not in sys.modules:
        path = FOLDER / f"{name}.py"
        siblings = {sibling: load(sibling) for sibling in _sibling_imports(path)}
        spec = importlib.util.spec_from_file_location(qualified, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module  # before running it: dataclasses look their module up
        with _visible(siblings):
            spec.loader.exec_module(module)
    return sys.modules[qualified]


def _sibling_imports(path) -> list[str]:
    """The function's modules that `path` imports by plain name (`import envelope`)."""
    names = []
    for node in ast.parse(path.read_text()).body:
        imported = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        imported += [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        names += [name for name in imported if (FOLDER / f"{name}.py").is_file()]
    return names


@contextmanager
def _visible(modules: dict):
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
